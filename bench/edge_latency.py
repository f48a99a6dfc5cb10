"""Table node latency and memory, through a private Mosquitto on loopback.

    .venv/bin/python bench/edge_latency.py [--samples 300]

Prints p50/p99 of
  * light/set published by the hub -> relay pin switched (the MockPin's own change time);
  * pocket pulse released on the pin -> event received by a subscriber (this includes the
    pulse filter's 5 ms merge gap: a drop cannot be known to be over sooner);
  * a bare paho QoS 1 publish -> receive through the same broker, as the machine's reference;
and the resident memory of the agent run as its own process (`lavos edge`, mock pins).
Targets: p99 < 20 ms for both paths, RSS < 40 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.mosquitto import HUB_USER, Mosquitto  # noqa: E402

PUB_USER = "lavos-hub-2"
from devices.contract import event_topic, light_set_topic, status_topic  # noqa: E402
from devices.nodeconfig import dump_node_config  # noqa: E402
from edge import EdgeNode  # noqa: E402
from sim.demo import TABLE, demo_config  # noqa: E402
from sim.pins import timed_mock_factory  # noqa: E402
from tests.support.hub import link_of  # noqa: E402


class Hub:
    """A subscriber that timestamps every message it receives."""

    def __init__(self, port: int, topic: str) -> None:
        self.received: dict[str, float] = {}
        self.cond = threading.Condition()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-{uuid.uuid4().hex[:6]}")
        self.client.username_pw_set(HUB_USER, "hub-secret")
        ready = threading.Event()
        self.client.on_connect = lambda c, *_: c.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *_: ready.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        ready.wait(5)

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        now = time.monotonic()
        key = msg.payload.decode(errors="replace")
        with self.cond:
            self.received[key] = now
            self.cond.notify_all()

    def wait(self, predicate: Callable[[str], bool], timeout: float = 5.0) -> float | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for key, at in self.received.items():
                    if predicate(key):
                        del self.received[key]
                        return at
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q / 100 * (len(values) - 1)))]


def report(name: str, ms: list[float]) -> None:
    print(f"  {name:<44} n={len(ms):4d}  p50 {pct(ms, 50):6.2f} ms  p99 {pct(ms, 99):6.2f} ms  max {max(ms):6.2f} ms")


def bench_baseline(port: int, samples: int) -> list[float]:
    topic = "lavos/v1/table/bench/baseline"
    hub = Hub(port, topic)
    # A login of its own: the broker makes the client id the login, and Hub above holds lavos-hub.
    pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=PUB_USER)
    pub.username_pw_set(PUB_USER, "hub-secret")
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    out = []
    for i in range(samples):
        t0 = time.monotonic()
        pub.publish(topic, str(i), qos=1)
        at = hub.wait(lambda k: k == str(i))
        if at is not None:
            out.append((at - t0) * 1000)
        time.sleep(0.005)
    pub.loop_stop()
    pub.disconnect()
    hub.close()
    return out


def bench_light(node: EdgeNode, factory: Any, port: int, samples: int) -> list[float]:
    hub = Hub(port, "lavos/v1/table/none")
    pin = factory.pin(node.config.pins.light)
    on_level = node.config.pins.light_active_high
    out = []
    for i in range(samples):
        want_on = i % 2 == 0
        t0 = time.monotonic()
        hub.client.publish(light_set_topic(TABLE), json.dumps({"on": want_on, "cmd_id": f"b{i}"}), qos=1)
        deadline = t0 + 5
        while (pin.state == on_level) != want_on and time.monotonic() < deadline:
            time.sleep(0.0002)
        # the pin's own record of when it switched, not when we noticed
        out.append((pin._last_change - t0) * 1000)
        time.sleep(0.005)
    hub.close()
    return out


def bench_pocket(node: EdgeNode, factory: Any, port: int, samples: int) -> list[float]:
    hub = Hub(port, event_topic(TABLE, "pocket"))
    pin = factory.pin(node.config.pins.pockets[0])
    out = []
    for _i in range(samples):
        pin.drive_at(time.monotonic(), high=False)  # beam broken
        time.sleep(0.015)
        released = time.monotonic()
        pin.drive_at(released, high=True)
        at = hub.wait(lambda k: True)
        if at is not None:
            out.append((at - released) * 1000)
        time.sleep(0.01)
    hub.close()
    return out


def agent_rss_mb(workdir: Path, port: int, commands: int = 300) -> tuple[float, float]:
    """Start the agent (`python -m edge`, as systemd runs it) as its own process, exercise it, read VmRSS / VmHWM."""
    cfg_dir = workdir / "proc"
    cfg_dir.mkdir()
    config = workdir / "node.toml"
    config.write_text(dump_node_config(demo_config(cfg_dir, port)))
    hub = Hub(port, status_topic(TABLE))
    proc = subprocess.Popen(
        [sys.executable, "-m", "edge", "--config", str(config), "--log-level", "WARNING"],
        cwd=ROOT,
        env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"},
    )
    try:
        hub.wait(lambda k: '"online"' in k, timeout=15)
        for i in range(commands):
            hub.client.publish(light_set_topic(TABLE), json.dumps({"on": i % 2 == 0, "cmd_id": f"r{i}"}), qos=1)
            time.sleep(0.002)
        time.sleep(1.0)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        fields = {line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith(("VmRSS", "VmHWM"))}
        return int(fields["VmRSS"]) / 1024, int(fields["VmHWM"]) / 1024
    finally:
        proc.terminate()
        proc.wait(15)
        hub.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lavos-bench-") as tmp:
        workdir = Path(tmp)
        broker = Mosquitto(workdir / "mosquitto", users={TABLE: f"pw-{TABLE}"}).start()
        broker.hub_login(PUB_USER)
        try:
            print(f"Mosquitto on 127.0.0.1:{broker.port}, {os.cpu_count()} CPUs, {args.samples} samples each")
            report("baseline: bare paho QoS1 publish -> receive", bench_baseline(broker.port, args.samples))
            factory = timed_mock_factory()
            with EdgeNode(demo_config(workdir, broker.port), pin_factory=factory) as node:
                link_of(node).wait_connected(10)
                report("light/set published -> relay pin switched", bench_light(node, factory, broker.port, args.samples))
                report("pocket pulse released -> event received", bench_pocket(node, factory, broker.port, args.samples))
            rss, hwm = agent_rss_mb(workdir, broker.port)
            print(f"  agent process (python -m edge, mock pins): RSS {rss:.1f} MB, peak {hwm:.1f} MB")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
