"""What authentication costs, and what anonymous password guessers do to staff and to ingest.

    .venv/bin/python -m bench.auth [--calls 100] [--rounds 10] [--attackers 16] [--warm-up 3]

A private Mosquitto and `lavos server` (SQLite, shipped venue) as their own processes; staff
accounts made with the shipped argon2id costs. Printed:
- `GET /api/tables` p50/p99 with HTTP Basic (the same right credentials each time), a bearer
  token, and the cookie of a /login page session; next to `GET /api/health` (no authentication),
  which is the floor the HTTP stack itself costs. Target: Basic p50 < 10 ms.
- a token-authenticated session start and stop, and a node's event from publish to stored
  (the hub's `received_at` minus the node's timestamp, one clock), medians: with no attack,
  then with `--attackers` anonymous clients sending Basic with made-up users and wrong passwords
  for the manager, (a) all from 127.0.0.2, (b) each request from a fresh loopback address (a
  botnet: no per-address throttle ever applies, so every request costs a hash). Ratios against
  the no-attack run. Target: start/stop and publish -> stored < 1 s median under attack.
- what the attackers got: requests/s and status counts (proof they were hitting the server),
  and what a manager's login that must run argon2 got meanwhile: from a new device, and from
  the address that user logged in from before (after a new password, so nothing is cached).
Attackers are raw sockets in processes of their own, so the measuring process is not slowed by
them. The default run takes about a minute and a half.
"""

from __future__ import annotations

import argparse
import base64
import multiprocessing
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Event as EventType
from pathlib import Path

import httpx
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import create_engine, text

from broker.accounts.users import create_user, issue_token, new_password, set_password
from broker.storage.engine import open_store
from devices import contract
from sim.mosquitto import Mosquitto, free_port
from tests.support import httpc
from tests.support.matching import found
from tests.support.mqtt import pocket_event

REPO = Path(__file__).resolve().parents[1]
VENUE = REPO / "deploy" / "venues" / "lavos.toml"
MANAGER, PASSWORD = "manager", "Manažér-tajné-heslo-7"
NODE = "pool-01"
TABLE = "pool-03"
_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
SCENARIOS = (("no attack", None), ("attack from one address", "one"), ("attack, a fresh address per request", "fresh"))


@dataclass
class Stack:
    base: str
    db: Path
    token: str
    mqtt_port: int
    cold_users: list[str] = field(default_factory=list)  # never logged in: a new device
    known_users: list[str] = field(default_factory=list)  # logged in from 127.0.0.1 before


# --- attackers ------------------------------------------------------------------------------


def _attack_thread(
    port: int, mode: str, who: int, stop: EventType, done: Synchronized[int], counts: Counter[str], lock: threading.Lock
) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        # Half guess the manager's password, half make up users; nobody knows a real password.
        user = MANAGER if (who + n) % 2 else f"intruder-{who}-{n}"
        creds = base64.b64encode(f"{user}:hádam-{n}".encode()).decode()
        source = "127.0.0.2" if mode == "one" else f"127.{100 + who // 250}.{who % 250 + 1}.{n % 250 + 1}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=60, source_address=(source, 0)) as s:
                s.sendall(f"GET /api/tables HTTP/1.1\r\nHost: bench\r\nAuthorization: Basic {creds}\r\nConnection: close\r\n\r\n".encode())
                head = s.recv(64)
                while s.recv(65536):
                    pass
            code = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "garbled"
        except OSError as e:
            code = type(e).__name__
        with lock:
            counts[code] += 1
        with done.get_lock():
            done.value += 1


def _attack_process(
    port: int, mode: str, first: int, threads: int, stop: EventType, done: Synchronized[int], out: multiprocessing.Queue[dict[str, int]]
) -> None:
    counts: Counter[str] = Counter()
    lock = threading.Lock()
    workers = [threading.Thread(target=_attack_thread, args=(port, mode, first + i, stop, done, counts, lock)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    out.put(dict(counts))


class Attack:
    """`attackers` threads in processes of 4, hammering until stop()."""

    def __init__(self, port: int, mode: str, attackers: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.out: multiprocessing.Queue[dict[str, int]] = ctx.Queue()
        self.stop_event = ctx.Event()
        self.done: Synchronized[int] = ctx.Value("q", 0)  # answers so far, all attackers
        self.attackers = attackers
        per = 4
        self.procs = [
            ctx.Process(target=_attack_process, args=(port, mode, first, min(per, attackers - first), self.stop_event, self.done, self.out))
            for first in range(0, attackers, per)
        ]

    def start(self, warm_up_s: float) -> Attack:
        for p in self.procs:
            p.start()
        deadline = time.monotonic() + 120
        while self.done.value < self.attackers:  # every attacker process is up and answered
            if time.monotonic() > deadline:
                raise SystemExit(f"the attackers got only {self.done.value} answers in 120 s")
            time.sleep(0.05)
        time.sleep(warm_up_s)  # let the flood build up before measuring
        self.t0, self.done0 = time.monotonic(), self.done.value
        return self

    def stop(self) -> tuple[Counter[str], float]:
        """(status counts of the whole attack, answers per second while staff were measured)."""
        rate = (self.done.value - self.done0) / (time.monotonic() - self.t0)
        self.stop_event.set()
        total: Counter[str] = Counter()
        for _ in self.procs:
            total.update(self.out.get(timeout=180))
        for p in self.procs:
            p.join()
        return total, rate


# --- what staff and nodes see ---------------------------------------------------------------


def timed(f: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) * 1000


def q(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100)[p - 1] if len(values) > 1 else values[0]


def ok(r: httpx.Response, *codes: int) -> httpx.Response:
    if r.status_code not in codes:
        raise SystemExit(f"{r.request.method} {r.request.url.path} -> {r.status_code} {r.text[:200]}")
    return r


def call_latencies(stack: Stack, n: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    with httpc.Client(base_url=stack.base, timeout=60) as c:
        ok(c.get("/api/tables", auth=(MANAGER, PASSWORD)), 200)  # the first Basic call verifies (argon2); later ones use the cache
        out["health (no auth)"] = [timed(lambda: ok(c.get("/api/health"), 200)) for _ in range(n)]
        out["Basic"] = [timed(lambda: ok(c.get("/api/tables", auth=(MANAGER, PASSWORD)), 200)) for _ in range(n)]
        bearer = {"Authorization": f"Bearer {stack.token}"}
        out["token"] = [timed(lambda: ok(c.get("/api/tables", headers=bearer), 200)) for _ in range(n)]
    with httpc.Client(base_url=stack.base, timeout=60) as browser:
        csrf = found(_CSRF, ok(browser.get("/login"), 200).text).group(1)
        ok(browser.post("/login", data={"username": MANAGER, "password": PASSWORD, "csrf_token": csrf, "next": "/"}), 303)
        out["cookie"] = [timed(lambda: ok(browser.get("/api/tables"), 200)) for _ in range(n)]
    return out


def session_ops(stack: Stack, rounds: int) -> tuple[list[float], list[float], Counter[str]]:
    starts: list[float] = []
    stops: list[float] = []
    codes: Counter[str] = Counter()
    bearer = {"Authorization": f"Bearer {stack.token}"}
    with httpc.Client(base_url=stack.base, timeout=60, headers=bearer) as c:
        for _ in range(rounds):
            t0 = time.perf_counter()
            r = c.post("/api/sessions", json={"table": TABLE})
            starts.append((time.perf_counter() - t0) * 1000)
            codes[f"start {r.status_code}"] += 1
            if r.status_code == 201:
                t0 = time.perf_counter()
                s = c.post(f"/api/sessions/{r.json()['id']}/stop")
                stops.append((time.perf_counter() - t0) * 1000)
                codes[f"stop {s.status_code}"] += 1
    return starts, stops, codes


def publish_to_stored(stack: Stack, n: int, gap_s: float = 0.15) -> list[float]:
    boot = f"bench-{uuid.uuid4().hex[:8]}"
    node = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=NODE)
    node.username_pw_set(NODE, f"pw-{NODE}")
    node.connect("127.0.0.1", stack.mqtt_port)
    node.loop_start()
    try:
        for seq in range(n):
            node.publish(contract.event_topic(NODE, "pocket"), pocket_event(NODE, seq, boot), qos=1).wait_for_publish(30)
            time.sleep(gap_s)
    finally:
        node.loop_stop()
        node.disconnect()
    engine = create_engine(f"sqlite:///{stack.db}")
    deadline = time.monotonic() + 60
    try:
        while True:
            with engine.connect() as c:
                rows = c.execute(text("select received_at, node_ts from events where boot = :b"), {"b": boot}).all()
            if len(rows) == n or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        engine.dispose()
    utc: Callable[[object], datetime] = lambda v: datetime.fromisoformat(str(v)).replace(tzinfo=UTC)  # noqa: E731
    return [(utc(r) - utc(t)).total_seconds() * 1000 for r, t in rows] + [float("inf")] * (n - len(rows))


def cold_logins(stack: Stack, users: list[str], password: str = PASSWORD) -> tuple[list[float], Counter[int]]:
    """A manager's Basic call with credentials the server has not verified lately: argon2 must run."""
    times: list[float] = []
    codes: Counter[int] = Counter()
    with httpc.Client(base_url=stack.base, timeout=60) as c:
        for user in users:
            t0 = time.perf_counter()
            codes[c.get("/api/tables", auth=(user, password)).status_code] += 1
            times.append((time.perf_counter() - t0) * 1000)
    return times, codes


def new_passwords(stack: Stack, users: list[str], password: str) -> None:
    """As a manager would set them: what the server verified for these users is no longer their password."""
    hashed = new_password(password)  # hashed before the transaction, as the hub does
    store = open_store(f"sqlite:///{stack.db}")
    with store.session() as s:
        for user in users:
            set_password(s, user, hashed, actor="bench")
    store.close()


# --- the stack ------------------------------------------------------------------------------


def start_stack(work: Path, per_kind: int) -> tuple[Stack, Mosquitto, subprocess.Popen[bytes]]:
    broker = Mosquitto(work / "mosquitto", users={NODE: f"pw-{NODE}"}).start()
    db = work / "lavos.db"
    http = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lavos_cli",
            "server",
            "--venue",
            str(VENUE),
            "--db",
            f"sqlite:///{db}",
            "--mqtt",
            f"mqtt://lavos-hub:hub-secret@127.0.0.1:{broker.port}",
            "--http",
            f"127.0.0.1:{http}",
            "--data-dir",
            str(work / "data"),
            "--log-level",
            "ERROR",
        ],
        cwd=REPO,
        env={**os.environ, "LAVOS_DATA_DIR": str(work / "data")},
        stdout=subprocess.DEVNULL,
        stderr=open(work / "server.log", "wb"),  # noqa: SIM115 - the child writes it for its whole life; ours closes when this process ends
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{http}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpc.get(f"{base}/api/health", timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"lavos server did not come up; see {work / 'server.log'}") from None
            time.sleep(0.2)
    store = open_store(f"sqlite:///{db}")  # the shipped argon2 costs, as `lavos user add` makes them
    cold = [f"cold-{i:02d}" for i in range(per_kind)]
    known = [f"known-{i:02d}" for i in range(per_kind)]
    hashed = new_password(PASSWORD)
    with store.session() as s:
        for name in [MANAGER, *cold, *known]:
            create_user(s, name, hashed, "manager", actor="bench")
        token = issue_token(s, MANAGER, "bench", actor="bench")
    store.close()
    stack = Stack(base, db, token, broker.port, cold, known)
    cold_logins(stack, known)  # their usual device
    return stack, broker, server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=100, help="calls per kind of credential for p50/p99")
    ap.add_argument("--rounds", type=int, default=10, help="session start/stop rounds and node events per scenario")
    ap.add_argument("--attackers", type=int, default=16)
    ap.add_argument("--warm-up", type=float, default=3, help="seconds of attack before measuring")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lavos-auth-"))
    cold_per_scenario = 3
    stack, broker, server = start_stack(work, cold_per_scenario * len(SCENARIOS))
    moved_on = "Nové-heslo-od-vedúceho-8"
    try:
        print(
            f"lavos server (SQLite) + Mosquitto; argon2id {_hash_params()}; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}"
        )
        calls = call_latencies(stack, args.calls)
        print(f"\nGET /api/tables, {args.calls} calls each, one keep-alive connection (target: Basic p50 < 10 ms)")
        for kind, values in calls.items():
            print(f"  {kind:<17} p50 {q(values, 50):7.1f} ms   p99 {q(values, 99):7.1f} ms")
        base_line: dict[str, float] = {}
        for i, (name, mode) in enumerate(SCENARIOS):
            again = stack.known_users[i * cold_per_scenario : (i + 1) * cold_per_scenario]
            new_passwords(stack, again, moved_on)
            attack = Attack(int(stack.base.rsplit(":", 1)[1]), mode, args.attackers).start(args.warm_up) if mode else None
            starts, stops, codes = session_ops(stack, args.rounds)
            stored = publish_to_stored(stack, args.rounds)
            cold, cold_codes = cold_logins(stack, stack.cold_users[i * cold_per_scenario : (i + 1) * cold_per_scenario])
            usual, usual_codes = cold_logins(stack, again, moved_on)
            figures = {
                "session start": statistics.median(starts),
                "session stop": statistics.median(stops) if stops else float("inf"),
                "publish -> stored": statistics.median(stored),
            }
            print(f"\n{name}" + (f" ({args.attackers} attackers)" if mode else ""))
            for what, value in figures.items():
                ratio = f"   x{value / base_line[what]:.2f} of no attack" if base_line else ""
                print(f"  {what:<18} median {value:8.1f} ms{ratio}   (target < 1000 ms)")
            print(f"  answers to staff: {dict(codes)}")
            print(
                f"  a manager's Basic login that must hash: from a new device median {statistics.median(cold):.0f} ms {dict(cold_codes)}; "
                f"from the usual one {statistics.median(usual):.0f} ms {dict(usual_codes)}"
            )
            if not base_line:
                base_line = figures
            if attack:
                counts, rate = attack.stop()
                print(f"  attackers: {rate:.0f} answers/s while staff were measured; all answers by status {dict(sorted(counts.items()))}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
        broker.stop()


def _hash_params() -> str:
    from broker.accounts.users import DEFAULT_HASHER as h

    return f"t={h.time_cost} m={h.memory_cost // 1024} MiB p={h.parallelism}"


if __name__ == "__main__":
    main()
