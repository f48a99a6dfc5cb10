"""Load: many tables at 1 event/s each against one hub through Mosquitto.

    .venv/bin/python -m bench.load [--tables 1000] [--seconds 60]

The hub runs as its own process (`lavos server`, SQLite, no metrics) on a venue
file of N generated pool tables; a publisher process sends one pocket event per table per
second, spread evenly, each stamped with its publish time. Printed: events sent and applied,
applied/s, p50/p99/max from publish to stored (the hub stamps `received_at` in the batch
that commits the event, on the same clock), and the hub's RSS at start and end.
Targets: all applied, p99 under 100 ms, memory flat.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import create_engine, text

from devices import contract
from sim.mosquitto import Mosquitto, free_port

REPO = Path(__file__).resolve().parents[1]
PUB_USER = "lavos-hub-2"  # the publisher's login; lavos server holds lavos-hub


def venue_file(path: Path, tables: int) -> list[str]:
    ids = [f"load-{i:04d}" for i in range(tables)]
    body = [
        '[venue]\nid = "load"\nname = "Load test hall"\n\n[hours]\ndefault = { open = "00:00", close = "00:00" }\n',
        '[[rooms]]\nid = "main"\nname = "Sála"\n',
    ]
    body += [f'[[tables]]\nid = "{t}"\nkind = "pool"\nname = "{t}"\nroom = "main"\n' for t in ids]
    path.write_text("\n".join(body))
    return ids


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return float("nan")


def publisher(port: int, tables: list[str], seconds: float, out: multiprocessing.Queue[tuple[int, float]]) -> None:
    # Its own login: the broker makes the client id the login, and lavos server holds lavos-hub.
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=PUB_USER)
    client.username_pw_set(PUB_USER, "hub-secret")
    client.max_inflight_messages_set(1000)
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", port)
    client.loop_start()
    n = len(tables)
    start = time.monotonic()
    sent = 0
    infos = []
    for second in range(int(seconds)):
        for i, table in enumerate(tables):
            due = start + second + i / n  # one event per table per second, evenly spread
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            ev = contract.PocketEvent(
                v=1,
                table=table,
                type="pocket",
                boot="load",
                seq=second,
                ts=datetime.now(UTC),
                ts_synced=True,
                data=contract.PocketData(pocket=second % 6, pulse_ms=20.0),
            )
            infos.append(client.publish(contract.event_topic(table, "pocket"), contract.encode(ev), qos=1))
            sent += 1
    for info in infos:
        info.wait_for_publish(60)
    client.loop_stop()
    client.disconnect()
    out.put((sent, time.monotonic() - start))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=60)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lavos-load-"))
    tables = venue_file(work / "venue.toml", args.tables)
    broker = Mosquitto(work / "mosquitto").start()
    broker.hub_login(PUB_USER)
    db = work / "hub.db"
    http = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lavos_cli",
            "server",
            "--venue",
            str(work / "venue.toml"),
            "--db",
            f"sqlite:///{db}",
            "--mqtt",
            f"mqtt://lavos-hub:hub-secret@127.0.0.1:{broker.port}",
            "--http",
            f"127.0.0.1:{http}",
            "--log-level",
            "ERROR",
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=open(work / "server.log", "wb"),  # noqa: SIM115 - the child writes it for its whole life; ours closes when this process ends
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{http}/api/health", timeout=1)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit(f"lavos server did not come up; see {work / 'server.log'}") from None
                time.sleep(0.2)
        time.sleep(1)
        rss_start = rss_mb(server.pid)
        out: multiprocessing.Queue[tuple[int, float]] = multiprocessing.get_context("spawn").Queue()
        pub = multiprocessing.get_context("spawn").Process(target=publisher, args=(broker.port, tables, args.seconds, out))
        t0 = time.monotonic()
        pub.start()
        sent, _pub_s = out.get()
        pub.join()
        engine = create_engine(f"sqlite:///{db}")

        def applied() -> int:
            with engine.connect() as c:
                count: int = c.execute(text("select count(*) from events where boot = 'load'")).scalar_one()
                return count

        deadline = time.monotonic() + 120
        while applied() < sent and time.monotonic() < deadline:
            time.sleep(0.5)
        elapsed = time.monotonic() - t0
        rss_end = rss_mb(server.pid)
        with engine.connect() as c:
            rows = c.execute(text("select received_at, node_ts from events where boot = 'load'")).all()
        lat = sorted(
            (datetime.fromisoformat(str(r)).replace(tzinfo=UTC) - datetime.fromisoformat(str(n)).replace(tzinfo=UTC)).total_seconds() * 1000
            for r, n in rows
        )
        q = statistics.quantiles(lat, n=100) if len(lat) > 1 else [0] * 99
        print(f"tables {args.tables} x 1 event/s for {args.seconds} s through Mosquitto, hub as its own process (SQLite)")
        print(f"sent {sent}  applied {len(lat)}  lost {sent - len(lat)}  ({len(lat) / elapsed:.0f} applied/s over {elapsed:.1f} s)")
        print(f"publish -> stored  p50 {q[49]:.1f} ms  p99 {q[98]:.1f} ms  max {lat[-1]:.1f} ms  (target p99 < 100 ms)")
        print(f"hub RSS  start {rss_start:.1f} MB  end {rss_end:.1f} MB  ({(rss_end / rss_start - 1) * 100:+.1f} %)")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
        broker.stop()


if __name__ == "__main__":
    main()
