"""Must-show 3: the shipped ACL confines a node; pool-01 cannot get a message onto pool-02's topics."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from devices.contract import event_topic, light_set_topic, light_state_topic, status_topic, telemetry_topic
from edge import EdgeNode
from sim.pins import PulseScript, drive_pulses, timed_mock_factory
from tests.edge.nodes import events, node_config
from tests.support.hub import light_of, link_of
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


VICTIM = "pool-02"
FORBIDDEN = [
    status_topic(VICTIM),
    event_topic(VICTIM, "pocket"),
    light_state_topic(VICTIM),
    telemetry_topic(VICTIM),
    light_set_topic(VICTIM),
]


def intruder_publish(port: int, topic: str, protocol: MQTTProtocolVersion) -> None:
    """Log in as pool-01 and publish on `topic` (Mosquitto 2.0 may drop us for it: that is fine)."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="pool-01", protocol=protocol)
    c.username_pw_set("pool-01", "pw-pool-01")
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        info = c.publish(topic, json.dumps({"on": True, "cmd_id": "evil"}), qos=1, retain=True)
        with contextlib.suppress(RuntimeError, ValueError):
            info.wait_for_publish(2)
    finally:
        c.loop_stop()
        c.disconnect()


@pytest.mark.parametrize("protocol", [mqtt.MQTTv311, mqtt.MQTTv5], ids=["mqtt311", "mqtt5"])
def test_pool_01_cannot_reach_pool_02(mosquitto: Mosquitto, tmp_path: Path, protocol: Any) -> None:
    hub = Collector(mosquitto.port)
    factory = timed_mock_factory()
    victim_cfg = node_config(tmp_path, mosquitto.port, table=VICTIM)
    with EdgeNode(victim_cfg, pin_factory=factory) as victim:
        assert link_of(victim).wait_connected(10)
        for topic in FORBIDDEN:
            intruder_publish(mosquitto.port, topic, protocol)
        # the honest path still works, so silence below is the ACL, not a dead broker
        honest = Collector(mosquitto.port, username="pool-01", password="pw-pool-01", topics=(light_set_topic("pool-01"),))
        honest.publish(telemetry_topic("pool-01"), json.dumps({"uptime_s": 1, "outbox": 0}))
        hub.wait_for(lambda m: m.topic == telemetry_topic("pool-01"))
        time.sleep(0.3)
        assert victim.invalid_commands == 0
        assert not light_of(victim).on, "pool-02's light was switched by pool-01"
        honest.close()
    assert not hub.matching(lambda m: m.topic in FORBIDDEN and b"evil" in m.payload)
    late = Collector(mosquitto.port, topics=(f"lavos/v1/table/{VICTIM}/#",))
    time.sleep(0.3)
    assert not late.matching(lambda m: b"evil" in m.payload), "nothing of pool-01's was retained on pool-02"
    late.close()
    hub.close()


def test_a_node_only_hears_its_own_commands(mosquitto: Mosquitto, tmp_path: Path) -> None:
    hub = Collector(mosquitto.port)
    f1, f2 = timed_mock_factory(), timed_mock_factory()
    with (
        EdgeNode(node_config(tmp_path, mosquitto.port), pin_factory=f1) as n1,
        EdgeNode(node_config(tmp_path, mosquitto.port, table=VICTIM), pin_factory=f2) as n2,
    ):
        assert link_of(n1).wait_connected(10) and link_of(n2).wait_connected(10)
        hub.publish(light_set_topic(VICTIM), json.dumps({"on": True, "cmd_id": uuid.uuid4().hex}))
        wait_until(lambda: light_of(n2).on, what="pool-02 to obey")
        assert not light_of(n1).on
        drive_pulses(f2.pin(n2.config.pins.pockets[0]), 1, PulseScript())
        wait_until(lambda: events(hub, table=VICTIM), what="pool-02's event")
        assert not events(hub, table="pool-01")
    hub.close()
