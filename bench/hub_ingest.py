"""How fast the central service applies events, next to a bare paho subscriber, in one run.

    .venv/bin/python -m bench.hub_ingest [--events 20000] [--db sqlite|postgresql]

Both consumers get the same QoS 1 stream through the same private Mosquitto, published by the
same paho publisher in a process of its own. The bare subscriber only counts; the service validates every message
against the contract, deduplicates it by (table, boot, seq), persists it, and queues a metrics
point (to a real VictoriaMetrics when installed). The figure that matters is the ratio, since
these machines are noisy: target >= 0.7.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from broker.db.engine import open_store
from broker.hub_link import MqttUrl
from broker.service import CentralService
from devices import contract
from broker.domain.venue import load_venue
from sim.mosquitto import Mosquitto

REPO = Path(__file__).resolve().parents[1]
TABLES = [f"pool-{i:02d}" for i in range(1, 11)]
PUB_USER = "lavos-hub-2"  # the publisher's login, beside the consumers' (lavos-hub, lavos-bench-hub-N)


def payloads(n: int, boot: str) -> list[tuple[str, bytes]]:
    ts = datetime.now(timezone.utc)
    out = []
    for i in range(n):
        table = TABLES[i % len(TABLES)]
        ev = contract.PocketEvent(v=1, table=table, type="pocket", boot=boot, seq=i, ts=ts, ts_synced=True,
                                  data=contract.PocketData(pocket=i % 6, pulse_ms=21.5))
        out.append((contract.event_topic(table, "pocket"), contract.encode(ev)))
    return out


def publish_all(port: int, messages: list[tuple[str, bytes]]) -> None:
    """Publish from another process, as the tables do: the publisher must not share the
    consumer's interpreter lock, or the figure measures the bench, not the consumer."""
    proc = multiprocessing.get_context("spawn").Process(target=_publish, args=(port, messages))
    proc.start()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"publisher failed with exit code {proc.exitcode}")


def _publish(port: int, messages: list[tuple[str, bytes]]) -> None:
    # Its own login: the broker makes the client id the login, and the consumer holds another.
    pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=PUB_USER)
    pub.username_pw_set(PUB_USER, "hub-secret")
    pub.max_inflight_messages_set(1000)
    pub.max_queued_messages_set(0)
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    infos = [pub.publish(t, p, qos=1) for t, p in messages]
    for info in infos:
        info.wait_for_publish(60)
    pub.loop_stop()
    pub.disconnect()


def bare_subscriber(port: int, messages) -> float:
    got = threading.Event()
    count = 0
    n = len(messages)

    def on_message(c, u, m):
        nonlocal count
        count += 1
        if count == n:
            got.set()

    sub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-bare", clean_session=True)
    sub.username_pw_set("lavos-hub", "hub-secret")
    sub.on_message = on_message
    subscribed = threading.Event()
    sub.on_subscribe = lambda *a: subscribed.set()
    sub.on_connect = lambda c, u, f, rc, p=None: c.subscribe([(f, 1) for f in contract.NODE_OUTPUT_FILTERS])
    sub.connect("127.0.0.1", port)
    sub.loop_start()
    subscribed.wait(10)
    t0 = time.perf_counter()
    publish_all(port, messages)
    if not got.wait(300):
        raise SystemExit(f"bare subscriber got only {count}/{n}")
    elapsed = time.perf_counter() - t0
    sub.loop_stop()
    sub.disconnect()
    return n / elapsed


def service_rate(port: int, messages, db_url: str, metrics, login: str) -> tuple[float, dict]:
    venue = load_venue(REPO / "deploy" / "venues" / "lavos.toml")
    store = open_store(db_url)
    svc = CentralService(venue, store, mqtt_url=MqttUrl("127.0.0.1", port, login, "hub-secret", False),
                         metrics=metrics, client_id=login)
    svc.start()
    while not svc.link.stats.connected:
        time.sleep(0.01)
    time.sleep(0.2)
    n = len(messages)
    t0 = time.perf_counter()
    publish_all(port, messages)
    while svc.handlers.applied < n:
        if time.perf_counter() - t0 > 300:
            raise SystemExit(f"service applied only {svc.handlers.applied - base}/{n}")
        time.sleep(0.002)
    elapsed = time.perf_counter() - t0
    info = {"batches": svc.ingest.batches, "rejected": svc.handlers.rejected, "duplicates": svc.handlers.duplicates}
    svc.close()
    store.close()
    return n / elapsed, info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    work = Path(tempfile.mkdtemp(prefix="lavos-bench-"))
    broker = Mosquitto(work / "mosquitto").start()
    broker.hub_login(PUB_USER)
    metrics, vm = None, None
    try:
        if Path("/usr/bin/victoria-metrics").exists():
            from broker.metrics import MetricsWriter
            from tests.support.victoria import VictoriaMetrics

            vm = VictoriaMetrics(work / "vm").start()
            metrics = MetricsWriter(vm.url, "token", "lavos", "lavos", work / "spool")
        bare, svc = [], []
        for r in range(args.rounds):
            bare.append(bare_subscriber(broker.port, payloads(args.events, f"bare-{r}")))
            # A fresh login (= client id) per round: a persistent session left by the previous round
            # would hand this one the bare subscriber's messages as extra (and easier) work.
            login, _ = broker.hub_login(f"lavos-bench-hub-{r}")
            rate, info = service_rate(broker.port, payloads(args.events, f"svc-{r}"), f"sqlite:///{work / 'hub.db'}",
                                      metrics, login)
            svc.append(rate)
        b, s = max(bare), max(svc)
        print(f"events per round        {args.events} (QoS 1, {len(TABLES)} tables, best of {args.rounds})")
        print(f"bare paho subscriber    {b:8.0f} msg/s")
        print(f"central service applied {s:8.0f} events/s  (validated, deduplicated, stored in SQLite, metrics queued{' to VictoriaMetrics' if vm else ''})")
        print(f"ratio                   {s / b:8.2f}  (target >= 0.70)")
        print(f"last round: {info}")
    finally:
        if metrics:
            metrics.close()
        if vm:
            vm.stop()
        broker.stop()


if __name__ == "__main__":
    main()
