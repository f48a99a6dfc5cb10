"""How fast the hub drains a backlog, next to a bare paho subscriber on the same broker, in one run.

    .venv/bin/python -m bench.hub_ingest [--events 30000] [--rounds 2] [--db sqlite|postgresql]
                                         [--no-sessions] [--profile DIR]

What it measures. A drain, not a stream: a streamed figure is the publisher's speed (one paho
publisher tops out near what one consumer takes, so both consumers measure it). Here:
1. Each consumer's login gets a persistent session (clean_session=False, subscribed at QoS 1 to
   what the hub subscribes to), then disconnects.
2. N pocket events from 10 tables (valid contract messages, distinct (table, boot, seq), distinct
   node timestamps) are published at QoS 1 and the publisher waits for every PUBACK: Mosquitto
   now holds the whole backlog for every offline session. None of this is timed.
3. One consumer at a time connects; the clock runs from the first message in its hands to its
   last (not from connect: the hub's start also spawns its link process, ~0.7 s of start-up that
   says nothing about draining):
   - bare: a paho subscriber that does what any MQTT consumer must, receive and ack at QoS 1
     (paho's automatic ack, sent as on_message returns) and count;
   - hub: Hub with the real store (a fresh SQLite file, or a PostgreSQL database), built as
     `lavos server` builds it (its MQTT link in a child process; `--mqtt-in-thread`: in a thread),
     metrics on to a real VictoriaMetrics when installed, until `handlers.applied` reaches N:
     every event validated against the contract, deduplicated by (table, boot, seq), stored and
     committed before its ack, a metrics point queued.
   Both run with the collector settings `lavos server` runs with (broker/adapters/heap.py).
   The order alternates per round; each round has its own logins and boot, so no session carries
   leftovers. The ratio hub/bare is the figure: the machine is shared, so absolute rates move.
By default the tables are in play (a session open on each, as when balls really drop); with
`--no-sessions` every drop also touches the "play without a session" alert (one UPDATE each).

It exits non-zero if a consumer gets fewer or more than N messages, the hub stores a different
number of events, counts a duplicate or a rejection, or Mosquitto logged dropping messages. The
shipped Mosquitto config is used as is (broker/mosquitto_conf, rendered by sim/mosquitto.py); the bench checks that the backlog
fits its per-client queue limits (max_queued_messages/max_queued_bytes) and refuses to run
otherwise, rather than raising them.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import func, select

from broker.adapters.heap import settle_heap
from broker.adapters.hub_link import MqttUrl
from broker.compose import build_hub
from broker.domain.venue import load_venue
from broker.hall.games import StartGame
from broker.storage.engine import open_store
from broker.storage.models import Event
from devices import contract
from sim.mosquitto import HUB_PASSWORD, Mosquitto
from tests.support.hub import hub_link, link_pid

REPO = Path(__file__).resolve().parents[1]
VENUE = REPO / "deploy" / "venues" / "lavos.toml"
TABLES = [f"pool-{i:02d}" for i in range(1, 11)]
PUB_USER = "lavos-hub-2"  # a login the shipped ACL names; the consumers get lavos-bench-* logins


@dataclass
class Drain:
    consumer: str
    n: int
    seconds: float
    info: dict

    @property
    def rate(self) -> float:
        return self.n / self.seconds


def payloads(n: int, boot: str) -> list[tuple[str, bytes]]:
    # Distinct node timestamps: a synced stamp is the metrics point's time, and two points of one
    # series at one time are one point in VictoriaMetrics/InfluxDB.
    t0 = datetime.now(UTC) - timedelta(seconds=n / 1000 + 60)
    out = []
    for i in range(n):
        table = TABLES[i % len(TABLES)]
        ev = contract.PocketEvent(
            v=1,
            table=table,
            type="pocket",
            boot=boot,
            seq=i,
            ts=t0 + timedelta(milliseconds=i),
            ts_synced=True,
            data=contract.PocketData(pocket=i % 6, pulse_ms=21.5),
        )
        out.append((contract.event_topic(table, "pocket"), contract.encode(ev)))
    return out


# -- the broker side ------------------------------------------------------------------


def queue_limits(conf: str) -> tuple[int, int]:
    """(max_queued_messages, max_queued_bytes) of a Mosquitto config; 0 is unlimited, as in Mosquitto."""

    def value(key: str, default: int) -> int:
        found = re.findall(rf"^{key}\s+(\d+)\s*$", conf, re.M)
        return int(found[-1]) if found else default

    return value("max_queued_messages", 1000), value("max_queued_bytes", 0)


def check_backlog_fits(broker: Mosquitto, messages: list[tuple[str, bytes]]) -> str:
    """The backlog must fit each offline session's queue, or Mosquitto drops part of it (and the
    publisher still gets its PUBACKs). Counts payload bytes, which is what max_queued_bytes counts."""
    max_msgs, max_bytes = queue_limits((broker.workdir / "mosquitto.conf").read_text())
    size = sum(len(p) for _, p in messages)
    if max_msgs and len(messages) > max_msgs:
        raise SystemExit(
            f"{len(messages)} events exceed the shipped max_queued_messages {max_msgs}: Mosquitto would drop "
            f"the rest of the backlog; use --events {max_msgs} or fewer"
        )
    if max_bytes and size > max_bytes:
        raise SystemExit(
            f"the backlog's {size} payload bytes exceed the shipped max_queued_bytes {max_bytes}: "
            f"Mosquitto would drop part of it; use fewer --events"
        )
    return (
        f"backlog {size / 1e6:.1f} MB per session; shipped queue limits: max_queued_messages "
        f"{max_msgs or 'unlimited'}, max_queued_bytes {max_bytes / 2**20:.0f} MiB: it fits"
    )


def make_session(port: int, login: str) -> None:
    """A persistent session for `login`, subscribed at QoS 1 like the hub, left offline."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=login, clean_session=False)
    c.username_pw_set(login, HUB_PASSWORD)
    subscribed = threading.Event()
    c.on_connect = lambda c, u, f, rc, p=None: c.subscribe([(f, 1) for f in contract.NODE_OUTPUT_FILTERS])
    c.on_subscribe = lambda *a: subscribed.set()
    c.connect("127.0.0.1", port)
    c.loop_start()
    if not subscribed.wait(10):
        raise SystemExit(f"{login} could not subscribe")
    c.disconnect()
    c.loop_stop()


def publish_all(port: int, messages: list[tuple[str, bytes]]) -> float:
    """Publish in a process of its own and wait for every PUBACK; returns the publisher's rate
    (for the record only: the drain starts after it has finished)."""
    proc = multiprocessing.get_context("spawn").Process(target=_publish, args=(port, messages))
    t0 = time.perf_counter()
    proc.start()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"publisher failed with exit code {proc.exitcode}")
    return len(messages) / (time.perf_counter() - t0)


def _publish(port: int, messages: list[tuple[str, bytes]]) -> None:
    pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=PUB_USER)
    pub.username_pw_set(PUB_USER, HUB_PASSWORD)
    pub.max_inflight_messages_set(1000)
    pub.max_queued_messages_set(0)
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    infos = [pub.publish(t, p, qos=1) for t, p in messages]
    for info in infos:
        info.wait_for_publish(120)
        if not info.is_published():
            raise SystemExit(f"no PUBACK for mid {info.mid}")
    pub.disconnect()
    pub.loop_stop()


# -- the consumers --------------------------------------------------------------------


def drain_bare(port: int, login: str, n: int) -> Drain:
    done = threading.Event()
    count = 0

    first: list[float] = []

    def on_message(c, u, m):
        nonlocal count
        count += 1
        if count == 1:
            first.append(time.perf_counter())
        if count == n:
            done.set()

    sub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=login, clean_session=False)
    sub.username_pw_set(login, HUB_PASSWORD)
    sub.max_inflight_messages_set(1000)  # as HubLink: outgoing only; Mosquitto's max_inflight_messages paces delivery
    sub.on_message = on_message
    settle_heap()  # the same collector settings as the hub's drain gets
    cpu0 = thread_cpu()
    sub.connect("127.0.0.1", port)
    sub.loop_start()
    if not done.wait(300):
        raise SystemExit(f"bare subscriber got only {count}/{n}")
    elapsed = time.perf_counter() - first[0]  # first message to last, as for the hub
    cpu = thread_cpu()
    time.sleep(0.3)  # anything beyond N would be a bug in the bench (or a redelivery)
    sub.disconnect()
    sub.loop_stop()
    return Drain("bare", n, elapsed, {"received": count, "cpu s": _cpu_delta(cpu0, cpu)})


def open_sessions(db_url: str) -> None:
    """A session on every table, committed before the hub under test starts (it loads them)."""
    store = open_store(db_url)
    svc = build_hub(load_venue(VENUE), store)  # no MQTT: only the database matters here
    for table in TABLES:
        svc.execute(StartGame(table=table, actor="bench"))
    store.close()  # the hub was never started: nothing else to stop


def thread_cpu() -> dict[str, float]:
    """CPU seconds (user + system) so far of each live thread of this process, by thread name."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for t in threading.enumerate():
        try:
            fields = Path(f"/proc/self/task/{t.native_id}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[re.sub(r"-lavos-bench-.*", "", t.name)] = (int(fields[11]) + int(fields[12])) / tick
    return out


def _pid(proc: subprocess.Popen | None) -> int:
    assert proc is not None, "not started"
    return proc.pid


def _cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds each thread (but the bench's own main thread) spent between two thread_cpu()s."""
    return {k: round(v - before.get(k, 0.0), 3) for k, v in after.items() if k != "MainThread" and v > before.get(k, 0.0)}


def cpu_per_message(d: Drain) -> float:
    return sum(d.info["cpu s"].values()) / d.n


def cpu_ratio(bare: Drain, hub: Drain) -> float | None:
    """Bare CPU per message over the hub's, or None when a small drain took under the clock's tick."""
    hub_cpu = cpu_per_message(hub)
    return cpu_per_message(bare) / hub_cpu if hub_cpu else None


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drain_hub(port: int, login: str, n: int, boot: str, db_url: str, metrics_factory, profiler=None, in_thread=False) -> Drain:
    store = open_store(db_url)  # migrated before the clock starts
    metrics = metrics_factory()
    svc = build_hub(
        load_venue(VENUE),
        store,
        mqtt_url=MqttUrl("127.0.0.1", port, login, HUB_PASSWORD, False),
        metrics=metrics,
        client_id=login,
        link_process=not in_thread,
    )
    contract.build_validators()  # start() does it too; not part of the drain
    settle_heap()  # as lavos server does once its hub is built
    if profiler:
        profiler.install()
    cpu0 = thread_cpu()
    t0 = time.perf_counter()
    svc.start()
    child = link_pid(svc) if not in_thread else None
    child0 = process_cpu(child) if child else 0.0  # its start-up (imports, connect) is not the drain's
    h = svc.handlers
    while h.applied + h.duplicates + h.rejected < n:
        if time.perf_counter() - t0 > 300:
            raise SystemExit(f"hub applied only {h.applied}/{n} (duplicates {h.duplicates}, rejected {h.rejected})")
        time.sleep(0.002)
    done_at = time.monotonic()
    # The clock runs from the first message in the hub's hands, as the link stamped it: a poll of
    # `received` from here can come late on a loaded machine, after a small drain has ended.
    first_at = hub_link(svc).stats.first_received_at
    assert first_at is not None, "the hub applied messages it never received"
    elapsed = done_at - first_at
    cpu = thread_cpu()
    child_cpu = process_cpu(child) - child0 if child else None
    time.sleep(0.3)
    info: dict[str, object] = {
        "applied": h.applied,
        "duplicates": h.duplicates,
        "rejected": h.rejected,
        "batches": svc.ingest.batches,
        "mean batch": round(svc.ingest.applied / max(1, svc.ingest.batches), 1),
    }
    # CPU of each thread during the drain: paho's and the ingest thread share one interpreter lock.
    cpu_s = _cpu_delta(cpu0, cpu)
    if child_cpu is not None:  # the MQTT link's process (paho, its forwarder): the hub's CPU too
        cpu_s["mqtt-link process"] = round(child_cpu, 2)
    info["cpu s"] = cpu_s
    if metrics is not None:
        metrics.flush(30)
        st = metrics.stats()
        info["metrics written"] = st["written"]
        info["metrics spooled"] = st["spooled"]
    svc.close()
    if profiler:
        profiler.collect()
    with store.session() as db:
        info["stored"] = db.scalar(select(func.count()).select_from(Event).where(Event.boot == boot))
    store.close()
    return Drain("hub", n, elapsed, info)


def with_servers(run, pids: dict[str, int]) -> Drain:
    """Run a drain and note the CPU the servers (Mosquitto, VictoriaMetrics) spent meanwhile: on
    two cores they take their share, so a consumer can only be as fast as what they leave it."""
    before = {name: process_cpu(pid) for name, pid in pids.items()}
    drain = run()
    drain.info["servers cpu s"] = {name: round(process_cpu(pid) - before[name], 2) for name, pid in pids.items()}
    return drain


def lost(d: Drain) -> list[str]:
    i = d.info
    if d.consumer == "bare":
        return [] if i["received"] == d.n else [f"bare received {i['received']} of {d.n}"]
    out = [f"hub {k} {i[k]}" for k in ("duplicates", "rejected") if i[k]]
    if i["applied"] != d.n or i["stored"] != d.n:
        out.append(f"hub applied {i['applied']}, stored {i['stored']} of {d.n}")
    return out


# -- main -------------------------------------------------------------------------------


def _servers(args: argparse.Namespace, work: Path) -> tuple[Any, Any]:
    """VictoriaMetrics (unless --no-metrics or not installed) and a PostgreSQL cluster (--db postgresql), started."""
    vm = pg = None
    if not args.no_metrics and Path("/usr/bin/victoria-metrics").exists():
        from tests.support.victoria import VictoriaMetrics

        vm = VictoriaMetrics(work / "vm").start()
    if args.db == "postgresql":
        from tests.support.postgres import PostgresCluster

        pg = PostgresCluster().start()
    return vm, pg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=30000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--no-sessions", action="store_true", help="tables not in play: every drop touches an alert")
    ap.add_argument("--no-metrics", action="store_true", help="without VictoriaMetrics (metrics off)")
    ap.add_argument(
        "--mqtt-in-thread", action="store_true", help="the hub's MQTT link in a thread, not its own process (lavos server --mqtt-in-thread)"
    )
    ap.add_argument("--profile", type=Path, metavar="DIR", help="cProfile the hub's threads; stats per round in DIR")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    work = Path(tempfile.mkdtemp(prefix="lavos-bench-"))
    broker = Mosquitto(work / "mosquitto").start()
    broker.hub_login(PUB_USER)
    vm = pg = None
    failures: list[str] = []
    try:
        vm, pg = _servers(args, work)

        spools = itertools.count(1)

        def metrics_factory():
            if vm is None:
                return None
            from broker.adapters.metrics import MetricsWriter

            return MetricsWriter(vm.url, "token", "lavos", "lavos", work / f"spool-{next(spools)}")

        drains: list[tuple[Drain, Drain]] = []
        fits = ""
        for r in range(args.rounds):
            boot = f"bench-{r}"
            msgs = payloads(args.events, boot)
            fits = check_backlog_fits(broker, msgs)
            bare_login, _ = broker.hub_login(f"lavos-bench-bare-{r}")
            hub_login, _ = broker.hub_login(f"lavos-bench-hub-{r}")
            db_url = pg.create_database() if pg else f"sqlite:///{work / f'hub-{r}.db'}"
            open_store(db_url).close()  # migrate now
            if not args.no_sessions:
                open_sessions(db_url)
            make_session(broker.port, bare_login)
            make_session(broker.port, hub_login)
            pub_rate = publish_all(broker.port, msgs)
            profiler = None
            if args.profile:
                from bench.profiling import ThreadProfiler

                profiler = ThreadProfiler(args.profile / f"hub-round-{r}.pstats")
            run_bare = lambda: drain_bare(broker.port, bare_login, args.events)  # noqa: E731
            run_hub = lambda: drain_hub(broker.port, hub_login, args.events, boot, db_url, metrics_factory, profiler, args.mqtt_in_thread)  # noqa: E731
            servers = {"mosquitto": _pid(broker.proc), **({"victoria": _pid(vm.proc)} if vm else {})}
            if r % 2 == 0:
                bare, hub = with_servers(run_bare, servers), with_servers(run_hub, servers)
            else:
                hub, bare = with_servers(run_hub, servers), with_servers(run_bare, servers)
            drains.append((bare, hub))
            print(
                f"round {r + 1}: publisher {pub_rate:7.0f} msg/s (untimed) | bare {bare.rate:7.0f} msg/s "
                f"{cpu_per_message(bare) * 1e6:4.0f} us CPU/msg | hub {hub.rate:7.0f} ev/s "
                f"{cpu_per_message(hub) * 1e6:4.0f} us CPU/ev | ratio {hub.rate / bare.rate:.2f} | {hub.info} | "
                f"while bare: {bare.info['servers cpu s']}",
                flush=True,
            )
            failures += lost(bare) + lost(hub)
        dropped = [line for line in broker.log_text().splitlines() if "dropped" in line.lower()]
        if dropped:
            failures.append(f"Mosquitto dropped messages: {dropped[:3]}")
        ratios = [h.rate / b.rate for b, h in drains]
        mid = sorted(range(len(drains)), key=lambda i: ratios[i])[(len(drains) - 1) // 2]  # the median round (lower one of two)
        b, h = drains[mid]
        where = "PostgreSQL" if pg else "SQLite"
        print(
            f"events per drain        {args.events} QoS 1 pocket events, {len(TABLES)} tables"
            f"{'' if args.no_sessions else ' in play'}, {args.rounds} rounds; {fits}"
        )
        print(f"bare paho subscriber    {b.rate:8.0f} msg/s  (receive + paho auto-ack, count)")
        print(
            f"hub                     {h.rate:8.0f} ev/s   (validated, deduplicated, stored in {where}, acked after "
            f"commit, metrics {'to VictoriaMetrics' if vm else 'off'}; MQTT link in "
            f"{'a thread' if args.mqtt_in_thread else 'its own process, as lavos server runs it'})"
        )
        print(
            f"ratio hub/bare          {ratios[mid]:8.2f}  (median round {mid + 1}; all rounds: "
            f"{', '.join(f'{x:.2f}' for x in ratios)}; target >= 0.70)"
        )
        # The consumer threads share one interpreter lock, so a drain is CPU-bound on one core:
        # the CPU each spends per message predicts the ratio on a quiet machine, and moves less
        # than the rates when other work shares the cores.
        cpu_ratios = [cpu_ratio(b, h) for b, h in drains]
        shown = [f"{x:.2f}" if x is not None else "n/a (under the clock's tick)" for x in cpu_ratios]
        print(
            f"CPU per message         bare {cpu_per_message(b) * 1e6:.0f} us, hub {cpu_per_message(h) * 1e6:.0f} us "
            f"(all threads); bare/hub {shown[mid]} (all rounds: {', '.join(shown)})"
        )
        if failures:
            print("LOST OR EXTRA MESSAGES: " + "; ".join(failures), file=sys.stderr)
            return 1
        return 0
    finally:
        if vm:
            vm.stop()
        if pg:
            pg.stop()
        broker.stop()


if __name__ == "__main__":
    sys.exit(main())
