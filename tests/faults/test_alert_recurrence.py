"""Issue 9, item 18: every alert kind fires, is settled or closed, and fires again, three times.

Through the running hub with a real Mosquitto, on SQLite and PostgreSQL. Tables
speak as their nodes do: raw MQTT clients logged in as the table (the ACL applies), and a real
EdgeNode on mock pins for the foosball card tap. Staff act through the real JSON API (FastAPI's
TestClient over the same service). Only the hub's clock is faked, and its watchdog is
ticked by the test at moments of that clock (idle, prepaid, closing, check-ins ending).

The bug this guards: the API's foosball check-in closed the alert in the database while the
service's in-memory list of open causes kept it, so "foosball without a member" never fired
again on that table until a restart.
"""

from __future__ import annotations

import ast
import json
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from broker.domain.venue import Billing, load_venue
from broker.storage.members import add_member, assign_card, record_fee
from broker.storage.models import Alert
from devices import contract
from tests.broker.floor.test_service_e2e import score
from tests.dashboard.conftest import FakeClock, api  # noqa: F401 - the api fixture
from tests.support.hub import VENUE, card_reader_of, fresh_login, link_of, on_writer, running_node, started_hub
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto
    from tests.dashboard.conftest import Api


BRATISLAVA = ZoneInfo("Europe/Bratislava")
ROUNDS = 3
PAID_UID, UNPAID_UID = "c0ffee01", "badc0ffe"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 11, 10, 18, 0, tzinfo=BRATISLAVA))


@pytest.fixture
def service(mosquitto: Mosquitto, db_url: str, clock: FakeClock) -> Iterator[Hub]:
    # prepaid_expiry "continue": the shipped venue stops the session instead, and raises nothing.
    venue = load_venue(VENUE)
    venue = venue.model_copy(update={"billing": Billing(**{**venue.billing.model_dump(), "prepaid_expiry": "continue"})})
    with started_hub(db_url, mosquitto=mosquitto, clock=clock, venue=venue, client_id=fresh_login(), watchdog=False) as svc:
        told: list[tuple[str, str]] = []  # what the dashboard was told: (kind, table) of every alert that opened
        svc.listeners.append(lambda topic, data: told.append((data["kind"], data["table"])) if topic == "alert" else None)
        vars(svc)["told"] = told  # the tests read it beside the hub they were given
        yield svc


class RawNode:
    """A table's node as MQTT sees it: its own login, its own topics, its own event numbers."""

    def __init__(self, mosquitto: Any, table: str, clock: FakeClock) -> None:
        self.table, self.clock, self.seq = table, clock, count(1)
        self.boot = f"b-{uuid.uuid4().hex[:8]}"
        self.mqtt = Collector(mosquitto.port, username=table, password=f"pw-{table}", topics=(contract.light_set_topic(table),))

    def event(self, etype: str, data: dict[str, Any]) -> None:
        self.mqtt.publish(
            contract.event_topic(self.table, etype),
            json.dumps(
                {
                    "v": 1,
                    "table": self.table,
                    "type": etype,
                    "boot": self.boot,
                    "seq": next(self.seq),
                    "ts": self.clock().isoformat(),
                    "ts_synced": True,
                    "data": data,
                }
            ),
        )

    def status(self, state: str) -> None:
        self.mqtt.publish(
            contract.status_topic(self.table), json.dumps({"state": state, "boot": self.boot, "version": "test"}), retain=True
        )

    def light(self, on: bool, cause: str = "button") -> None:
        self.mqtt.publish(contract.light_state_topic(self.table), json.dumps({"on": on, "blink": False, "cause": cause}), retain=True)

    def telemetry(self, outbox: int) -> None:
        self.mqtt.publish(contract.telemetry_topic(self.table), json.dumps({"uptime_s": 60, "outbox": outbox}))

    def close(self) -> None:
        for topic in (contract.status_topic(self.table), contract.light_state_topic(self.table)):
            self.mqtt.publish(topic, b"", retain=True)  # the broker outlives the test: leave nothing retained
        self.mqtt.close()


@pytest.fixture
def node(mosquitto: Mosquitto, clock: FakeClock) -> Iterator[Callable[..., Any]]:
    made: list[RawNode] = []

    def make(table: str) -> RawNode:
        made.append(RawNode(mosquitto, table, clock))
        return made[-1]

    yield make
    for n in made:
        n.close()


def alerts(service: Any, kind: str, table: str) -> list[Alert]:
    with service.store.reader() as db:
        return list(db.scalars(select(Alert).where(Alert.kind == kind, Alert.table_id == table).order_by(Alert.id)))


def fired(service: Any, kind: str, table: str, n: int) -> Alert:
    """Wait for the n-th alert of this kind on this table to be open; return it."""

    def nth_open() -> bool:
        rows = alerts(service, kind, table)
        return len(rows) == n and rows[-1].closed_at is None

    wait_until(nth_open, timeout=10, what=f"{kind} on {table} firing for the {n}. time (alerts: {_seen(service, kind, table)})")
    return alerts(service, kind, table)[-1]


def settled(service: Any, kind: str, table: str) -> None:
    wait_until(
        lambda: all(a.closed_at is not None for a in alerts(service, kind, table)),
        timeout=10,
        what=f"{kind} on {table} closed (alerts: {_seen(service, kind, table)})",
    )


def _seen(service: Any, kind: str, table: str) -> list[Any]:
    return [(a.id, a.count, a.closed_at is not None) for a in alerts(service, kind, table)]


def three_times(service: Any, kind: str, table: str, fire: Any, resolve: Any) -> None:
    for n in range(1, ROUNDS + 1):
        fire(n)
        alert = fired(service, kind, table, n)
        wait_until(lambda: service.told.count((kind, table)) == n, what=f"staff told of {kind} on {table} {n} times ({service.told})")
        resolve(n, alert)
        settled(service, kind, table)
    assert len(alerts(service, kind, table)) == ROUNDS


def _members(service: Any) -> int:
    def _write(db: Any) -> int:
        paid = add_member(db, "Ambra Tomáš", actor="test")
        assign_card(db, paid.id, PAID_UID, actor="test")
        record_fee(db, paid.id, 2026, actor="test")
        unpaid = add_member(db, "Zadražil Miro", actor="test")
        assign_card(db, unpaid.id, UNPAID_UID, actor="test")
        return paid.id

    result: int = on_writer(service, _write)
    return result


def _end_checkins(api: Any) -> None:
    """Nobody scores for longer than the check-in lasts: the watchdog ends it."""
    api.clock.advance(minutes=api.service.venue.billing.foosball_checkin_min + 1)
    api.service.watchdog.tick()


# --- the kinds the tables cause --------------------------------------------------------------


def test_play_without_session_settled_by_a_start(api: Api, node: Callable[..., Any]) -> None:
    pool = node("pool-01")
    sid: list[int] = []

    def resolve(n: int, alert: Alert) -> None:
        sid.append(api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"])
        settled(api.service, "play_without_session", "pool-01")
        api.ok("POST", f"/api/sessions/{sid[-1]}/stop")

    three_times(api.service, "play_without_session", "pool-01", lambda n: pool.event("pocket", {"pocket": n, "pulse_ms": 30.0}), resolve)


def test_play_without_session_closed_by_staff(api: Api, node: Callable[..., Any]) -> None:
    pool = node("pool-02")

    def resolve(n: int, alert: Alert) -> None:
        api.ok("POST", f"/api/alerts/{alert.id}/ack")  # seen, not closed: balls still dropping only touch it
        pool.event("pocket", {"pocket": 1, "pulse_ms": 30.0})
        wait_until(lambda: alerts(api.service, "play_without_session", "pool-02")[-1].count == 2, what="touched, not reopened")
        assert len(alerts(api.service, "play_without_session", "pool-02")) == n
        api.ok("POST", f"/api/alerts/{alert.id}/ack", json={"close": True})

    three_times(api.service, "play_without_session", "pool-02", lambda n: pool.event("pocket", {"pocket": 0, "pulse_ms": 30.0}), resolve)


def test_idle_session_settled_by_a_ball(api: Api, node: Callable[..., Any]) -> None:
    pool = node("pool-03")
    api.ok("POST", "/api/sessions", 201, json={"table": "pool-03"})

    def fire(n: int) -> None:
        api.clock.advance(minutes=api.service.venue.billing.idle_alert_min + 1)
        api.service.watchdog.tick()

    def resolve(n: int, alert: Alert) -> None:
        pool.event("pocket", {"pocket": 2, "pulse_ms": 30.0})
        wait_until(lambda: api.service.runtime["pool-03"].drops == n, what="the drop counted")  # idle is measured from it

    three_times(api.service, "idle_session", "pool-03", fire, resolve)


def test_light_without_session_settled_by_the_light_going_off(api: Api, node: Callable[..., Any]) -> None:
    pool = node("pool-04")
    three_times(api.service, "light_without_session", "pool-04", lambda n: pool.light(True), lambda n, a: pool.light(False))


def test_node_offline_settled_by_its_birth(api: Api, node: Callable[..., Any]) -> None:
    pool = node("pool-05")
    pool.status("online")
    api.ok("POST", "/api/sessions", 201, json={"table": "pool-05"})
    three_times(api.service, "node_offline", "pool-05", lambda n: pool.status("offline"), lambda n, a: pool.status("online"))


def test_sensor_fault_settled_by_recovery(api: Api, node: Callable[..., Any]) -> None:
    pool = node("pool-06")
    three_times(
        api.service,
        "sensor_fault",
        "pool-06",
        lambda n: pool.event("sensor_fault", {"sensor": "pocket-2", "kind": "stuck"}),
        lambda n, a: pool.event("sensor_fault", {"sensor": "pocket-2", "kind": "recovered"}),
    )


def test_outbox_stuck_settled_when_the_outbox_drains(api: Api, node: Callable[..., Any]) -> None:
    pool = node("pool-07")
    three_times(api.service, "outbox_stuck", "pool-07", lambda n: pool.telemetry(500), lambda n, a: pool.telemetry(0))


# --- foosball: the loudest one ------------------------------------------------------------------


def test_foosball_no_member_fires_again_after_a_staff_check_in(api: Api, node: Callable[..., Any]) -> None:
    member = _members(api.service)
    foos = node("foos-01")

    def resolve(n: int, alert: Alert) -> None:
        api.ok("POST", "/api/foosball/foos-01/checkin", 201, json={"member_id": member})
        settled(api.service, "foosball_no_member", "foos-01")
        foos.event("goal", {"side": "away"})  # the member's goal: no alert
        wait_until(lambda: api.ok("GET", "/api/foosball")[0]["checkins"][0]["goals"] == 1, what="the goal counted")
        _end_checkins(api)

    three_times(api.service, "foosball_no_member", "foos-01", lambda n: foos.event("goal", {"side": "home"}), resolve)


def test_foosball_no_member_fires_again_after_a_card_tap(api: Api, mosquitto: Mosquitto, tmp_path: Path) -> None:
    _members(api.service)
    with running_node(mosquitto, tmp_path, "foos-02") as (edge, factory):
        wait_until(lambda: link_of(edge).connected, timeout=20, what="the foosball node connected")

        def resolve(n: int, alert: Alert) -> None:
            card_reader_of(edge).tap(PAID_UID)
            settled(api.service, "foosball_no_member", "foos-02")
            _end_checkins(api)

        three_times(api.service, "foosball_no_member", "foos-02", lambda n: score(factory, edge, "home"), resolve)


def test_card_refused_closed_by_staff(api: Api, node: Callable[..., Any]) -> None:
    _members(api.service)
    foos = node("foos-01")
    three_times(
        api.service,
        "card_refused",
        "foos-01",
        lambda n: foos.event("card", {"uid": UNPAID_UID}),
        lambda n, a: api.ok("POST", f"/api/alerts/{a.id}/ack", json={"close": True}),
    )


# --- the kinds the clock causes ---------------------------------------------------------------


def test_prepaid_expired_settled_by_extending_and_by_stopping(api: Api) -> None:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-08", "prepaid_minutes": 10})["id"]
    api.clock.advance(minutes=5)

    def fire(n: int) -> None:
        api.clock.advance(minutes=6)  # past what was paid
        api.service.watchdog.tick()

    def resolve(n: int, alert: Alert) -> None:
        for _ in range(3):  # the watchdog looks every second: once per run-out, not a write each time
            api.clock.advance(seconds=1)
            api.service.watchdog.tick()
        assert alerts(api.service, "prepaid_expired", "pool-08")[-1].count == 1
        if n < ROUNDS:
            api.ok("POST", f"/api/sessions/{sid}/extend", json={"minutes": 6})
        else:
            api.ok("POST", f"/api/sessions/{sid}/stop")

    three_times(api.service, "prepaid_expired", "pool-08", fire, resolve)


def test_open_after_closing_fires_every_night(api: Api) -> None:
    # From Tuesday 18:00: each night a session starts at 23:30, the hall closes at 00:00.
    sids: list[int] = []

    def fire(n: int) -> None:
        api.clock.advance(hours=5, minutes=30)  # 23:30
        sids.append(api.ok("POST", "/api/sessions", 201, json={"table": "pool-09"})["id"])
        api.clock.advance(minutes=35)  # 00:05
        api.service.watchdog.tick()

    def resolve(n: int, alert: Alert) -> None:
        api.ok("POST", f"/api/sessions/{sids[-1]}/stop")
        api.clock.advance(hours=17, minutes=55)  # the next day, 18:00

    three_times(api.service, "open_after_closing", "pool-09", fire, resolve)


def test_only_the_service_writes_alerts() -> None:
    """A second writer beside the hub is how the foosball alert went silent: there is none.

    The hub's alert book (broker/core/alert_book.py) is the one module that writes alerts."""
    writers = {"open_or_touch_alert", "touch_alert", "close_alert", "ack_alert"}
    repo = Path(__file__).resolve().parents[2]
    found = set()
    for path in [*repo.glob("broker/**/*.py"), *repo.glob("dashboard/**/*.py"), *repo.glob("sim/**/*.py"), *repo.glob("edge/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Attribute):
                names = [node.attr]
            if writers & set(names):
                found.add(path.relative_to(repo).as_posix())
    assert found == {"broker/core/alert_book.py"}, found
