"""Must show 2: Home Assistant's read-only login on a real Mosquitto with the shipped config and ACL.

HA is played by a plain paho client logged in as lavos-homeassistant: it sees every table's
retained configs and the state topics follow a game; its birth makes the hub announce again (a
burst of births, once); its light command is refused by the broker, and no node, no hub and no
relay ever sees it. Neither it nor lavos-monitor gets a card tap or a member's name.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
import pytest

from broker.domain.floor import home_assistant as ha
from broker.domain.venue import load_venue
from broker.floor.games import StartGame, StopGame
from broker.storage.members import add_member, assign_card
from devices import contract
from tests.home_assistant.ha_schema import DISCOVERY_TOPIC
from tests.support.hub import VENUE, hub_link, hub_url, light_of, link_of, on_writer, running_node, started_hub, wait_stored
from tests.support.matching import some
from tests.support.mqtt import Collector, pocket_event, publish_events
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto


HA_USER, HA_PASSWORD = "lavos-homeassistant", "ha-secret"
V = load_venue(VENUE)
EXPECTED = {d.topic: d.config for d in ha.venue_discovery(V)}


@pytest.fixture(scope="module")
def broker(mosquitto: Mosquitto) -> Any:
    mosquitto.add_user(HA_USER, HA_PASSWORD)
    mosquitto._wait_login(HA_USER, HA_PASSWORD)
    return mosquitto


@pytest.fixture
def hub(broker: Any, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Hub]:
    # link_process: what `lavos server` runs (paho in a child process; HA's birth crosses its pipe).
    in_child = getattr(request, "param", False)
    url = hub_url(broker, "lavos-hub-ha")
    with started_hub(tmp_path / "lavos.db", venue=V, mqtt_url=url, client_id=url.username, home_assistant=True, link_process=in_child) as h:
        announcer = h.home_assistant
        assert announcer is not None
        wait_until(lambda: hub_link(h).stats.connected and announcer.announced >= 1, what="hub connected and announced")
        yield h


def home_assistant(broker: Any, topics: Any = ("homeassistant/#", "lavos/v1/#"), protocol: Any = mqtt.MQTTv311) -> Collector:
    return Collector(broker.port, HA_USER, HA_PASSWORD, topics=topics, protocol=protocol)


def configs(c: Collector) -> dict[str, dict[str, Any]]:
    return {m.topic: json.loads(m.payload) for m in c.matching(lambda m: m.topic.endswith("/config") and m.payload)}


def amount_of(c: Collector, table: str) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in c.matching(lambda m: m.topic == ha.ha_state_topic(table))]


def test_ha_sees_every_tables_retained_configs_and_the_game_as_it_runs(hub: Hub, broker: Any) -> None:
    c = home_assistant(broker)
    try:
        seen = wait_until(lambda: configs(c) if len(configs(c)) == len(EXPECTED) else None, what="every retained config")
        assert seen == EXPECTED
        assert all(m.retain for m in c.matching(lambda m: m.topic in EXPECTED))  # retained: HA reads them whenever it starts
        assert all(re.match(DISCOVERY_TOPIC, t) for t in seen)
        assert {v["device"]["name"] for v in seen.values()} == {t.name for t in V.tables}
        free = wait_until(lambda: amount_of(c, "pool-03"), what="pool-03's retained state")
        assert free[-1] == {"amount": "0.00", "amount_cents": 0, "state": "free"}

        sid = hub.execute(StartGame(table="pool-03", actor="anna"))
        wait_until(lambda: amount_of(c, "pool-03")[-1]["state"] == "running", what="HA's state: running")  # what "Hra" reads
        hub.execute(StopGame(game=sid, actor="anna"))
        wait_until(lambda: amount_of(c, "pool-03")[-1]["state"] == "free", what="HA's state: free again")
    finally:
        c.close()


@pytest.fixture
def quick_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    import broker.floor.home_assistant as hall_ha

    monkeypatch.setattr(hall_ha, "AMOUNT_EVERY_S", 0.2)  # the minute's tick, shortened (read when the hub is built)


def test_the_amount_is_republished_while_a_game_runs(quick_minute: None, hub: Hub, broker: Any) -> None:
    c = home_assistant(broker, topics=(ha.ha_state_topic("pool-04"),))
    try:
        sid = hub.execute(StartGame(table="pool-04", actor="anna"))
        running: Callable[[], list[dict[str, Any]]] = lambda: [s for s in amount_of(c, "pool-04") if s["state"] == "running"]  # noqa: E731
        wait_until(lambda: len(running()) >= 3, what="the start's update and two of the minute's")
        hub.execute(StopGame(game=sid, actor="anna"))
        wait_until(lambda: amount_of(c, "pool-04")[-1]["state"] == "free", what="free after the stop")
        n = len(amount_of(c, "pool-04"))
        time.sleep(0.6)  # three ticks: no game, nothing to say
        assert len(amount_of(c, "pool-04")) == n
    finally:
        c.close()


@pytest.mark.parametrize("hub", [False, True], ids=["link_thread", "link_process"], indirect=True)
def test_ha_announcing_itself_makes_the_hub_announce_again(hub: Any, broker: Any) -> None:
    before = hub.home_assistant.announced
    c = home_assistant(broker, topics=("homeassistant/+/+/+/config",))
    try:
        wait_until(lambda: len(configs(c)) == len(EXPECTED), what="the retained configs")
        retained = len(c.all)
        c.publish(ha.HA_STATUS_TOPIC, b"online", qos=0)  # HA's birth message (its defaults)
        wait_until(lambda: hub.home_assistant.announced == before + 1, what="the hub announced again")
        fresh = wait_until(lambda: [m for m in c.all[retained:] if not m.retain] if len(c.all) >= retained + len(EXPECTED) else None)
        assert {m.topic for m in fresh} == set(EXPECTED)  # live, not retained copies: the hub sent them now
        c.publish(ha.HA_STATUS_TOPIC, b"offline", qos=0)  # HA's will: nothing to do
        time.sleep(0.3)
        assert hub.home_assistant.announced == before + 1
        assert hub.handlers.rejected == 0  # HA's topic never reaches the node-message path
    finally:
        c.close()


def _refused(broker: Any, topic: str, payload: bytes, retain: bool, protocol: Any) -> str:
    """Publish as HA's login on a connection of its own; what the broker answered."""
    c = home_assistant(broker, topics=(ha.HA_STATUS_TOPIC,), protocol=protocol)
    answers: list[str] = []
    c.client.on_publish = lambda client, userdata, mid, rc, props: answers.append(f"puback {int(rc.value)}")
    c.client.on_disconnect = lambda client, userdata, flags, rc, props: answers.append("disconnected")
    try:
        c.client.publish(topic, payload, qos=1, retain=retain)
        wait_until(lambda: answers, what=f"the broker's answer to {topic}")
        return answers[0]
    finally:
        c.close()


@pytest.mark.parametrize("protocol", [mqtt.MQTTv311, mqtt.MQTTv5], ids=["mqtt3", "mqtt5"])
def test_ha_cannot_switch_a_light_nor_touch_discovery(hub: Hub, broker: Any, tmp_path: Path, protocol: Any) -> None:
    with running_node(broker, tmp_path, "pool-01") as (node, _factory):
        wait_until(lambda: link_of(node).connected and hub.light_commands().get("pool-01") is not None, what="node connected")
        watcher = Collector(broker.port, topics=(contract.light_set_topic("pool-01"),))  # sees every light/set
        try:
            command = contract.encode(contract.LightSet(on=True, cmd_id="ha0" + "0" * 29))
            forbidden = [
                (contract.light_set_topic("pool-01"), command, False),
                ("homeassistant/binary_sensor/lavos_lavos_pool_01/light/config", b"", True),
                (ha.ha_state_topic("pool-01"), b'{"amount":"0.01"}', True),
            ]
            answers = [_refused(broker, *f, protocol) for f in forbidden]
            # On MQTT 3.1.1 a refusal is silent (PUBACK 0; Mosquitto 2.0.11 then drops the connection);
            # MQTT 5 says it: 135, not authorized (or the connection is dropped first).
            if protocol == mqtt.MQTTv5:
                assert all(a in ("disconnected", "puback 135") for a in answers), answers
            assert _refused(broker, ha.HA_STATUS_TOPIC, b"offline", False, protocol) == "puback 0"  # its own topic: fine
            time.sleep(0.5)  # a refused message is silence: give it time to (not) arrive
            assert watcher.matching(lambda m: m.payload == command) == []
            assert not light_of(node).on  # the relay: nothing switched
            check = home_assistant(
                broker, topics=("homeassistant/binary_sensor/lavos_lavos_pool_01/light/config", ha.ha_state_topic("pool-01"))
            )
            try:
                m = check.wait_for(lambda m: m.topic.endswith("/config"))
                assert json.loads(m.payload)["unique_id"] == "lavos_lavos_pool_01_light"  # still announced
                assert json.loads(check.wait_for(lambda m: m.topic == ha.ha_state_topic("pool-01")).payload)["amount"] == "0.00"
            finally:
                check.close()
        finally:
            watcher.close()


# --- issue 19, item 25: the logins read only what they use; HA's births coalesced ---------------

MONITOR = ("lavos-monitor", "monitor-secret")
LISTENING = ("#", "lavos/v1/#", contract.event_topic("+", "card"), contract.session_topic("+"))


def test_ha_and_monitor_logins_get_no_card_tap_and_no_members_name(hub: Hub, broker: Any) -> None:
    """The shipped ACL on the real Mosquitto: both logins subscribe to everything and to the card
    taps and game summaries by name; the broker grants it (it always does) and delivers none of them."""
    name, uid = "Šťastný Ľubomír", "04a2b3c4"

    def member(db: Any) -> int:
        m = add_member(db, name, actor="test")
        assign_card(db, m.id, uid, actor="test")
        return m.id

    member_id = on_writer(hub, member)
    everything = Collector(broker.port, topics=("lavos/v1/#",))  # a hub login: what was really sent
    readers = [home_assistant(broker, topics=LISTENING), Collector(broker.port, *MONITOR, topics=LISTENING)]
    node = Collector(broker.port, "pool-05", "pw-pool-05", topics=(contract.light_set_topic("pool-05"),))
    try:
        tap = contract.CardEvent(
            v=1, table="pool-05", type="card", boot="b-acl", seq=1, ts=contract.utcnow(), ts_synced=True, data=contract.CardData(uid=uid)
        )
        node.publish(contract.event_topic("pool-05", "card"), contract.encode(tap))
        sid = hub.execute(StartGame(table="pool-03", member_id=member_id, actor="anna"))
        node.publish(contract.event_topic("pool-05", "pocket"), pocket_event("pool-05", 2, "b-acl"))
        for c in (everything, *readers):  # the pocket event went out after the tap: every reader has had its chance
            c.wait_for(lambda m: m.topic == contract.event_topic("pool-05", "pocket"))
        wait_until(lambda: amount_of(readers[0], "pool-03") and amount_of(readers[0], "pool-03")[-1]["state"] == "running")
        # The game's summary reaches the hub's own login in its own time (a busy CI run read too soon).
        everything.wait_for(lambda m: m.topic == contract.session_topic("pool-03"))
        sent = everything.matching(lambda m: name.encode() in m.payload or uid.encode() in m.payload)
        assert {m.topic for m in sent} >= {contract.event_topic("pool-05", "card"), contract.session_topic("pool-03")}
        for c in readers:
            assert c.matching(lambda m: "/event/card" in m.topic or m.topic.endswith("/session")) == [], c.username
            assert c.matching(lambda m: name.encode() in m.payload or uid.encode() in m.payload) == [], c.username
        monitor_topics = {m.topic for m in readers[1].all}
        assert contract.status_topic("pool-05") in monitor_topics or contract.event_topic("pool-05", "pocket") in monitor_topics
        hub.execute(StopGame(game=sid, actor="anna"))
    finally:
        for c in (everything, *readers, node):
            c.close()


def test_a_burst_of_ha_births_gets_one_announcement_and_delays_no_event(hub: Hub, broker: Any, tmp_path: Path) -> None:
    """60 "online"s in about 10 ms: one set of configs (not 60), and a node's event sent right after
    them is stored before that one announcement, not behind sixty."""
    before = some(hub.home_assistant).announced
    c = home_assistant(broker, topics=("homeassistant/+/+/+/config",))
    try:
        wait_until(lambda: len(configs(c)) == len(EXPECTED), what="the retained configs")
        retained = len(c.all)
        t0 = time.monotonic()
        for _ in range(60):
            c.client.publish(ha.HA_STATUS_TOPIC, b"online", qos=0)  # HA's birth, its defaults
        burst_s = time.monotonic() - t0
        boot = "b-burst"
        publish_events(broker.port, "pool-02", boot, 1)
        wait_stored(f"sqlite:///{tmp_path / 'lavos.db'}", "pool-02", boot, 1)
        assert some(hub.home_assistant).announced <= before + 1  # the event did not wait behind announcements
        wait_until(
            lambda: some(hub.home_assistant).online_seen >= 60 and some(hub.home_assistant).announced == before + 1, what="one announcement"
        )
        time.sleep(some(hub.home_assistant).quiet_s + 0.3)  # and no second one after the quiet time
        assert some(hub.home_assistant).announced == before + 1, f"{burst_s * 1000:.0f} ms burst"
        fresh = [m for m in c.all[retained:] if not m.retain]
        assert sorted(m.topic for m in fresh) == sorted(EXPECTED)  # one set: ~60 publishes, not 3,720
    finally:
        c.close()
