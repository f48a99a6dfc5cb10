"""Issue 6, security on the broker: the shipped password file + ACL, on a real Mosquitto."""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from tests.support.mqtt import Collector

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto


def connect_result(port: int, username: str | None, password: str | None) -> str:
    done = threading.Event()
    result: list[str] = []
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{username}")
    if username:
        c.username_pw_set(username, password)

    def on_connect(client: Any, userdata: Any, flags: Any, rc: Any, props: Any = None) -> None:
        result.append(str(rc))
        done.set()

    c.on_connect = on_connect
    c.connect("127.0.0.1", port)
    c.loop_start()
    done.wait(5)
    c.loop_stop()
    c.disconnect()
    return result[0] if result else "no answer"


def test_anonymous_and_wrong_passwords_are_refused_and_logged(mosquitto: Mosquitto) -> None:
    assert connect_result(mosquitto.port, None, None) == "Not authorized"
    assert connect_result(mosquitto.port, "pool-01", "wrong") == "Not authorized"
    assert connect_result(mosquitto.port, "lavos-hub", "pw-pool-01") == "Not authorized"
    assert connect_result(mosquitto.port, "pool-01", "pw-pool-01") == "Success"
    time.sleep(0.2)
    log = mosquitto.log_text()
    assert "not authorised" in log.lower() or "not authorized" in log.lower()


def test_a_node_cannot_read_the_central_services_or_other_tables_traffic(mosquitto: Mosquitto) -> None:
    hub = Collector(mosquitto.port)
    spy = Collector(
        mosquitto.port,
        username="pool-01",
        password="pw-pool-01",
        topics=("lavos/v1/#", "lavos/v1/hub/status", "lavos/v1/table/pool-02/light/set"),
    )
    hub.publish("lavos/v1/table/pool-02/light/set", json.dumps({"on": True, "cmd_id": "x"}))
    hub.publish("lavos/v1/table/pool-02/session", b"null", retain=True)
    hub.publish("lavos/v1/hub/status", json.dumps({"state": "online"}), retain=True)
    hub.publish("lavos/v1/table/pool-01/light/set", json.dumps({"on": True, "cmd_id": "own"}))
    own = spy.wait_for(lambda m: m.topic == "lavos/v1/table/pool-01/light/set")
    assert json.loads(own.payload)["cmd_id"] == "own"
    time.sleep(0.3)
    assert [m.topic for m in spy.all] == ["lavos/v1/table/pool-01/light/set"]
    hub.close()
    spy.close()


@pytest.mark.parametrize(
    "topic",
    [
        "lavos/v1/table/pool-02/event/pocket",
        "lavos/v1/table/pool-01/light/set",
        "lavos/v1/table/pool-01/session",
        "lavos/v1/hub/status",
    ],
)
def test_a_node_cannot_forge_commands_sessions_or_other_tables_events(mosquitto: Mosquitto, topic: Any) -> None:
    hub = Collector(mosquitto.port, topics=("lavos/v1/#",))
    forger = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="forger")
    forger.username_pw_set("pool-01", "pw-pool-01")
    forger.connect("127.0.0.1", mosquitto.port)
    forger.loop_start()
    time.sleep(0.2)
    forger.publish(topic, b'{"on": true, "cmd_id": "forged"}', qos=0)
    time.sleep(0.4)
    assert not hub.matching(lambda m: m.payload == b'{"on": true, "cmd_id": "forged"}')
    forger.loop_stop()
    forger.disconnect()
    hub.close()
