"""light/set and the local safety rules, through a real Mosquitto with the ACL, on mock pins."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from devices.contract import light_set_topic
from edge import EdgeNode
from sim.mosquitto import Mosquitto
from sim.pins import timed_mock_factory
from tests.edge.nodes import events, light_states, node_config
from tests.support.hub import link_of, outbox_of
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from gpiozero.pins.mock import MockFactory

    import edge.agent

    class _NodeWithFactory(edge.agent.EdgeNode):
        """The `node` fixture's node: its pin factory beside it (vars(n)["factory"])."""

        factory: MockFactory


SET = light_set_topic("pool-01")


def relay_on(factory: Any, config: Any) -> bool:
    """What the relay coil sees: the physical pin level, through the board's polarity."""
    result: bool = factory.pin(config.pins.light).state == config.pins.light_active_high
    return result


@pytest.fixture
def hub(mosquitto: Mosquitto) -> Iterator[Collector]:
    c = Collector(mosquitto.port)
    yield c
    c.close()


@pytest.fixture
def node(mosquitto: Mosquitto, tmp_path: Path) -> Iterator[edge.agent.EdgeNode]:
    factory = timed_mock_factory()
    config = node_config(tmp_path, mosquitto.port)
    n = EdgeNode(config, pin_factory=factory).start()
    assert link_of(n).wait_connected(10)
    vars(n)["factory"] = factory  # the tests drive the node's pins through it
    yield n
    n.close()


def command(hub: Any, on: bool, **extra: Any) -> str:
    """Send a light/set with a fresh cmd_id (light/state is retained: old ids linger on the broker)."""
    cmd_id = uuid.uuid4().hex
    hub.publish(SET, json.dumps({"on": on, "cmd_id": cmd_id, **extra}))
    return cmd_id


def state_for(hub: Any, cmd_id: str, **match: Any) -> dict[str, Any]:
    def ok(m: Any) -> Any:
        if not m.topic.endswith("pool-01/light/state"):
            return False
        body = json.loads(m.payload)
        return body.get("cmd_id") == cmd_id and all(body.get(k) == v for k, v in match.items())

    result: dict[str, Any] = json.loads(hub.wait_for(ok, timeout=10).payload)
    return result


def test_light_set_switches_the_relay_and_answers_on_retained_light_state(hub: Collector, node: _NodeWithFactory) -> None:
    factory, config = node.factory, node.config
    assert not relay_on(factory, config)
    c_1 = command(hub, True)
    assert state_for(hub, c_1) == {"on": True, "blink": False, "cause": "command", "cmd_id": c_1}
    assert relay_on(factory, config)
    c_2 = command(hub, False)
    state_for(hub, c_2, on=False)
    assert not relay_on(factory, config)
    # retained: a late subscriber learns the current state at once
    late = Collector(hub.client._port, topics=("lavos/v1/table/pool-01/light/state",))
    got = late.wait_for(lambda m: True)
    assert got.retain and json.loads(got.payload)["cmd_id"] == c_2
    late.close()


def test_blink_for_n_seconds_then_settle(hub: Collector, node: _NodeWithFactory) -> None:
    factory, config = node.factory, node.config
    b_1 = command(hub, True, blink_s=1)
    assert state_for(hub, b_1, blink=True)["on"] is True
    levels = set()
    deadline = time.monotonic() + 0.9
    while time.monotonic() < deadline:
        levels.add(relay_on(factory, config))
        time.sleep(0.01)
    assert levels == {True, False}, "it blinks"
    assert state_for(hub, b_1, blink=False)["on"] is True
    assert relay_on(factory, config)
    time.sleep(0.6)
    assert relay_on(factory, config), "settled: no more blinking"


GARBAGE = [
    pytest.param(b"{", "not JSON", id="truncated-json"),
    pytest.param(b"\xff\xfe\x00", "not UTF-8", id="not-utf8"),
    pytest.param(b"[]", "must be a JSON object", id="array"),
    pytest.param(b"null", "must be a JSON object", id="null"),
    pytest.param(b'{"on": "yes", "cmd_id": "g"}', "on", id="wrong-type"),
    pytest.param(b'{"on": true}', "cmd_id", id="missing-cmd-id"),
    pytest.param(b'{"on": true, "cmd_id": "g", "colour": "red"}', "colour", id="unknown-field"),
    pytest.param(b'{"on": true, "blink_s": 0, "cmd_id": "g"}', "blink_s", id="blink-zero"),
    pytest.param(b'{"on": true, "blink_s": 1e9, "cmd_id": "g"}', "blink_s", id="blink-huge"),
    pytest.param(b'{"on": true, "cmd_id": "' + b"x" * 5000 + b'"}', "over the 4096-byte limit", id="oversized"),
    pytest.param(b"", "not JSON", id="empty"),
]


@pytest.mark.parametrize("payload, why", GARBAGE)
def test_garbage_light_set_is_counted_logged_and_ignored(
    hub: Collector, node: _NodeWithFactory, caplog: pytest.LogCaptureFixture, payload: Any, why: Any
) -> None:
    factory, config = node.factory, node.config
    caplog.set_level(logging.WARNING, logger="edge")
    before = relay_on(factory, config)
    hub.publish(SET, payload)
    wait_until(lambda: node.invalid_commands == 1, timeout=10, what="the command to be refused")
    assert relay_on(factory, config) == before
    lines = [r.getMessage() for r in caplog.records if "invalid light/set" in r.getMessage()]
    assert len(lines) == 1 and why in lines[0], lines
    # still running, still obeying
    after = command(hub, not before)
    state_for(hub, after)
    assert relay_on(factory, config) == (not before)


def test_a_retained_light_set_is_refused(mosquitto: Mosquitto, hub: Collector, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="edge")
    hub.publish(SET, json.dumps({"on": True, "cmd_id": "stale"}), retain=True)
    factory = timed_mock_factory()
    config = node_config(tmp_path, mosquitto.port)
    try:
        with EdgeNode(config, pin_factory=factory) as n:
            wait_until(lambda: n.invalid_commands == 1, timeout=10, what="the retained command to be refused")
            assert not relay_on(factory, config)
            assert any("retained" in r.getMessage() for r in caplog.records)
    finally:
        hub.publish(SET, b"", retain=True)  # clears it for the other tests


def test_boot_state_birth_and_telemetry(mosquitto: Mosquitto, hub: Collector, tmp_path: Path) -> None:
    factory = timed_mock_factory()
    config = node_config(tmp_path, mosquitto.port, light={"boot_state": "on"}, telemetry_interval_s=0.2)
    with EdgeNode(config, pin_factory=factory) as n:
        assert relay_on(factory, config)
        birth = hub.wait_for(lambda m: m.topic.endswith("pool-01/status") and json.loads(m.payload).get("boot") == n.boot, timeout=10)
        assert json.loads(birth.payload)["state"] == "online"
        # earlier nodes' retained states linger: look for this one's
        hub.wait_for(
            lambda m: (
                m.topic.endswith("pool-01/light/state")
                and json.loads(m.payload) == {"on": True, "blink": False, "cause": "boot", "cmd_id": None}
            ),
            timeout=10,
        )
        tele = json.loads(hub.wait_for(lambda m: m.topic.endswith("pool-01/telemetry"), timeout=10).payload)
        assert {"uptime_s", "cpu_temp_c", "outbox", "reconnects", "invalid_commands", "dropped"} <= tele.keys()
    late = Collector(mosquitto.port, topics=("lavos/v1/table/pool-01/status",))
    bye = late.wait_for(lambda m: True)
    late.close()
    assert bye.retain and json.loads(bye.payload)["state"] == "offline" and json.loads(bye.payload)["boot"] == n.boot


def test_mqtt5_node_obeys_commands_and_reports_pockets(mosquitto: Mosquitto, hub: Collector, tmp_path: Path) -> None:
    from sim.pins import PulseScript, drive_pulses

    factory = timed_mock_factory()
    config = node_config(tmp_path, mosquitto.port, mqtt={"protocol": "5"})
    with EdgeNode(config, pin_factory=factory) as n:
        assert link_of(n).wait_connected(10)
        v5 = command(hub, True)
        state_for(hub, v5)
        assert relay_on(factory, config)
        drive_pulses(factory.pin(config.pins.pockets[3]), 3, PulseScript(chatter_edges=1))
        wait_until(lambda: len(events(hub)) >= 3, what="3 events over MQTT 5")
        wait_until(lambda: outbox_of(n).depth == 0, what="acks over MQTT 5")
    assert [e.data.pocket for e in events(hub)] == [3, 3, 3]


def press(factory: Any, pin: int) -> None:
    factory.pin(pin).drive_low()
    factory.pin(pin).drive_high()


def test_broker_loss_never_switches_the_light_and_the_button_works_offline(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "mosquitto", users={"pool-01": "pw-pool-01"}).start()
    hub = Collector(broker.port)
    factory = timed_mock_factory()
    config = node_config(tmp_path, broker.port)
    try:
        with EdgeNode(config, pin_factory=factory) as n:
            assert link_of(n).wait_connected(10)
            before = command(hub, True)
            state_for(hub, before)
            hub.close()
            broker.stop()
            wait_until(lambda: not link_of(n).connected, timeout=30, what="the node to notice the broker is gone")
            time.sleep(0.5)  # a few reconnect attempts
            assert relay_on(factory, config), "losing the broker must not switch the light"

            assert config.pins.button is not None
            press(factory, config.pins.button)
            assert not relay_on(factory, config), "the button works without the network"
            assert outbox_of(n).depth == 1  # the button event waits on disk

            broker.start()
            hub = Collector(broker.port)
            wait_until(lambda: link_of(n).connected and outbox_of(n).depth == 0, timeout=30, what="reconnect and replay")
            assert [e.data.button for e in events(hub, event_type="button")] == ["light"]
            wait_until(lambda: any(s["cause"] == "button" and s["on"] is False for s in light_states(hub)), what="light/state cause button")
            assert not relay_on(factory, config)
            assert link_of(n).reconnects >= 1
    finally:
        hub.close()
        broker.stop()
