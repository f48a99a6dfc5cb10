"""The demo's MQTT broker: Mosquitto when it is installed, else iotcore embedded.

Mosquitto is what a club runs, with our password file and ACL, so the demo shows the real
thing when it can. Without it, iotcore (rumqttd, Rust, a pip wheel) gives a zero-setup demo.
Measured here against amqtt, the other pure-pip candidate: both start in ~0.15 s and keep QoS 1,
retained messages and the will of a dropped client, but iotcore moved 2,000 QoS 1 messages at
~9,000/s (amqtt ~2,200/s, about Mosquitto's 0.25 as ARCHITECTURE.md found) and logs nothing
unless asked. Neither checks passwords or the ACL in this setup: a demo on loopback needs neither.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.adapters.hub_link import MqttUrl
from sim.mosquitto import HUB_PASSWORD, HUB_USER, Mosquitto, free_port

NO_BROKER = (
    "no MQTT broker for the demo: install Mosquitto (`apt-get install mosquitto mosquitto-clients`, "
    "./run demo does it for you) or the embedded one (`.venv/bin/pip install iotcore`)"
)


def node_password(table: str) -> str:
    return f"pw-{table}"


@dataclass
class DemoBroker:
    name: str
    port: int
    _handle: Any

    @property
    def hub_url(self) -> MqttUrl:
        return MqttUrl("127.0.0.1", self.port, HUB_USER, HUB_PASSWORD, False)

    def stop(self) -> None:
        self._handle.stop()


def start_broker(workdir: Path, tables: list[str], *, prefer: str = "auto") -> DemoBroker:
    """`prefer`: "auto" (Mosquitto if installed), "mosquitto" or "embedded"."""
    if prefer in ("auto", "mosquitto") and shutil.which("mosquitto") and shutil.which("mosquitto_passwd"):
        m = Mosquitto(workdir / "mosquitto", users={t: node_password(t) for t in tables}).start()
        return DemoBroker("Mosquitto", m.port, m)
    if prefer == "mosquitto":
        raise RuntimeError("mosquitto is not installed: `apt-get install mosquitto mosquitto-clients`")
    try:
        from iotcore import Broker
    except ImportError:
        raise RuntimeError(NO_BROKER) from None
    port = free_port()
    embedded = Broker(port=port, listen="127.0.0.1").start()
    return DemoBroker("iotcore (embedded)", port, embedded)
