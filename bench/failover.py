"""How soon a standby `lavos server` leads when the hub goes: killed, stopped, or fenced off.

    .venv/bin/python -m bench.failover [--rounds 3] [--kinds kill,stop,fence] [--standby-poll S] [--pg-port PORT]

Real processes: Mosquitto from the shipped config, a PostgreSQL cluster (tests/support/postgres.py),
and two `lavos server` processes on one database with the shipped unit's command line
(deploy/systemd/lavos-server.service, as bench/hub_ingest.py points it at this run: the same hub
login, each its own HTTP port and data directory). One is the hub, the other the standby
(broker/adapters/leadership.py). Each round, for each kind:
- kill: the hub is SIGKILLed (a crash, a power cut of its process);
- stop: the hub is stopped with SIGTERM (`systemctl stop`, an upgrade): it lets the lock go;
- fence: the hub's lock session is ended in PostgreSQL (pg_terminate_backend, as a network cut or
  an administrator would): the hub must exit (code 3) before the standby's MQTT connect.
Timed from that moment, on this machine's clock: when the old hub's process has exited (fence),
when the standby answers /api/health 200 (it leads: its dashboard and API are the hub's), and when
Mosquitto logs the hub's login connecting again (its MQTT session resumed). The process that went
is then started again, as systemd restarts it, and waits as the standby for the next one.

The takeover includes the shipped safety margin: a process that wins the lock waits
FENCE_GRACE_S before it touches MQTT, so that a hub which lost the lock has exited first. It
exits non-zero if a standby does not lead, a fenced hub does not exit 3, or Mosquitto ever saw
two processes with the hub's login at once. tests/faults/test_failover.py holds what must be true
(nothing lost, no light switched, never two hubs); this bench measures how soon.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.hub_ingest import server_command, unit_command
from broker.adapters.leadership import FENCE_GRACE_S, STANDBY_POLL_S
from broker.storage.engine import open_store
from sim.mosquitto import HUB_PASSWORD, HUB_USER, Mosquitto, free_port
from tests.support.postgres import PostgresCluster

KINDS = ("kill", "stop", "fence")
WAIT_S = 120.0  # a takeover not done within this is a failure, not a slow sample
TAKEN_OVER = "already connected, closing old connection"  # Mosquitto: a second client with the hub's id


@dataclass
class Server:
    name: str
    command: list[str]
    env: dict[str, str]
    log: Path
    base: str
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        with open(self.log, "a") as out:
            self.proc = subprocess.Popen(self.command, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        return self

    def health(self) -> int | None:
        try:
            return httpx.get(f"{self.base}/api/health", timeout=2).status_code
        except httpx.TransportError:
            return None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Figures:
    led: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})  # the standby answers 200
    mqtt: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KINDS})  # the hub's login connected again
    exited: list[float] = field(default_factory=list)  # fence: the old hub's process gone (exit 3)


def until(what: str, check: Callable[[], object], since: float) -> float:
    """Seconds from `since` until check() is true, polled every 20 ms; SystemExit after WAIT_S."""
    return until_each({what: check}, since)[what]


def until_each(checks: dict[str, Callable[[], object]], since: float) -> dict[str, float]:
    """Seconds from `since` until each check is first true (all polled together, every 20 ms)."""
    seen: dict[str, float] = {}
    while len(seen) < len(checks):
        for what, check in checks.items():
            if what not in seen and check():
                seen[what] = time.monotonic() - since
        if time.monotonic() - since > WAIT_S:
            raise SystemExit(f"no {', '.join(w for w in checks if w not in seen)} within {WAIT_S:.0f} s")
        time.sleep(0.02)
    return seen


def hub_connections(broker: Mosquitto) -> int:
    return len(re.findall(rf"New client connected from \S+ as {HUB_USER} ", broker.log_text()))


def end_lock_session(pg: PostgresCluster, db_url: str) -> None:
    database = db_url.rsplit("/", 1)[1]
    pg.execute(
        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        f"WHERE l.locktype = 'advisory' AND l.granted AND a.datname = '{database}'"
    )


def takeover(kind: str, hub: Server, standby: Server, broker: Mosquitto, pg: PostgresCluster, db_url: str, figures: Figures) -> None:
    assert hub.proc is not None
    connections = hub_connections(broker)
    if kind == "kill":
        hub.proc.send_signal(signal.SIGKILL)
    elif kind == "stop":
        hub.proc.send_signal(signal.SIGTERM)
    else:
        end_lock_session(pg, db_url)
    gone = time.monotonic()
    if kind == "fence":
        proc = hub.proc  # not None (asserted above), which a lambda would forget
        figures.exited.append(until("exit of the fenced hub", lambda: proc.poll() is not None, gone))
        if hub.proc.returncode != 3:
            raise SystemExit(f"the fenced hub exited {hub.proc.returncode}, not 3:\n{hub.log.read_text()[-2000:]}")
    seen = until_each({"leads": lambda: standby.health() == 200, "mqtt": lambda: hub_connections(broker) > connections}, gone)
    figures.led[kind].append(seen["leads"])
    figures.mqtt[kind].append(seen["mqtt"])
    hub.proc.wait(30)


def line(name: str, xs: list[float]) -> str:
    if not xs:
        return f"  {name:<46} (not measured)"
    return f"  {name:<46} n={len(xs):<2} p50 {statistics.median(xs):5.2f} s  max {max(xs):5.2f} s"


def main(argv: list[str] | None = None, cluster: PostgresCluster | None = None) -> int:
    """The bench; `cluster`: a PostgreSQL already running (its quick test passes the suite's), else one of its own."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"which of {', '.join(KINDS)} (comma-separated)")
    ap.add_argument("--standby-poll", type=float, help=f"lavos server --standby-poll (shipped: its default, {STANDBY_POLL_S:g} s)")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if not kinds or set(kinds) - set(KINDS):
        raise SystemExit(f"--kinds: some of {', '.join(KINDS)}")
    work = Path(tempfile.mkdtemp(prefix="lavos-failover-"))
    broker = Mosquitto(work / "mosquitto").start()
    pg = cluster or PostgresCluster().start()
    servers: list[Server] = []
    db_url = ""
    try:
        db_url = pg.create_database()
        open_store(db_url).close()  # migrated before the clock matters
        password_file = work / "hub-password"
        password_file.write_text(HUB_PASSWORD + "\n")
        unit_argv, unit_env = unit_command()
        extra = ["--standby-poll", str(args.standby_poll)] if args.standby_poll else []
        for name in ("a", "b"):
            port = free_port()
            (work / name).mkdir()
            command = server_command(
                unit_argv,
                mqtt_url=f"mqtt://{HUB_USER}@127.0.0.1:{broker.port}",
                password_file=password_file,
                db_url=db_url,
                http=f"127.0.0.1:{port}",
                extra=extra,
            )
            env = {**os.environ, **unit_env, "LAVOS_DATA_DIR": str(work / name)}
            env.pop("LAVOS_DB", None)
            servers.append(Server(name, command, env, work / f"server-{name}.log", f"http://127.0.0.1:{port}"))
        hub, standby = servers
        hub.start()
        until("the first server leading", lambda: hub.health() == 200, time.monotonic())
        standby.start()
        until("the second server standing by", lambda: standby.health() == 503, time.monotonic())
        figures = Figures()
        todo = [kind for _ in range(args.rounds) for kind in kinds]
        for n, kind in enumerate(todo, 1):
            takeover(kind, hub, standby, broker, pg, db_url, figures)
            if n < len(todo):
                back = hub.start()  # systemd starts it again: it waits as the standby
                until(f"{back.name} standing by again", lambda: back.health() == 503, time.monotonic())
            hub, standby = standby, hub
        if TAKEN_OVER in broker.log_text():
            print("TWO HUBS: Mosquitto saw the hub's login connect while it was still connected", file=sys.stderr)
            return 1
        poll = args.standby_poll or STANDBY_POLL_S
        print(
            f"failover, {args.rounds} rounds of {', '.join(kinds)}; two lavos server processes as shipped on PostgreSQL; "
            f"standby poll {poll:g} s, the shipped grace before a new hub's MQTT connect {FENCE_GRACE_S:g} s; "
            f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        for kind in kinds:
            print(line(f"{kind}: the standby leads (/api/health 200)", figures.led[kind]))
            print(line(f"{kind}: the hub's MQTT session resumed", figures.mqtt[kind]))
        if "fence" in kinds:
            print(line("fence: the old hub exited (code 3)", figures.exited))
        print("never two hubs: Mosquitto saw no second connection with the hub's login")
        return 0
    finally:
        for s in servers:
            s.stop()
        if cluster is None:
            pg.stop()
        elif db_url:
            pg.drop_database(db_url)
        broker.stop()


if __name__ == "__main__":
    sys.exit(main())
