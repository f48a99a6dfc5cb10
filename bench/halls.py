"""Several halls into one centre: N hall brokers bridged into the centre's, and the centre's lag.

    .venv/bin/python -m bench.halls [--halls 20] [--tables 14] [--seconds 60] [--record-every 2] [--no-records]

What runs, all on this machine (issue 22's bench; docs/scaling.md says what runs where at a club):
- the centre's Mosquitto from the shipped deploy/mosquitto/central.conf and central.acl, its TLS
  listener on (make-certs.sh), a login per hall as `lavos central add-hall` and the operator make them;
- one Mosquitto per hall from the shipped lavos.conf and acl, and each hall's bridge to the centre
  (broker.adapters.centre_bridge, what `lavos central bridge` runs at a hall: TLS with the centre's
  CA, the hall's login there), all of them in one process here, so every message crosses a real
  bridge over TLS and lands under hall/<hall>/ on the centre;
- a publisher process: in every hall, each table publishes one message a second, evenly spread, on
  the bridged topics a hall's nodes and hub publish (node status, light state, the name-free game
  state; retained, QoS 1, as at a hall), through one login per hall with the hub's rights;
- the centre (a process as `lavos central serve` is one): its PostgreSQL store, the live-state
  subscriber (broker.central.live.LiveSubscriber into Floors, the code that runs there) and the
  records API (the real app, on HTTPS);
- the baseline, in the same run on the same broker: a bare paho subscriber process with the same
  subscriptions, which only stamps and counts;
- unless --no-records: every hall's hub (in one process, SQLite each, `lavos server --central`'s
  outbox and sender) takes a payment every --record-every seconds, and its record travels to the
  centre over HTTPS as it would at a club.

Lag = when the consumer has applied the message (Floors.apply returned; the bare one: on_message)
minus when the publisher handed it to paho, on this machine's one clock. A record's lag: when the
centre's transaction that applied it returned, minus the record's time at the hall (stamped in the
hall's transaction, just before its commit). Printed: p50/p95/p99/max of each, the centre's against
the bare subscriber's (the ratio is what the centre's own code costs), the target (p99 < 2 s), how
late the publisher was against its schedule (so the offered load was really offered), and the CPU
each part used over the window (the machine has 2 cores and is shared).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import logging
import multiprocessing
import os
import statistics
import subprocess
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from subprocess import Popen
from typing import Any, cast

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import func, select

from bench.hub_ingest import process_cpu
from broker.adapters.centre_bridge import BRIDGE_LOGIN, CentreBridge
from broker.adapters.hub_link import MqttUrl
from broker.central.accounts import add_hall
from broker.central.live import SUBSCRIPTIONS, Floors, LiveSubscriber
from broker.central.service import Central
from broker.compose import CentralSettings, running_hub
from broker.hall.facade import HubFacade
from broker.storage.engine import open_store
from broker.storage.models import CentralHall, OutboxRecord
from broker.till.payments import PayTab
from broker.till.tabs import AddProduct, AddTabItem, OpenWalkInTab
from sim.mosquitto import HUB_PASSWORD, HUB_USER, Mosquitto, TlsFiles, free_port
from tests.support.centre import CentreServer, hall_venue
from tests.support.sqlite_template import CHEAP, migrated_sqlite

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "deploy" / "mosquitto"
CENTRAL_LOGIN = ("lavos-central", "central-secret")
BARE_LOGIN = ("lavos-central-bare", "bare-secret")  # the baseline: lavos-central's rights, its own client id
HALL_BRIDGE_PASSWORD = "bridge-reads-the-hall"  # lavos-bridge's on each hall's broker
TARGET_P99_S = 2.0
# The baseline first: the same messages published straight to the centre's broker (its TLS
# listener, one login per hall with a bridge's rights), then through the halls' brokers and bridges.
DIRECT, BRIDGED = PHASES = ("direct", "bridged")
DRAIN_S = 10.0  # after the last publish: how long the consumers may take to receive the rest
# How long the senders may take to empty their outboxes once told to stop: awaited, so it costs
# only what delivery takes; a loaded machine (load 10 on 2 cores) once left one record after 10 s.
RECORDS_DRAIN_S = 30.0
# Forked, not spawned: a child then starts in milliseconds instead of importing the hub's and the
# web app's modules again (seconds each on a loaded 2-core machine, which delayed the test by half a
# minute). The parent imports them first and holds no connection or thread of its own when it forks.
FORK = multiprocessing.get_context("fork")


def hall_ids(n: int) -> list[str]:
    return [f"hall-{i:02d}" for i in range(1, n + 1)]


def table_ids(n: int) -> list[str]:
    return [f"pool-{i:02d}" for i in range(1, n + 1)]


# -- what is measured -----------------------------------------------------------------


class Stamps:
    """Lags of the bench's messages as one consumer sees them, per phase (direct, bridged)."""

    def __init__(self) -> None:
        self.lags: dict[str, list[float]] = {phase: [] for phase in PHASES}
        self.keys: set[str] = set()
        self.duplicates = 0
        self._lock = threading.Lock()

    def seen(self, payload: bytes) -> None:
        now = time.time()
        try:
            stamp = json.loads(payload).get("bench")
        except (ValueError, AttributeError):
            return
        if not isinstance(stamp, dict):
            return  # not the publisher's (a bridge's state, a hub's birth)
        with self._lock:
            if stamp["k"] in self.keys:
                self.duplicates += 1
                return
            self.keys.add(stamp["k"])
            self.lags[stamp["p"]].append(now - stamp["t"])

    def result(self) -> dict[str, Any]:
        received = {phase: len(lags) for phase, lags in self.lags.items()}
        return {"received": received, "duplicates": self.duplicates, "lags": self.lags}


class TimedFloors(Floors):
    """The centre's Floors, timed when each message has been applied."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stamps = Stamps()

    def apply(self, topic: str, payload: bytes) -> None:
        super().apply(topic, payload)
        self.stamps.seen(payload)


# -- the processes --------------------------------------------------------------------


def _quiet() -> None:
    logging.basicConfig(level=logging.WARNING)


def _child(name: str, out: Any, target: Callable[..., None], *args: Any) -> None:
    """Run one of the processes below; if it fails, its traceback reaches the parent under its name
    (a child that died silently left the parent waiting on `out` and reporting only `Empty`)."""
    try:
        target(*args)
    except BaseException:
        out.put((name, {"error": traceback.format_exc()}))
        raise


def _result(out: Any) -> tuple[str, dict[str, Any]]:
    """The next process's result; a child's failure raised here with its own traceback."""
    name, got = out.get(timeout=60)
    if "error" in got:
        raise RuntimeError(f"bench process {name!r} failed:\n{got['error']}")
    return name, got


def centre_process(pg_url: str, broker_port: int, tls: tuple[str, str], http_port: int, ready: Any, stop: Any, out: Any) -> None:
    """The centre: its store, the live subscriber into timed Floors, the records API over HTTPS."""
    _quiet()

    class TimedCentral(Central):
        """The centre's records API, timed when each new record's transaction has returned."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.record_lags: list[float] = []
            self._timed: dict[str, int] = {}  # the highest seq timed, per hall

        def receive(self, token: str, body: Any) -> Any:
            applied = super().receive(token, body)
            now = time.time()
            hall = body["hall"]
            for r in body["records"]:
                if r["seq"] > self._timed.get(hall, 0):
                    self.record_lags.append(now - datetime.fromisoformat(r["at"]).timestamp())
            self._timed[hall] = max(self._timed.get(hall, 0), applied.acked)
            return applied

    store = open_store(pg_url)
    floors = TimedFloors(store)
    live = LiveSubscriber("127.0.0.1", broker_port, *CENTRAL_LOGIN, floors)
    live.start()
    central = TimedCentral(store, floors)
    server = CentreServer(central, http_port, tls=(Path(tls[0]), Path(tls[1]))).start()
    live.connected.wait(30)
    ready.set()
    stop.wait()
    live.close()
    server.stop()
    store.close()
    out.put(("centre", floors.stamps.result() | {"record_lags": central.record_lags}))


def bare_process(broker_port: int, ready: Any, stop: Any, out: Any) -> None:
    """The baseline: a bare paho subscriber on the centre's broker, the centre's subscriptions, nothing else."""
    stamps = Stamps()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=BARE_LOGIN[0], clean_session=True)
    client.username_pw_set(*BARE_LOGIN)
    client.on_connect = lambda c, u, f, rc, p=None: c.subscribe([(t, 1) for t in SUBSCRIPTIONS])
    client.on_subscribe = lambda *a: ready.set()
    client.on_message = lambda c, u, m: stamps.seen(bytes(m.payload))
    client.connect("127.0.0.1", broker_port, keepalive=20)
    client.loop_start()
    stop.wait()
    client.disconnect()
    client.loop_stop()
    out.put(("bare", stamps.result()))


def _payloads(phase: str, hall: str, table: str, second: int, sent: float) -> tuple[str, dict[str, Any]]:
    """What a table's node or the hall's hub publishes in this second, stamped."""
    stamp = {"t": sent, "k": f"{phase}/{hall}/{table}/{second}", "p": phase}
    doc: dict[str, Any]
    match second % 3:
        case 0:
            doc = {"state": "online", "boot": "bench", "version": "bench", "ts": datetime.fromtimestamp(sent).astimezone().isoformat()}
            return f"lavos/v1/table/{table}/status", doc | {"bench": stamp}
        case 1:
            doc = {"on": second % 2 == 1, "blink": False, "cause": "command", "cmd_id": f"{table}-{second}"}
            return f"lavos/v1/table/{table}/light/state", doc | {"bench": stamp}
        case _:
            doc = {"amount": f"{second // 100}.{second % 100:02d}", "amount_cents": second, "state": "running"}
            return f"lavos/v1/ha/{table}/state", doc | {"bench": stamp}


@dataclass(frozen=True)
class Target:
    """Where one hall's messages are published: a broker's port, a login, a topic prefix."""

    port: int
    user: str
    password: str
    prefix: str = ""  # "hall/<hall>/" when publishing straight to the centre, as the bridge would
    ca_file: str | None = None  # TLS, checked against this CA


def publisher_process(phase: str, targets: dict[str, Target], tables: list[str], seconds: int, ready: Any, go: Any, out: Any) -> None:
    """Every table of every hall: one message a second, evenly spread, from `go`'s time (a wall clock time)."""
    clients = {}
    connected: list[threading.Event] = []
    for hall, t in targets.items():
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=t.user)
        c.username_pw_set(t.user, t.password)
        if t.ca_file:
            c.tls_set(ca_certs=t.ca_file)
        c.max_queued_messages_set(0)
        up = threading.Event()
        connected.append(up)
        c.on_connect = lambda c, u, f, rc, p=None, up=up: up.set() if not rc.is_failure else None
        c.connect("127.0.0.1", t.port)
        c.loop_start()
        clients[hall] = c
    # Ready only once every broker has answered CONNACK: a publish before it is refused at once
    # (no queue, max_queued_messages 0), which on a busy machine killed this process.
    for up in connected:
        if not up.wait(30):
            raise TimeoutError("a publisher's client got no CONNACK in 30 s")
    ready.set()
    while not go.value:
        time.sleep(0.01)
    start_at = go.value
    slots = [(hall, table) for table in tables for hall in targets]
    late: list[float] = []
    infos = []
    for second in range(seconds):
        for i, (hall, table) in enumerate(slots):
            due = start_at + second + i / len(slots)
            if (wait := due - time.time()) > 0:
                time.sleep(wait)
            sent = time.time()
            late.append(sent - due)
            topic, doc = _payloads(phase, hall, table, second, sent)
            infos.append(clients[hall].publish(targets[hall].prefix + topic, json.dumps(doc, separators=(",", ":")), qos=1, retain=True))
    for info in infos:
        info.wait_for_publish(30)
    for c in clients.values():
        c.disconnect()
        c.loop_stop()
    out.put((f"publisher:{phase}", {"sent": len(infos), "late": late}))


def bridges_process(halls: dict[str, tuple[int, str]], centre_port: int, ca_file: str, ready: Any, stop: Any) -> None:
    """Every hall's bridge to the centre (`lavos central bridge` at a hall; one process each there,
    all in this one here): halls maps a hall to its broker's port and its password at the centre."""
    _quiet()
    bridges = [
        CentreBridge(
            MqttUrl("127.0.0.1", port, BRIDGE_LOGIN, HALL_BRIDGE_PASSWORD, tls=False),
            MqttUrl("127.0.0.1", centre_port, hall, password, tls=True, ca_file=Path(ca_file)),
        ).start()
        for hall, (port, password) in halls.items()
    ]
    ready.set()
    stop.wait()
    for b in bridges:
        b.close()


def records_process(halls: dict[str, tuple[str, str]], url: str, ca_file: str, every_s: float, ready: Any, stop: Any, out: Any) -> None:
    """Every hall's hub with its outbox and sender (`lavos server --central`), taking a payment every `every_s`."""
    _quiet()

    def pending(hub: Any) -> int:
        with hub.store.reader() as db:
            return int(db.scalar(select(func.count()).select_from(OutboxRecord)) or 0)

    with contextlib.ExitStack() as stack:
        hubs, products = {}, {}
        for hall, (token, db) in halls.items():
            settings = CentralSettings(url=url, token=token, ca_file=Path(ca_file), retry_max_s=1.0)
            hub = stack.enter_context(running_hub(hall_venue(hall), db, password_hasher=CHEAP, central=settings))
            hub.watchdog.stop()
            hubs[hall] = hub
            products[hall] = hub.execute(
                AddProduct(name="Pivo", name_en="Beer", price_cents=215, vat_percent=19, category="drinks", actor="boss")
            )
        ready.set()
        paid = 0
        start = time.monotonic()
        for n in itertools.count():
            for i, (hall, hub) in enumerate(hubs.items()):
                due = start + (n + i / len(hubs)) * every_s
                if stop.wait(max(0.0, due - time.monotonic())):
                    break
                tab = hub.execute(OpenWalkInTab(label=f"Bar {n}", actor="jana"))
                hub.execute(AddTabItem(tab=tab, product=products[hall], quantity=1, actor="jana"))
                view = HubFacade(hub).reads.till.tab_payments(tab)
                assert view is not None
                hub.execute(PayTab(tab=tab, method="card", amount_cents=view.owed_cents, actor="jana"))
                paid += 1
            if stop.is_set():
                break
        # What the senders still had to deliver when told to stop (0: all delivered).
        deadline = time.monotonic() + RECORDS_DRAIN_S
        while time.monotonic() < deadline and any(pending(h) for h in hubs.values()):
            time.sleep(0.05)
        out.put(("records", {"paid": paid, "undelivered": sum(pending(h) for h in hubs.values())}))


# -- the run --------------------------------------------------------------------------


@dataclass
class Run:
    halls: int
    tables: int
    seconds: int
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)  # per phase: CPU seconds over its publishing window
    machine_busy: dict[str, float] = field(default_factory=dict)  # per phase: of all cores, 0..1, over the window
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def expected(self) -> int:
        return self.halls * self.tables * self.seconds


def _make_certs(out: Path) -> Path:
    done = subprocess.run(
        ["bash", str(SHIPPED / "make-certs.sh"), "--out", str(out), "127.0.0.1", "localhost"], capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        raise RuntimeError(f"make-certs.sh failed: {done.stderr}")
    return out


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


class _LinksUp:
    """Whether every hall's bridge is up at the centre (a predicate for _wait); close() when done."""

    def __init__(self, pg_url: str, halls: list[str]) -> None:
        self.store = open_store(pg_url)
        self.halls = halls
        self.close = self.store.close

    def __call__(self) -> bool:
        with self.store.reader() as db:
            return db.scalar(select(func.count()).where(CentralHall.hall.in_(self.halls), CentralHall.link_up.is_(True))) == len(self.halls)


def _wait(what: str, predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not after {timeout:.0f} s")
        time.sleep(0.05)


def _publish(
    result: Run, phase: str, targets: dict[str, Target], procs: list[Any], cpu_pids: dict[str, int], hall_brokers: list[int], out: Any
) -> None:
    """One phase: the publisher process offers the load for `result.seconds`, timed and its CPU counted."""
    ready, go = FORK.Event(), FORK.Value("d", 0.0)
    publisher = FORK.Process(
        target=_child,
        args=(f"publisher:{phase}", out, publisher_process, phase, targets, table_ids(result.tables), result.seconds, ready, go, out),
    )
    publisher.start()
    procs.append(publisher)
    _wait(f"the {phase} publisher connected", ready.is_set, 60)
    pids = cpu_pids | {"publisher": publisher.pid or 0}

    def cpu() -> dict[str, float]:
        return {name: process_cpu(pid) for name, pid in pids.items()} | {"hall brokers": sum(map(process_cpu, hall_brokers))}

    start_at = go.value = time.time() + 0.2
    time.sleep(max(0.0, start_at - time.time()))
    before, (busy0, total0) = cpu(), _machine_ticks()
    time.sleep(max(0.0, start_at + result.seconds - time.time()))
    after, (busy1, total1) = cpu(), _machine_ticks()
    result.cpu[phase] = {f"{result.halls} hall brokers" if k == "hall brokers" else k: after[k] - before[k] for k in before}
    result.machine_busy[phase] = (busy1 - busy0) / max(1, total1 - total0)
    result.load = os.getloadavg()
    name, published = _result(out)
    result.results[name] = published
    publisher.join(10)


def run(halls: int, tables: int, seconds: int, work: Path, pg_url: str, *, record_every_s: float | None = 2.0) -> Run:
    """One run: the brokers and bridges, the centre, the baseline, the halls' records, the publisher."""
    ids = hall_ids(halls)
    certs = _make_certs(work / "certs")
    store = open_store(pg_url)
    with store.session() as db:
        tokens = {h: add_hall(db, h, f"Lavos {h}") for h in ids}
    store.close()
    bridge_passwords = {h: f"bridge-{h}" for h in ids}
    direct_passwords = {f"direct-{h}": f"direct-{h}-secret" for h in ids}  # the baseline's: a bridge's rights under another name
    ca = str(certs / "ca.crt")
    centre_broker = Mosquitto(
        work / "centre-broker",
        users={**bridge_passwords, **direct_passwords, CENTRAL_LOGIN[0]: CENTRAL_LOGIN[1]},
        tls=TlsFiles(certs),
        shipped_conf=SHIPPED / "central.conf",
        shipped_acl=SHIPPED / "central.acl",
    )
    centre_broker.login_like(BARE_LOGIN[0], CENTRAL_LOGIN[0], BARE_LOGIN[1])
    procs: list[Any] = []
    brokers: list[Mosquitto] = [centre_broker]
    stop, stop_records = FORK.Event(), FORK.Event()
    out = FORK.Queue()
    result = Run(halls, tables, seconds)
    try:
        centre_broker.start()
        assert centre_broker.tls is not None
        http_port = free_port()
        ready = {name: FORK.Event() for name in ("centre", "bare", "records")}
        tls = (str(certs / "server.crt"), str(certs / "server.key"))
        centre = FORK.Process(
            target=_child, args=("centre", out, centre_process, pg_url, centre_broker.port, tls, http_port, ready["centre"], stop, out)
        )
        bare = FORK.Process(target=_child, args=("bare", out, bare_process, centre_broker.port, ready["bare"], stop, out))
        pids: dict[str, Any] = {"centre (lavos central: live subscriber, records API)": centre, "bare paho subscriber": bare}
        for p in (centre, bare):
            p.start()
            procs.append(p)
        for h in ids:
            brokers.append(Mosquitto(work / f"broker-{h}", users={BRIDGE_LOGIN: HALL_BRIDGE_PASSWORD}).start())
        ready["bridges"] = FORK.Event()
        halls_links = {h: (b.port, bridge_passwords[h]) for h, b in zip(ids, brokers[1:])}
        bridges = FORK.Process(
            target=_child, args=("bridges", out, bridges_process, halls_links, centre_broker.tls.port, ca, ready["bridges"], stop)
        )
        bridges.start()
        procs.append(bridges)
        pids[f"{halls} halls' bridges (lavos central bridge)"] = bridges
        if record_every_s:
            url = f"https://127.0.0.1:{http_port}"
            halls_dbs = {h: (tokens[h], migrated_sqlite(work / f"hall-{h}.db")) for h in ids}
            rec = FORK.Process(
                target=_child,
                args=(
                    "records",
                    out,
                    records_process,
                    halls_dbs,
                    url,
                    str(certs / "ca.crt"),
                    record_every_s,
                    ready["records"],
                    stop_records,
                    out,
                ),
            )
            rec.start()
            procs.append(rec)
            pids[f"{halls} halls' hubs (outbox and sender)"] = rec
        for name in ("centre", "bare", "bridges", "records") if record_every_s else ("centre", "bare", "bridges"):
            _wait(f"the {name} process ready", ready[name].is_set, 60)
        links_up = _LinksUp(pg_url, ids)
        try:
            _wait(f"{halls} bridges up at the centre", links_up, 60)
        finally:
            links_up.close()

        direct = {h: Target(centre_broker.tls.port, f"direct-{h}", direct_passwords[f"direct-{h}"], f"hall/direct-{h}/", ca) for h in ids}
        bridged = {h: Target(b.port, HUB_USER, HUB_PASSWORD) for h, b in zip(ids, brokers[1:])}
        cpu_pids = {name: p.pid for name, p in pids.items()} | {"centre's Mosquitto": cast(Popen[bytes], centre_broker.proc).pid}  # started
        hall_brokers = [cast(Popen[bytes], b.proc).pid for b in brokers[1:]]
        for phase, targets in ((DIRECT, direct), (BRIDGED, bridged)):
            _publish(result, phase, targets, procs, cpu_pids, hall_brokers, out)
        # The rest in flight: until both consumers have every message, or DRAIN_S.
        time.sleep(min(DRAIN_S, 0.5 + seconds * 0.02))
        left = len(procs) - len(PHASES) - 1  # the bridges' process reports nothing
        # The halls stop paying first and send what their outboxes hold while the centre still
        # serves: stopping both at once left a payment made in the last moment undelivered.
        stop_records.set()
        while record_every_s and "records" not in result.results:
            name, got = _result(out)
            result.results[name] = got
            left -= 1
        stop.set()
        for _ in range(left):
            name, got = _result(out)
            result.results[name] = got
        for p in procs:
            p.join(30)
        return result
    finally:
        stop_records.set()
        stop.set()
        for p in procs:
            if p.is_alive():
                p.kill()
        for b in brokers:
            b.stop()


# -- the report -----------------------------------------------------------------------


def quantiles(values: list[float]) -> dict[str, float]:
    """p50, p95, p99 and max of `values` (seconds)."""
    if not values:
        return {k: float("nan") for k in ("p50", "p95", "p99", "max")}
    q = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else [values[0]] * 99
    return {"p50": q[49], "p95": q[94], "p99": q[98], "max": max(values)}


def _ms(s: float) -> str:
    return f"{s * 1000:8.1f} ms"


def report(r: Run) -> list[str]:
    """The run's figures as lines (printed by main, asserted on by the test)."""
    lines = [
        f"{r.halls} halls × {r.tables} tables × 1 msg/s (QoS 1, retained) for {r.seconds} s, twice: "
        f"straight to the centre's broker (TLS), then through {r.halls} hall brokers and their bridges to the centre (TLS)",
        f"{'publisher → consumer':<50} {'sent':>6} {'received':>9} {'p50':>11} {'p95':>11} {'p99':>11} {'max':>11}",
    ]
    stats = {}
    names = {"bare": "bare paho subscriber", "centre": "lavos central (LiveSubscriber → Floors)"}
    for phase in PHASES:
        sent = r.results[f"publisher:{phase}"]["sent"]
        for key in ("bare", "centre"):
            got = r.results[key]
            q = stats[phase, key] = quantiles(got["lags"][phase])
            label = f"{'direct' if phase == DIRECT else 'bridged'} → {names[key]}"
            lines.append(
                f"{label:<50} {sent:>6} {got['received'][phase]:>9} {_ms(q['p50'])}  {_ms(q['p95'])}  {_ms(q['p99'])}  {_ms(q['max'])}"
            )

    def ratio(a: tuple[str, str], b: tuple[str, str]) -> str:
        return "  ".join(f"{k} {stats[a][k] / stats[b][k]:.2f}" if stats[b][k] else f"{k} –" for k in ("p50", "p99"))

    lines.append(f"what the bridges cost (bridged / direct, bare subscriber): {ratio((BRIDGED, 'bare'), (DIRECT, 'bare'))}")
    lines.append(f"what the centre's code costs (centre / bare, bridged):       {ratio((BRIDGED, 'centre'), (BRIDGED, 'bare'))}")
    p99 = stats[BRIDGED, "centre"]["p99"]
    lines.append(
        f"target: the centre's lag p99 < {TARGET_P99_S:.0f} s through bridges: {'met' if p99 < TARGET_P99_S else 'NOT MET'} ({p99 * 1000:.1f} ms)"
    )
    duplicates = sum(r.results[k]["duplicates"] for k in ("bare", "centre"))
    lines.append(f"duplicates received: {duplicates}")
    for phase in PHASES:
        late = quantiles(r.results[f"publisher:{phase}"]["late"])
        lines.append(
            f"publisher ({phase}) against its schedule: late p50 {late['p50'] * 1000:.1f} ms, p99 {late['p99'] * 1000:.1f} ms, "
            f"max {late['max'] * 1000:.1f} ms; CPU {r.cpu[phase]['publisher'] / r.seconds * 100:.0f} % of one core"
        )
    if "records" in r.results:
        rec = quantiles(r.results["centre"]["record_lags"])
        paid, left = r.results["records"]["paid"], r.results["records"]["undelivered"]
        lines.append(
            f"records (HTTPS): {paid} payments in {r.halls} halls, {len(r.results['centre']['record_lags'])} applied at the centre, "
            f"{left} undelivered; hall commit → applied p50 {rec['p50'] * 1000:.1f} ms, p95 {rec['p95'] * 1000:.1f} ms, "
            f"p99 {rec['p99'] * 1000:.1f} ms, max {rec['max'] * 1000:.1f} ms"
        )
    cores = os.cpu_count() or 1
    for phase in PHASES:
        lines.append(f"CPU over the {phase} window of {r.seconds} s (% of one core):")
        for name, sec in sorted(r.cpu[phase].items(), key=lambda kv: -kv[1]):
            lines.append(f"  {name:<52} {sec:6.1f} s  {sec / r.seconds * 100:5.1f} %")
        lines.append(f"  machine: {r.machine_busy[phase] * 100:.0f} % of {cores} cores busy (everything on it, other work included)")
    lines.append(f"load average at the end: {r.load[0]:.1f}")
    return lines


def lost(r: Run) -> int:
    """Messages a consumer never received, over both phases."""
    return sum(r.expected - r.results[k]["received"][phase] for k in ("bare", "centre") for phase in PHASES)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--halls", type=int, default=20)
    ap.add_argument("--tables", type=int, default=14)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--record-every", type=float, default=2.0, help="each hall takes a payment this often (seconds)")
    ap.add_argument("--no-records", action="store_true", help="the live path only")
    args = ap.parse_args()
    _quiet()
    from tests.support.postgres import PostgresCluster

    work = Path(tempfile.mkdtemp(prefix="lavos-halls-"))
    pg = PostgresCluster().start()
    try:
        url = pg.create_database()
        open_store(url).close()  # migrated before anything starts
        r = run(args.halls, args.tables, args.seconds, work, url, record_every_s=None if args.no_records else args.record_every)
    finally:
        pg.stop()
    print("\n".join(report(r)))
    return 1 if lost(r) or quantiles(r.results["centre"]["lags"][BRIDGED])["p99"] >= TARGET_P99_S else 0


if __name__ == "__main__":
    raise SystemExit(main())
