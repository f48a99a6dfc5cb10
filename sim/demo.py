"""The interim demo: a private Mosquitto, one simulated pool table node, and everything it says.

Runs pool-01 as a real EdgeNode on mock pins, a simulated player dropping balls, and a subscriber
(as the central service would be) printing every message; the "hub" switches the light on, then
off. Everything it starts, it stops: Ctrl-C or --seconds leaves no process behind.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
import uuid
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from rich.console import Console
from rich.markup import escape

from broker.mosquitto import HUB_USER, Mosquitto
from devices.contract import LightSet, encode, light_set_topic
from devices.kinds import Kind, default_pins
from devices.nodeconfig import MqttSettings, NodeConfig, OutboxSettings
from edge import EdgeNode
from sim.pins import timed_mock_factory
from sim.player import Player

TABLE = "pool-01"
HUB_PASSWORD = "hub-secret"


def demo_config(workdir: Path, port: int) -> NodeConfig:
    password_file = workdir / f"{TABLE}.password"
    password_file.write_text(f"pw-{TABLE}\n")
    return NodeConfig(
        table=TABLE,
        kind=Kind.POOL,
        pins=default_pins(Kind.POOL),
        mqtt=MqttSettings(host="127.0.0.1", port=port, password_file=password_file, reconnect_min_s=0.2, reconnect_max_s=2),
        outbox=OutboxSettings(path=workdir / "outbox.db"),
        telemetry_interval_s=5,
    )


class Printer:
    """Subscribes to everything under lavos/v1 as the central service, and prints it."""

    def __init__(self, port: int, console: Console) -> None:
        self.console = console
        self.ready = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"demo-hub-{uuid.uuid4().hex[:6]}")
        self.client.username_pw_set(HUB_USER, HUB_PASSWORD)
        self.client.on_connect = lambda c, *_: c.subscribe("lavos/v1/#", qos=1)
        self.client.on_subscribe = lambda *_: self.ready.set()
        self.client.on_message = self._print
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def _print(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        try:
            body = json.dumps(json.loads(msg.payload), ensure_ascii=False, separators=(",", ":"))
        except ValueError:
            body = repr(bytes(msg.payload))
        flag = " [dim](retained)[/]" if msg.retain else ""
        self.console.print(f"[bold cyan]{msg.topic}[/]{flag} {escape(body)}", highlight=False, soft_wrap=True)

    def light(self, on: bool) -> None:
        cmd = LightSet(on=on, cmd_id=str(uuid.uuid4()))
        self.console.print(f"[bold yellow]hub → {light_set_topic(TABLE)}[/] {escape(encode(cmd).decode())}", highlight=False, soft_wrap=True)
        self.client.publish(light_set_topic(TABLE), encode(cmd), qos=1, retain=False)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def run_demo(seconds: float | None = None, stop: threading.Event | None = None, console: Console | None = None) -> None:
    console = console or Console()
    stop = stop or threading.Event()
    with tempfile.TemporaryDirectory(prefix="lavos-demo-") as tmp:
        workdir = Path(tmp)
        broker = Mosquitto(workdir / "mosquitto", users={TABLE: f"pw-{TABLE}"}).start()
        parts: list = []
        try:
            console.print(f"[bold]Mosquitto on 127.0.0.1:{broker.port}[/]; table node {TABLE} on mock pins. Ctrl-C stops.")
            printer = Printer(broker.port, console)
            parts.append(printer)
            printer.ready.wait(5)
            factory = timed_mock_factory()
            node = EdgeNode(demo_config(workdir, broker.port), pin_factory=factory).start()
            parts.append(node)
            player = Player([factory.pin(p) for p in default_pins(Kind.POOL).pockets]).start()
            parts.append(player)
            script = [(2.0, lambda: printer.light(True)), (6.0, lambda: printer.light(False))]
            started = time.monotonic()
            while not stop.wait(0.1):
                elapsed = time.monotonic() - started
                while script and elapsed >= script[0][0]:
                    script.pop(0)[1]()
                if seconds is not None and elapsed >= seconds:
                    break
        except KeyboardInterrupt:
            pass
        finally:
            for part in reversed(parts):
                part.stop() if isinstance(part, Player) else part.close()
            broker.stop()
            console.print("[bold]demo stopped[/]")
