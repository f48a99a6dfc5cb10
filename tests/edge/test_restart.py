"""Must-show 2: broker down, 200 drops, agent SIGKILLed, both restarted: all 200 arrive, in order.

The agent runs as a real process (tests/edge/agent_proc.py) so SIGKILL is a real kill -9.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from devices.nodeconfig import dump_node_config
from sim.mosquitto import Mosquitto
from tests.edge.nodes import events, node_config
from tests.support.driven import AgentProcess
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.slow
def test_events_survive_broker_outage_and_kill_9(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "mosquitto", users={"pool-01": "pw-pool-01"})
    config_file = tmp_path / "node.toml"
    config_file.write_text(dump_node_config(node_config(tmp_path, broker.port)))

    agent = AgentProcess(config_file)  # the broker is not running
    try:
        for pocket in range(4):
            assert agent.ask(f"pulses {pocket} 50") == "driven"
        wait_until(lambda: agent.ask("depth") == "200", timeout=30, what="200 events in the outbox")
    finally:
        agent.kill9()

    broker.start()
    hub = Collector(broker.port)
    agent = AgentProcess(config_file)
    try:
        wait_until(lambda: len(events(hub)) >= 200, timeout=60, what="200 replayed events")
        wait_until(lambda: agent.ask("depth") == "0", timeout=30, what="outbox drained")
    finally:
        agent.quit()
        hub.close()
        broker.stop()

    got = events(hub)
    first_seen: dict[tuple[str, int], object] = {}
    order = []
    for e in got:
        key = (e.boot, e.seq)
        if key in first_seen:
            assert e == first_seen[key], "a duplicate must be the same event"
            continue
        first_seen[key] = e
        order.append(e.seq)
    assert len(first_seen) == 200
    assert len({e.boot for e in got}) == 1
    assert order == list(range(order[0], order[0] + 200)), "in seq order, without gaps"


def test_a_killed_agent_leaves_a_retained_offline_will(tmp_path: Path) -> None:
    import json

    broker = Mosquitto(tmp_path / "mosquitto", users={"pool-01": "pw-pool-01"}).start()
    config_file = tmp_path / "node.toml"
    config_file.write_text(dump_node_config(node_config(tmp_path, broker.port)))
    hub = Collector(broker.port, topics=("lavos/v1/table/pool-01/status",))
    try:
        agent = AgentProcess(config_file)
        online = hub.wait_for(lambda m: json.loads(m.payload)["state"] == "online", timeout=15)
        boot = json.loads(online.payload)["boot"]
        agent.kill9()
        will = hub.wait_for(lambda m: json.loads(m.payload)["state"] == "offline", timeout=15)
        assert json.loads(will.payload)["boot"] == boot
        late = Collector(broker.port, topics=("lavos/v1/table/pool-01/status",))
        retained = late.wait_for(lambda m: True)
        late.close()
        assert retained.retain and json.loads(retained.payload)["state"] == "offline"
    finally:
        hub.close()
        broker.stop()
