"""How fast `lavos server`, started as shipped, drains a backlog, next to a bare paho subscriber on
the same broker, in one run.

    .venv/bin/python -m bench.hub_ingest [--events 20000] [--rounds 3] [--db sqlite|postgresql]
                                         [--no-sessions] [--metrics] [--mqtt-in-thread] [--py-spy PATH]

What it measures. A drain, not a stream: a streamed figure is the publisher's speed (one paho
publisher tops out near what one consumer takes, so both consumers measure it). Each round:
1. Each consumer's login gets a persistent session (clean_session=False, subscribed at QoS 1 to
   what the hub subscribes to), then disconnects. A fresh database (a SQLite file, or a PostgreSQL
   database with --db postgresql) is migrated, and unless --no-sessions a game is started on each
   of the 10 tables, as when balls really drop (with --no-sessions every drop is "balls potted, no
   game": an alert touched per table and batch).
2. N pocket events from 10 tables (valid contract messages, distinct (table, boot, seq), distinct
   node timestamps) are published at QoS 1 and the publisher waits for every PUBACK: Mosquitto
   now holds the whole backlog for every offline session. None of this is timed.
3. One consumer at a time drains it:
   - bare: a paho subscriber in this process that does what any MQTT consumer must, receive and
     ack at QoS 1 (paho's automatic ack, sent as on_message returns) and count;
   - the hub: `lavos server` as a process, started with the command line of the shipped systemd
     unit (deploy/systemd/lavos-server.service: its venue, broker, password file, database and
     HTTP options with this run's paths, its environment; no metrics, as shipped, unless
     --metrics), logging in with the round's hub login. Every event validated, deduplicated by
     (table, boot, seq), stored and committed before its ack. Counted from its `events` rows.
   Both are timed from their 10 % event to their 90 % one, so neither the start (the server's
   imports, its web app, its MQTT connect) nor the tail says anything about draining: the bare
   subscriber by the times its messages arrived, the server by its rows' `received_at` (one
   value per writer batch, stamped as the batch begins: the events of the batches begun between
   the 10 % event's batch and the 90 % one's, over that time).
   The order alternates per round; each round has its own logins, database and boot.
The ratio server/bare is the figure: the machine is shared, so absolute rates move. CPU per event
over the same window is printed too (the server's process and its MQTT link process, from /proc),
which moves less with the load than the rates.

It exits non-zero if a consumer gets fewer or more than N messages, the server stores a different
number of events or refuses one, does not exit 0 on SIGTERM, or Mosquitto logged dropping
messages. The shipped Mosquitto config is used as is (broker/mosquitto_conf, rendered by
sim/mosquitto.py); the bench checks that the backlog fits its per-client queue limits
(max_queued_messages/max_queued_bytes) and refuses to run otherwise, rather than raising them.
With --py-spy PATH (py-spy is no dependency of Lavos: install it in a venv of its own) the server
runs under `py-spy record --subprocesses`, one flame graph per round in the work directory.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import Engine, func, select

from broker.adapters.heap import settle_heap
from broker.compose import build_hub
from broker.domain.venue import load_venue
from broker.floor.games import StartGame
from broker.storage.engine import make_engine, open_store
from broker.storage.models import Event, NodeRejectCount
from devices import contract
from sim.mosquitto import HUB_PASSWORD, Mosquitto, free_port

REPO = Path(__file__).resolve().parents[1]
VENUE = REPO / "deploy" / "venues" / "lavos.toml"
UNIT = REPO / "deploy" / "systemd" / "lavos-server.service"
TABLES = [f"pool-{i:02d}" for i in range(1, 11)]
PUB_USER = "lavos-hub-2"  # a login the shipped ACL names; the consumers get lavos-bench-* logins
WINDOW = (0.10, 0.90)  # each drain is timed from its 10 % event to its 90 % one
POLL_S = 0.05  # how often the server's progress is read (max(id): an index lookup)


@dataclass
class Drain:
    consumer: str
    n: int  # events in the timed window
    seconds: float  # the window's length
    info: dict[str, Any] = field(default_factory=dict)

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


# -- the bare subscriber ------------------------------------------------------------------


def window_of(n: int) -> tuple[int, int]:
    """The indices (0-based) of the events that open and close the timed window of a drain of n."""
    return int(n * WINDOW[0]), max(int(n * WINDOW[1]), int(n * WINDOW[0]) + 1)


def drain_bare(port: int, login: str, n: int) -> Drain:
    done = threading.Event()
    count = 0
    lo, hi = window_of(n)
    stamps: dict[int, float] = {}

    def on_message(c: mqtt.Client, u: object, m: mqtt.MQTTMessage) -> None:
        nonlocal count
        if count in (lo, hi):
            stamps[count] = time.perf_counter()
        count += 1
        if count == n:
            done.set()

    sub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=login, clean_session=False)
    sub.username_pw_set(login, HUB_PASSWORD)
    sub.max_inflight_messages_set(1000)  # as HubLink: outgoing only; Mosquitto's max_inflight_messages paces delivery
    sub.on_message = on_message
    settle_heap()  # the collector settings lavos server runs with
    cpu0 = thread_cpu()
    sub.connect("127.0.0.1", port)
    sub.loop_start()
    if not done.wait(300):
        raise SystemExit(f"bare subscriber got only {count}/{n}")
    cpu = thread_cpu()
    time.sleep(0.3)  # anything beyond N would be a bug in the bench (or a redelivery)
    sub.disconnect()
    sub.loop_stop()
    cpu_s = _cpu_delta(cpu0, cpu)
    return Drain("bare", hi - lo, stamps[hi] - stamps[lo], {"received": count, "cpu us/ev": round(sum(cpu_s.values()) / n * 1e6, 1)})


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


def _cpu_delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds each thread (but the bench's own main thread) spent between two thread_cpu()s."""
    return {k: round(v - before.get(k, 0.0), 3) for k, v in after.items() if k != "MainThread" and v > before.get(k, 0.0)}


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


# -- lavos server, as shipped ---------------------------------------------------------------


def unit_command(unit: Path = UNIT) -> tuple[list[str], dict[str, str]]:
    """The shipped unit's ExecStart (continuation lines joined) as argv, and its Environment=."""
    text = unit.read_text().replace("\\\n", " ")
    exec_start = env_lines = None
    env: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep:
            continue
        if key == "ExecStart":
            exec_start = value
        elif key == "Environment":
            env_lines = value
            for pair in shlex.split(env_lines):
                k, _, v = pair.partition("=")
                env[k] = v
    if exec_start is None:
        raise SystemExit(f"{unit} has no ExecStart")
    # systemd puts the unit's Environment= into ${NAME} (and $NAME) of ExecStart's arguments.
    expanded = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), exec_start)
    return shlex.split(expanded), env


def server_command(unit_argv: list[str], *, mqtt_url: str, password_file: Path, db_url: str, http: str, extra: list[str]) -> list[str]:
    """The unit's command line with this run's paths: this venv's `lavos`, the repository's venue,
    the round's broker login and database, a free HTTP port. Every other option stays as shipped."""
    program = Path(sys.executable).with_name("lavos")
    argv = [str(program) if program.exists() else sys.executable, *([] if program.exists() else ["-m", "lavos_cli"])]
    values = {"--venue": str(VENUE), "--mqtt": mqtt_url, "--mqtt-password-file": str(password_file), "--db": db_url, "--http": http}
    args = unit_argv[1:]
    if not args or args[0] != "server":
        raise SystemExit(f"the shipped unit does not run `lavos server`: {unit_argv}")
    missing = set(values) - set(args)
    if missing:
        raise SystemExit(f"the shipped unit's command line lacks {sorted(missing)}: the bench cannot point it at this run")
    out = []
    for i, arg in enumerate(args):
        out.append(values[args[i - 1]] if i and args[i - 1] in values else arg)
    return [*argv, *out, *extra]


def progress(engine: Engine) -> int:
    """How many events the server has stored so far (ids are 1, 2, ... in a fresh database)."""
    with engine.connect() as c:
        return int(c.scalar(select(func.max(Event.id))) or 0)


def server_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of the server's process and of its MQTT link process (its child that
    multiprocessing spawned; the other child, multiprocessing's resource tracker, sleeps)."""
    out = {"server process": process_cpu(pid)}
    for kid in children(pid):
        try:
            cmdline = Path(f"/proc/{kid}/cmdline").read_bytes()
            if b"spawn_main" in cmdline:
                out["link process"] = out.get("link process", 0.0) + process_cpu(kid)
        except OSError:
            continue
    return out


def batch_window(received: list[datetime]) -> tuple[int, float]:
    """(events, seconds) of the batches begun from the 10 % event's batch to the 90 % one's
    (`received`: every event's received_at, in storing order)."""
    lo, hi = window_of(len(received))
    start, end = received[lo], received[hi]
    if end <= start:
        raise SystemExit(f"the drain of {len(received)} events went in one batch: too small to time; use more --events")
    return sum(1 for t in received if start <= t < end), (end - start).total_seconds()


def drain_server(command: list[str], env: dict[str, str], db_url: str, n: int, boot: str, workdir: Path, py_spy: Path | None) -> Drain:
    log_path = workdir / "server.log"
    if py_spy is not None:
        command = [
            str(py_spy),
            "record",
            "--threads",
            "--subprocesses",
            "--rate",
            "200",
            "--format",
            "raw",
            "-o",
            str(workdir / "py-spy.txt"),
            "--",
            *command,
        ]
    engine = make_engine(db_url)
    lo, hi = window_of(n)
    snaps: list[tuple[int, dict[str, float]]] = []
    with open(log_path, "w") as log:
        started = time.monotonic()
        proc = subprocess.Popen(command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    server_pid = proc.pid
    first_at: float | None = None
    try:
        stored = 0
        while stored < n:
            if proc.poll() is not None:
                raise SystemExit(f"lavos server exited ({proc.returncode}) with {stored}/{n} stored:\n{log_path.read_text()[-3000:]}")
            if time.monotonic() - started > 300:
                raise SystemExit(f"lavos server stored only {stored}/{n} in 300 s")
            time.sleep(POLL_S)
            if py_spy is not None and server_pid == proc.pid:
                server_pid = next(iter(children(proc.pid)), proc.pid)  # the server under py-spy
            stored = progress(engine)
            if stored and first_at is None:
                first_at = time.monotonic()
            if len(snaps) < 2 and stored > (lo, hi)[len(snaps)]:
                snaps.append((stored, server_cpu(server_pid)))
        time.sleep(0.3)  # anything beyond N would be a redelivery stored twice
    finally:
        code = stop(proc, py_spy is not None)
    with engine.connect() as c:
        received = [r[0] for r in c.execute(select(Event.received_at).where(Event.boot == boot).order_by(Event.id))]
        refused = int(c.scalar(select(func.coalesce(func.sum(NodeRejectCount.count), 0))) or 0)
    engine.dispose()
    events, seconds = batch_window(received)
    (n0, cpu0), (n1, cpu1) = snaps if len(snaps) == 2 else (snaps[0], snaps[0])
    per_event = {k: round((v - cpu0.get(k, 0.0)) / max(1, n1 - n0) * 1e6, 1) for k, v in cpu1.items()}
    info = {
        "stored": len(received),
        "refused": refused,
        "exit code": code,
        "first event stored after": round((first_at or started) - started, 1),
        "batches": len(set(received)),
        "cpu us/ev": round(sum(per_event.values()), 1),
        "cpu us/ev by process": per_event,
    }
    return Drain("server", events, seconds, info)


def stop(proc: subprocess.Popen[bytes], under_py_spy: bool) -> int | None:
    """SIGTERM, as systemd stops the unit; the server's exit code (under py-spy: the server's, not py-spy's)."""
    if proc.poll() is not None:
        return proc.returncode
    target = children(proc.pid) if under_py_spy else [proc.pid]
    for pid in target:
        os.kill(pid, signal.SIGTERM)
    try:
        code = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None
    return code


def open_sessions(db_url: str) -> None:
    """A game on every table, committed before the server starts (it loads them from the database)."""
    store = open_store(db_url)
    svc = build_hub(load_venue(VENUE), store)  # no MQTT: only the database matters here
    for table in TABLES:
        svc.execute(StartGame(table=table, actor="bench"))
    store.close()  # the hub was never started: nothing else to stop


def lost(d: Drain, n: int) -> list[str]:
    i = d.info
    if d.consumer == "bare":
        return [] if i["received"] == n else [f"bare received {i['received']} of {n}"]
    out = [f"server stored {i['stored']} of {n}"] if i["stored"] != n else []
    if i["refused"]:
        out.append(f"server refused {i['refused']} messages")
    if i["exit code"] != 0:
        out.append(f"server exited {i['exit code']} on SIGTERM")
    return out


def tree_cpu(pid: int) -> float:
    """CPU seconds so far of a process and its children, live or ended (PostgreSQL: the postmaster
    and its backends, whose connections end with the server that opened them)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime, stime, cutime, cstime
    for kid in children(pid):
        try:
            total += process_cpu(kid)
        except OSError:
            continue  # ended meanwhile
    return total


def with_servers(run: Callable[[], Drain], pids: dict[str, int]) -> Drain:
    """Run a drain and note the CPU the servers (Mosquitto, VictoriaMetrics, PostgreSQL) spent
    meanwhile: on two cores they take their share, so a consumer can only be as fast as what they
    leave it."""
    before = {name: tree_cpu(pid) for name, pid in pids.items()}
    drain = run()
    drain.info["servers cpu s"] = {name: round(tree_cpu(pid) - before[name], 2) for name, pid in pids.items()}
    return drain


# -- main -------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--no-sessions", action="store_true", help="tables not in play: every drop touches an alert")
    ap.add_argument("--metrics", action="store_true", help="the server writes metrics to a VictoriaMetrics (--influx); shipped: off")
    ap.add_argument("--mqtt-in-thread", action="store_true", help="lavos server --mqtt-in-thread (shipped: the link in its own process)")
    ap.add_argument("--py-spy", type=Path, metavar="PATH", help="run the server under this py-spy; flame graphs in the work directory")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lavos-bench-"))
    broker = Mosquitto(work / "mosquitto").start()
    broker.hub_login(PUB_USER)
    password_file = work / "hub-password"
    password_file.write_text(HUB_PASSWORD + "\n")
    unit_argv, unit_env = unit_command()
    extra = ["--mqtt-in-thread"] if args.mqtt_in_thread else []
    vm = pg = None
    failures: list[str] = []
    try:
        if args.metrics:
            from tests.support.victoria import VictoriaMetrics

            vm = VictoriaMetrics(work / "vm").start()
            (work / "influx-token").write_text("token\n")
            extra += ["--influx", vm.url, "--influx-token-file", str(work / "influx-token")]
        if args.db == "postgresql":
            from tests.support.postgres import PostgresCluster

            pg = PostgresCluster().start()
        drains: list[tuple[Drain, Drain]] = []
        fits = ""
        command: list[str] = []
        for r in range(args.rounds):
            boot = f"bench-{r}"
            msgs = payloads(args.events, boot)
            fits = check_backlog_fits(broker, msgs)
            bare_login, _ = broker.hub_login(f"lavos-bench-bare-{r}")
            hub_login, _ = broker.hub_login(f"lavos-bench-hub-{r}")
            round_dir = work / f"round-{r}"
            (round_dir / "data").mkdir(parents=True)
            db_url = pg.create_database() if pg else f"sqlite:///{round_dir / 'lavos.db'}"
            open_store(db_url).close()  # migrated now, not while the server starts
            if not args.no_sessions:
                open_sessions(db_url)
            make_session(broker.port, bare_login)
            make_session(broker.port, hub_login)
            pub_rate = publish_all(broker.port, msgs)
            command = server_command(
                unit_argv,
                mqtt_url=f"mqtt://{hub_login}@127.0.0.1:{broker.port}",
                password_file=password_file,
                db_url=db_url,
                http=f"127.0.0.1:{free_port()}",
                extra=extra,
            )
            # The unit's environment, and where systemd's StateDirectory= would put its data.
            env = {**os.environ, **unit_env, "LAVOS_DATA_DIR": str(round_dir / "data")}
            env.pop("LAVOS_DB", None)
            run_bare = lambda: drain_bare(broker.port, bare_login, args.events)  # noqa: E731
            run_server = lambda: drain_server(command, env, db_url, args.events, boot, round_dir, args.py_spy)  # noqa: E731
            assert broker.proc is not None
            servers = {"mosquitto": broker.proc.pid, **({"victoria": vm.proc.pid} if vm and vm.proc else {})}
            if pg:
                servers["postgresql"] = int((pg.data / "postmaster.pid").read_text().split()[0])
            if r % 2 == 0:
                bare, hub = with_servers(run_bare, servers), with_servers(run_server, servers)
            else:
                hub, bare = with_servers(run_server, servers), with_servers(run_bare, servers)
            drains.append((bare, hub))
            print(
                f"round {r + 1}: publisher {pub_rate:7.0f} msg/s (untimed) | bare {bare.rate:7.0f} msg/s "
                f"{bare.info['cpu us/ev']:4.0f} us CPU/msg | server {hub.rate:7.0f} ev/s {hub.info['cpu us/ev']:4.0f} us CPU/ev "
                f"| ratio {hub.rate / bare.rate:.2f} | {hub.info} | while bare: {bare.info['servers cpu s']}",
                flush=True,
            )
            failures += lost(bare, args.events) + lost(hub, args.events)
        dropped = [line for line in broker.log_text().splitlines() if "dropped" in line.lower()]
        if dropped:
            failures.append(f"Mosquitto dropped messages: {dropped[:3]}")
        report(args, drains, fits, command, "PostgreSQL" if pg else "SQLite", vm is not None)
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


def report(args: argparse.Namespace, drains: list[tuple[Drain, Drain]], fits: str, command: list[str], where: str, metrics: bool) -> None:
    ratios = [h.rate / b.rate for b, h in drains]
    mid = sorted(range(len(drains)), key=lambda i: ratios[i])[(len(drains) - 1) // 2]  # the median round (lower one of two)
    b, h = drains[mid]
    lo, hi = window_of(args.events)
    print(
        f"events per drain        {args.events} QoS 1 pocket events, {len(TABLES)} tables"
        f"{' without games' if args.no_sessions else ' in play'}, {args.rounds} rounds, each timed from event {lo + 1} to "
        f"{hi + 1}; {fits}"
    )
    print(f"server command          {shlex.join(command)}")
    print(f"bare paho subscriber    {b.rate:8.0f} msg/s  (receive + paho auto-ack, count)")
    print(
        f"lavos server            {h.rate:8.0f} ev/s   (as shipped: validated, deduplicated, stored in {where}, acked after "
        f"commit, metrics {'to VictoriaMetrics' if metrics else 'off'}; MQTT link in "
        f"{'a thread' if args.mqtt_in_thread else 'its own process'})"
    )
    print(
        f"ratio server/bare       {ratios[mid]:8.2f}  (median round {mid + 1}; all rounds: "
        f"{', '.join(f'{x:.2f}' for x in ratios)}; target >= 0.70)"
    )
    by_process = ", ".join(f"{k} {v:.0f}" for k, v in h.info["cpu us/ev by process"].items())
    rounds = ", ".join(f"{bb.info['cpu us/ev']:.0f}/{hh.info['cpu us/ev']:.0f}" for bb, hh in drains)
    print(
        f"CPU per event           bare {b.info['cpu us/ev']:.0f} us, server {h.info['cpu us/ev']:.0f} us ({by_process}); "
        f"all rounds (bare/server): {rounds}"
    )


if __name__ == "__main__":
    sys.exit(main())
