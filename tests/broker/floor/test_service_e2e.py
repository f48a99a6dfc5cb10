"""The hub with a real Mosquitto, real nodes on mock pins, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.floor.games import StartGame, StopGame
from broker.storage.members import add_member, assign_card, record_fee
from broker.storage.models import Alert, Event, FoosballCheckin
from sim.pins import PulseScript, drive_pulses
from tests.support.hub import card_reader_of, hub_link, link_of, on_writer, running_node, running_service
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto


PAID_UID, UNPAID_UID = "0a1b2c3d", "deadbeef"


def open_alerts(svc: Any, kind: Any) -> Any:
    with svc.store.reader() as db:
        return db.scalars(select(Alert).where(Alert.kind == kind, Alert.closed_at.is_(None))).all()


def relay_on(node: Any) -> bool:
    result: bool = node.light.on
    return result


@pytest.fixture
def svc(mosquitto: Mosquitto, db_url: str) -> Iterator[Hub]:
    with running_service(mosquitto, db_url) as s:
        yield s


def drop_balls(factory: Any, node: Any, pocket: int, n: int) -> None:
    drive_pulses(factory.pin(node.config.pins.pockets[pocket]), n, PulseScript(duration_s=0.02, chatter_edges=1))


def test_session_switches_the_light_and_counts_drops(svc: Hub, mosquitto: Mosquitto, tmp_path: Path) -> None:
    with running_node(mosquitto, tmp_path, "pool-05") as (node, factory):
        wait_until(lambda: hub_link(svc).stats.connected and link_of(node).connected, what="both connected")
        assert not relay_on(node)
        sid = svc.execute(StartGame(table="pool-05", actor="anna"))
        wait_until(lambda: relay_on(node), what="relay on")  # how soon: bench/edge_latency.py
        drop_balls(factory, node, 2, 5)
        wait_until(lambda: svc.runtime["pool-05"].drops == 5, what="5 drops applied")
        svc.execute(StopGame(game=sid, actor="anna"))
        wait_until(lambda: not relay_on(node), what="relay off")
        with svc.store.reader() as db:
            events = db.scalars(select(Event).where(Event.table_id == "pool-05")).all()
        assert sorted(e.data["pocket"] for e in events) == [2] * 5


def test_drops_without_a_game_open_an_alert(svc: Hub, mosquitto: Mosquitto, tmp_path: Path) -> None:
    with running_node(mosquitto, tmp_path, "pool-02") as (node, factory):
        wait_until(lambda: link_of(node).connected)
        drop_balls(factory, node, 0, 2)
        wait_until(lambda: open_alerts(svc, "play_without_session"), what="play-without-session alert")
        alert = open_alerts(svc, "play_without_session")[0]
        assert alert.table_id == "pool-02" and alert.message.startswith("Pool 2: ") and "Pool 2: " in alert.message_en
        # starting a session settles it
        svc.execute(StartGame(table="pool-02", actor="anna"))
        assert not open_alerts(svc, "play_without_session")


def test_birth_gets_the_desired_light_back(svc: Hub, mosquitto: Mosquitto, tmp_path: Path) -> None:
    with running_node(mosquitto, tmp_path, "pool-06") as (node, _):
        wait_until(lambda: link_of(node).connected)
        svc.execute(StartGame(table="pool-06", actor="anna"))
        wait_until(lambda: relay_on(node))
    # the Pi reboots: its relay starts off (boot_state), the hub re-sends "on" on its birth
    with running_node(mosquitto, tmp_path, "pool-06") as (node, _):
        wait_until(lambda: relay_on(node), what="light restored after the node's birth")


def test_button_light_without_session_alerts(svc: Hub, mosquitto: Mosquitto, tmp_path: Path) -> None:
    with running_node(mosquitto, tmp_path, "pool-07") as (node, factory):
        # the hub answers the node's birth with the desired state (off): let that land first
        wait_until(lambda: node._light_cause[0] == "command", what="desired state re-sent on birth")
        button = factory.pin(node.config.pins.button)
        button.drive_low()
        time.sleep(0.08)
        button.drive_high()
        wait_until(lambda: relay_on(node), what="button switched the light on")
        wait_until(lambda: open_alerts(svc, "light_without_session"), what="light-without-session alert")


def _members(svc: Any) -> Any:
    year = datetime.now(UTC).astimezone(svc.venue.tz).year

    def _write(db: Any) -> tuple[int, int]:
        paid = add_member(db, "Ambra Tomáš", actor="test")
        assign_card(db, paid.id, PAID_UID, actor="test")
        record_fee(db, paid.id, year, actor="test")
        unpaid = add_member(db, "Zadražil Miro", actor="test")
        assign_card(db, unpaid.id, UNPAID_UID, actor="test")
        return paid.id, unpaid.id

    return on_writer(svc, _write)


def score(factory: Any, node: Any, side: str, n: int = 1) -> None:
    pin = node.config.pins.goal_home if side == "home" else node.config.pins.goal_away
    drive_pulses(factory.pin(pin), n, PulseScript(duration_s=0.015, chatter_edges=1))


def test_foosball_is_for_paid_up_members(svc: Hub, mosquitto: Mosquitto, tmp_path: Path) -> None:
    paid_id, _ = _members(svc)
    with running_node(mosquitto, tmp_path, "foos-01") as (node, factory):
        wait_until(lambda: link_of(node).connected)
        # goals without a check-in: the loudest alert (how soon on an open page: bench/staff_action.py)
        score(factory, node, "home")
        wait_until(lambda: open_alerts(svc, "foosball_no_member"), what="foosball alert")
        assert open_alerts(svc, "foosball_no_member")[0].table_id == "foos-01"
        # an unpaid card is refused, and says whose and why
        card_reader_of(node).tap(UNPAID_UID)
        wait_until(lambda: open_alerts(svc, "card_refused"), what="refusal")
        refused = open_alerts(svc, "card_refused")[0]
        assert "Zadražil" in refused.message and str(datetime.now().year) in refused.message_en
        # a paid-up card checks the table in; goals are then the member's, and no new alert
        card_reader_of(node).tap(PAID_UID)
        wait_until(lambda: not open_alerts(svc, "foosball_no_member"), what="check-in settles the alert")
        score(factory, node, "away", 3)

        def goals() -> Any:
            with svc.store.reader() as db:
                return db.scalar(select(func.sum(FoosballCheckin.goals)).where(FoosballCheckin.member_id == paid_id)) or 0

        wait_until(lambda: goals() == 3, what="3 goals recorded for the member")
        assert not open_alerts(svc, "foosball_no_member")


def test_garbage_is_counted_not_fatal(svc: Hub, mosquitto: Mosquitto) -> None:
    from tests.support.mqtt import Collector

    hub = Collector(mosquitto.port)
    bad = [
        ("lavos/v1/table/pool-01/event/pocket", b"{not json"),
        ("lavos/v1/table/pool-01/event/pocket", b'{"v":2}'),
        ("lavos/v1/table/pool-01/telemetry", b'{"uptime_s":"x"}'),
        ("lavos/v1/table/nosuch-01/status", b'{"state":"online"}'),
        ("lavos/v1/table/pool-01/event/pocket", b"\xff" * 10),
        ("lavos/v1/table/pool-01/event/pocket", b"[" * 5000),
    ]
    before = svc.handlers.rejected
    for topic, payload in bad:
        hub.publish(topic, payload)
    wait_until(lambda: svc.handlers.rejected - before == len(bad), what="all rejected")
    hub.close()
    assert hub_link(svc).stats.connected and svc.ingest._thread.is_alive()


def _event(table: Any, etype: Any, seq: Any, data: Any) -> Any:
    from devices import contract

    return contract.event_topic(table, etype), json.dumps(
        {
            "v": 1,
            "table": table,
            "type": etype,
            "boot": "b-test",
            "seq": seq,
            "ts": "2026-11-30T18:00:00+00:00",
            "ts_synced": False,
            "data": data,
        }
    )


def test_sensor_fault_outbox_and_offline_alerts_open_and_close(svc: Hub, mosquitto: Mosquitto) -> None:
    from tests.support.mqtt import Collector

    node = Collector(mosquitto.port, username="pool-03", password="pw-pool-03", topics=("lavos/v1/table/pool-03/light/set",))
    node.publish(*_event("pool-03", "sensor_fault", 1, {"sensor": "pocket-4", "kind": "stuck"}))
    wait_until(lambda: open_alerts(svc, "sensor_fault"), what="stuck beam alert")
    assert "v kapse 5" in open_alerts(svc, "sensor_fault")[0].message
    node.publish(*_event("pool-03", "sensor_fault", 2, {"sensor": "pocket-4", "kind": "recovered"}))
    wait_until(lambda: not open_alerts(svc, "sensor_fault"), what="recovered closes it")

    node.publish("lavos/v1/table/pool-03/telemetry", json.dumps({"uptime_s": 60, "outbox": 500}), qos=0)
    wait_until(lambda: open_alerts(svc, "outbox_stuck"), what="outbox alert")
    node.publish("lavos/v1/table/pool-03/telemetry", json.dumps({"uptime_s": 90, "outbox": 0}), qos=0)
    wait_until(lambda: not open_alerts(svc, "outbox_stuck"), what="drained outbox closes it")

    node.publish("lavos/v1/table/pool-03/status", json.dumps({"state": "offline", "boot": "b-test"}), retain=True)
    time.sleep(0.3)
    assert not open_alerts(svc, "node_offline")  # no session: nothing to worry about
    svc.execute(StartGame(table="pool-03", actor="anna"))
    node.publish("lavos/v1/table/pool-03/status", json.dumps({"state": "offline", "boot": "b-test"}), retain=True)
    wait_until(lambda: open_alerts(svc, "node_offline"), what="offline during a session")
    assert open_alerts(svc, "node_offline")[0].severity == "critical"
    node.publish("lavos/v1/table/pool-03/status", json.dumps({"state": "online", "boot": "b-test2"}), retain=True)
    wait_until(lambda: not open_alerts(svc, "node_offline"), what="back online closes it")
    node.close()
