"""Issue 9, items 17 and 19: billing rules found broken, through the real service.

The hub runs in-process with a real Mosquitto, on SQLite and PostgreSQL; only its
clock is faked (New Year's Eve cannot wait for December). The JSON API and the staff pages
are the real apps over that service (FastAPI's TestClient, no server socket).
"""

from __future__ import annotations

import html
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from broker.floor.games import StartGame
from broker.hall.hub import CardInUse
from broker.storage.members import add_member, assign_card, record_fee
from broker.storage.models import Game
from devices import contract
from tests.dashboard.conftest import CHEAP, PASSWORD, STAFF, FakeClock, api, service  # noqa: F401 - fixtures
from tests.faults.checks import stored_events
from tests.support.hub import on_writer
from tests.support.matching import some
from tests.support.mqtt import Collector
from tests.support.waiting import wait_until
from tests.support.web import Browser, add_users, bound_app, event, node_link

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto
    from tests.dashboard.conftest import Api


BRATISLAVA = ZoneInfo("Europe/Bratislava")
EVE = datetime(2026, 12, 31, 23, 0, tzinfo=BRATISLAVA)
CARD = "a1b2c3d4"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(EVE)


def _card_holder(service: Any, years: tuple[int, ...], name: str = "Ambra Tomáš", uid: str = CARD) -> int:
    def _write(db: Any) -> int:
        m = add_member(db, name, actor="test")
        assign_card(db, m.id, uid, actor="test")
        for year in years:
            record_fee(db, m.id, year, actor="test")
        return m.id

    result: int = on_writer(service, _write)
    return result


# --- 17: New Year's Eve -------------------------------------------------------------------


@pytest.mark.parametrize(
    "years, lines",
    [
        ((2026, 2027), [("club_card", 800)]),
        ((2026,), [("club_card", 400), ("standard", 600)]),
    ],
)
def test_new_years_eve_bills_each_hour_by_the_fee_of_its_year(api: Api, years: Any, lines: Any) -> None:
    _card_holder(api.service, years)
    s = api.ok("POST", "/api/sessions", 201, json={"table": "pool-05", "card_uid": CARD})
    assert s["tariff"] == "club_card"
    api.clock.advance(hours=2)  # stopped at 01:00 on 1 January
    bill = api.ok("POST", f"/api/sessions/{s['id']}/stop")["bill"]
    assert [(line["tariff"], line["amount_cents"]) for line in bill["lines"]] == lines
    assert bill["total_cents"] == sum(cents for _, cents in lines)
    if len(lines) == 2:  # the unpaid year: the line says why, from midnight
        unpaid = bill["lines"][1]
        assert unpaid["reason"] == "card_unpaid" and unpaid["start"].startswith("2026-12-31T23:00")
        assert "nie je zaplatený" in unpaid["description"]


# --- 19: one card, one table -----------------------------------------------------------------
# A card reaches a session three ways: the start (API POST /api/sessions, the table panel's
# form), shown on a running session (POST /api/sessions/{id}/card), and tapped at a table's
# reader (only foosball tables check members in: a tap at a pool table changes no session).


def _session_rows(service: Any) -> list[tuple[Any, ...]]:
    with service.store.reader() as db:
        rows = db.scalars(select(Game).order_by(Game.id)).all()
        return [(r.id, r.table_id, r.state, r.member_id, len(r.ops)) for r in rows]


def _refused_names_both(detail: str) -> None:
    assert "Ambra Tomáš" in detail and "Pool 5" in detail, detail


def test_a_card_on_one_table_is_refused_on_a_second_through_the_api(api: Api, mosquitto: Mosquitto) -> None:
    member = _card_holder(api.service, (2026,))

    def _write(db: Any) -> None:
        assign_card(db, member, "e5f6a7b8", actor="test")  # the same member's second card

    on_writer(api.service, _write)
    first = api.ok("POST", "/api/sessions", 201, json={"table": "pool-05", "card_uid": CARD})
    plain = api.ok("POST", "/api/sessions", 201, json={"table": "pool-06"})
    before = _session_rows(api.service)
    lights = Collector(mosquitto.port, topics=(contract.light_set_topic("pool-07"),))
    try:
        for body in (
            {"table": "pool-07", "card_uid": CARD},
            {"table": "pool-07", "card_uid": "e5f6a7b8"},
            {"table": "pool-07", "member_id": member},
        ):
            _refused_names_both(api.refused("POST", "/api/sessions", 409, as_manager=False, json=body))
        card_bodies: tuple[dict[str, object], ...] = ({"card_uid": CARD}, {"member_id": member})
        for body in card_bodies:
            _refused_names_both(api.refused("POST", f"/api/sessions/{plain['id']}/card", 409, as_manager=False, json=body))
        assert _session_rows(api.service) == before, "a refusal changed a session"
        api.ok("POST", f"/api/sessions/{first['id']}/pause")  # paused, the card is still on pool-05
        before = _session_rows(api.service)
        _refused_names_both(api.refused("POST", "/api/sessions", 409, as_manager=False, json={"table": "pool-07", "card_uid": CARD}))
        time.sleep(0.3)
        assert not lights.all, "a refused start switched a light"
    finally:
        lights.close()
    assert _session_rows(api.service) == before, "a refusal changed a session"
    assert api.ok("GET", f"/api/sessions/{plain['id']}")["member"] is None
    assert "pool-07" not in api.service.open

    # The card moves with its session, and is free again once taken off or stopped.
    api.ok("POST", f"/api/sessions/{first['id']}/resume")
    api.ok("POST", f"/api/sessions/{first['id']}/transfer", json={"table": "pool-08"})
    api.ok("POST", f"/api/sessions/{first['id']}/card", json={})  # taken off
    assert api.ok("POST", f"/api/sessions/{plain['id']}/card", json={"card_uid": CARD})["member"]["name"] == "Ambra Tomáš"
    api.ok("POST", f"/api/sessions/{plain['id']}/stop")
    assert api.ok("POST", "/api/sessions", 201, json={"table": "pool-07", "card_uid": CARD})["tariff"] == "club_card"


def test_one_card_at_two_tables_at_the_same_moment_starts_one_session(service: Hub) -> None:
    _card_holder(service, (2026,))
    tables = ["pool-05", "pool-06", "pool-07", "pool-08"]

    def start(table: str) -> str:
        try:
            service.execute(StartGame(table=table, card_uid=CARD, actor="test"))
            return "started"
        except CardInUse:
            return "refused"

    with ThreadPoolExecutor(len(tables)) as pool:
        outcomes = list(pool.map(start, tables))
    assert sorted(outcomes) == ["refused"] * 3 + ["started"]
    assert len(service.open) == 1


def test_a_card_tap_at_a_pool_table_puts_it_on_no_session(service: Hub, mosquitto: Mosquitto) -> None:
    member = _card_holder(service, (2026,))
    sid = service.execute(StartGame(table="pool-05", card_uid=CARD, actor="test"))
    before = _session_rows(service)
    with node_link(mosquitto, "pool-06") as node:
        event(node, "pool-06", "card", 1, {"uid": CARD})
        wait_until(lambda: stored_events(service.store, "pool-06", "card"), what="the tap stored")
    assert _session_rows(service) == before and "pool-06" not in service.open
    assert service.open["pool-05"].id == sid and some(service.open["pool-05"].state.member).member_id == member


@pytest.fixture
def staff_browser(service: Hub) -> Browser:
    add_users(service, {STAFF: "staff"}, PASSWORD, CHEAP)
    b = Browser(bound_app(service))
    b.login(STAFF, PASSWORD)
    return b


def test_the_table_panel_refuses_the_second_table_in_slovak(staff_browser: Browser, service: Hub) -> None:
    member = _card_holder(service, (2026,))
    r = staff_browser.post("/tables/pool-05/start", {"card_uid": CARD})
    assert r.status_code == 303 and r.headers["location"] == "/"
    before = _session_rows(service)
    for form in ({"card_uid": CARD}, {"member_id": str(member)}):
        r = staff_browser.post("/tables/pool-06/start", form)
        assert r.status_code == 303 and r.headers["location"] == "/tables/pool-06", r.text
        page = staff_browser.get(r.headers["location"]).text
        assert "Hru sa nepodarilo spustiť: Ambra Tomáš už má klubovú kartu na stole Pool 5." in html.unescape(page)
    assert _session_rows(service) == before and "pool-06" not in service.open
