"""Issue 11: a table out of service, its light by hand, a foosball check-out by staff.

Through the API (the same facade methods the table page calls), on SQLite and PostgreSQL, with a
real node on mock pins where the light matters.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.storage.members import add_member, record_fee
from broker.storage.models import Alert, AuditEntry, Event, Node
from tests.support.hub import fresh_login, link_of, on_writer, running_node, started_hub
from tests.support.matching import some
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from edge.agent import EdgeNode
    from sim.mosquitto import Mosquitto
    from tests.dashboard.conftest import Api


def _audit(api: Any, action: str) -> list[AuditEntry]:
    with api.service.store.reader() as db:
        return list(db.scalars(select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)))


def _open_alerts(api: Any, table: str, kind: str) -> list[Alert]:
    with api.service.store.reader() as db:
        return list(db.scalars(select(Alert).where(Alert.table_id == table, Alert.kind == kind, Alert.closed_at.is_(None))))


def _paid_member(api: Any, name: str = "Zadražil Miro") -> int:
    def _write(db: Any) -> int:
        m = add_member(db, name, actor="test")
        record_fee(db, m.id, 2026, actor="test")
        return m.id

    result: int = on_writer(api.service, _write)
    return result


def test_out_of_service_refuses_games_is_audited_and_survives_a_restart(api: Api, mosquitto: Mosquitto, db_url: str) -> None:
    t = api.ok("POST", "/api/tables/pool-03/out-of-service", json={"reason": "nové súkno"})
    assert (t["out_of_service"], t["out_of_service_reason"], t["out_of_service_by"]) == (True, "nové súkno", "jana")
    assert api.ok("GET", "/api/tables/pool-04")["out_of_service"] is False

    # No game starts there, none moves there: the same refusal, with the table's name and the reason.
    says = api.refused("POST", "/api/sessions", 409, json={"table": "pool-03"})
    assert says == "Pool 3 is out of service (nové súkno); put it back in service first."
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-04"})["id"]
    assert "Pool 3 is out of service" in api.refused("POST", f"/api/sessions/{sid}/transfer", 409, json={"table": "pool-03"})
    # A table with a game on it cannot be taken out of service.
    says = api.refused("POST", "/api/tables/pool-04/out-of-service", 409, json={})
    assert says == f"Pool 4 has game no. {sid} running; stop or move it first."
    assert api.ok("GET", "/api/tables/pool-04")["out_of_service"] is False

    [audit] = _audit(api, "table.out_of_service")
    assert (audit.actor, audit.target, audit.reason) == ("jana", "table:pool-03", "nové súkno")

    # A restarted hub (a new Hub on the same database) still knows.
    with started_hub(db_url, mosquitto=mosquitto, client_id=fresh_login()) as again:
        assert again.out_of_service()["pool-03"].reason == "nové súkno"
        assert again.desired_light("pool-03") is False

    t = api.ok("DELETE", "/api/tables/pool-03/out-of-service")
    assert (t["out_of_service"], t["out_of_service_reason"]) == (False, None)
    assert api.refused("DELETE", "/api/tables/pool-03/out-of-service", 409) == "Pool 3 is in service already."
    assert [a.target for a in _audit(api, "table.in_service")] == ["table:pool-03"]
    api.ok("POST", "/api/sessions", 201, json={"table": "pool-03"})  # back in service: games start again


def test_out_of_service_refuses_foosball_check_ins(api: Api) -> None:
    member = _paid_member(api)
    api.ok("POST", "/api/tables/foos-02/out-of-service", json={"reason": ""})
    says = api.refused("POST", "/api/foosball/foos-02/checkin", 409, json={"member_id": member})
    assert says == "Futbal 2 is out of service; put it back in service first."


def test_unknown_tables_and_bad_bodies(api: Api) -> None:
    assert api.refused("POST", "/api/tables/pool-99/out-of-service", 404, json={}) == "There is no such table."
    assert api.refused("POST", "/api/tables/pool-99/light", 404, json={"on": True}) == "There is no such table."
    api.ok("POST", "/api/tables/pool-01/out-of-service", 422, json={"reason": "x" * 201})
    api.ok("POST", "/api/tables/pool-01/light", 422, json={"on": "yes"})
    assert api.ok("GET", "/api/tables/pool-01")["out_of_service"] is False


def test_foosball_checkout_by_staff(api: Api) -> None:
    member = _paid_member(api)
    api.ok("POST", "/api/foosball/foos-01/checkin", 201, json={"member_id": member})
    out = api.ok("POST", "/api/foosball/foos-01/checkout", json={"member_id": member})
    assert out == {"table": "foos-01", "member_id": member, "member": "Zadražil Miro"}
    assert {t["table"]: t["checkins"] for t in api.ok("GET", "/api/foosball")}["foos-01"] == []
    assert api.refused("POST", "/api/foosball/foos-01/checkout", 409, json={"member_id": member}) == (
        "Zadražil Miro is not checked in at Futbal 1."
    )
    assert api.refused("POST", "/api/foosball/pool-01/checkout", 404, json={"member_id": member}) == ("There is no such foosball table.")
    [audit] = _audit(api, "foosball.checkout")
    assert (audit.actor, audit.target, audit.detail["member_id"]) == ("jana", "table:foos-01", member)


TABLE = "pool-01"  # has broker credentials in the mosquitto fixture


def _node_light(api: Any) -> bool | None:
    with api.service.store.reader() as db:
        node = db.get(Node, TABLE)
        return node.light_on if node else None


def _button_events(api: Any) -> int:
    with api.service.store.reader() as db:
        return len(db.scalars(select(Event).where(Event.table_id == TABLE, Event.type == "button")).all())


@pytest.fixture
def node(api: Api, mosquitto: Mosquitto, tmp_path: Path) -> Iterator[tuple[EdgeNode, Any]]:
    with running_node(mosquitto, tmp_path, TABLE) as (edge_node, factory):
        wait_until(lambda: link_of(edge_node).connected and edge_node._light_cause[0] == "command", what="desired state re-sent on birth")
        wait_until(lambda: _node_light(api) is False, what="light state known")
        yield edge_node, factory


def test_light_by_hand_is_checked_like_the_button(api: Api, node: tuple[EdgeNode, Any]) -> None:
    edge, _ = node
    api.ok("POST", f"/api/tables/{TABLE}/light", json={"on": True})
    wait_until(lambda: some(edge.light).on, what="relay on")
    # The hub judges the light from the node's report, which follows the relay by a round trip.
    wait_until(lambda: _node_light(api) is True, what="node reported the light on")
    # No game: the alert the button raises, naming the dashboard; it stays while the light is on.
    [alert] = _open_alerts(api, TABLE, "light_without_session")
    assert "dashboard" in alert.message_en
    api.ok("POST", f"/api/tables/{TABLE}/light", json={"on": False})
    wait_until(lambda: not some(edge.light).on, what="relay off")
    wait_until(lambda: _node_light(api) is False, what="node reported the light off")
    assert _open_alerts(api, TABLE, "light_without_session") == []
    assert [(a.actor, a.detail["on"]) for a in _audit(api, "table.light")] == [("jana", True), ("jana", False)]

    # With a game on, the light by hand raises nothing (off while playing, like the button, too).
    sid = api.ok("POST", "/api/sessions", 201, json={"table": TABLE})["id"]
    wait_until(lambda: some(edge.light).on, what="relay on with the game")
    api.ok("POST", f"/api/tables/{TABLE}/light", json={"on": False})
    wait_until(lambda: not some(edge.light).on, what="relay off by hand")
    api.ok("POST", f"/api/tables/{TABLE}/light", json={"on": True})
    wait_until(lambda: some(edge.light).on, what="relay on by hand")
    wait_until(lambda: _node_light(api) is True, what="node reported the light on by hand")
    assert _open_alerts(api, TABLE, "light_without_session") == []
    api.ok("POST", f"/api/sessions/{sid}/stop")
    wait_until(lambda: not some(edge.light).on, what="relay off after the stop")


def test_out_of_service_keeps_the_light_off(api: Api, node: tuple[EdgeNode, Any]) -> None:
    edge, factory = node
    api.ok("POST", f"/api/tables/{TABLE}/light", json={"on": True})
    wait_until(lambda: some(edge.light).on, what="relay on")
    api.ok("POST", f"/api/tables/{TABLE}/out-of-service", json={"reason": "oprava"})
    wait_until(lambda: not some(edge.light).on, what="taken out of service: dark")
    wait_until(lambda: _node_light(api) is False, what="node reported the light off")
    assert _open_alerts(api, TABLE, "light_without_session") == []
    says = api.refused("POST", f"/api/tables/{TABLE}/light", 409, json={"on": True})
    assert says == "Pool 1 is out of service (oprava); put it back in service first."
    # The button at the table: the hub switches it off again, and raises nothing for it.
    before = edge._light_cause
    button = factory.pin(edge.config.pins.button)
    button.drive_low()
    time.sleep(0.08)
    button.drive_high()
    wait_until(lambda: _button_events(api) == 1, what="the button press reached the hub")
    wait_until(
        lambda: not some(edge.light).on and edge._light_cause[0] == "command" and edge._light_cause != before,
        what="switched off again by a new command of the hub",
    )
    assert _open_alerts(api, TABLE, "light_without_session") == []
