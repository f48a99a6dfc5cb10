"""Issue 9, items 17 and 19: billing rules found broken, through the real service.

The central service runs in-process with a real Mosquitto, on SQLite and PostgreSQL; only its
clock is faked (New Year's Eve cannot wait for December). The JSON API and the staff pages
are the real apps over that service (FastAPI's TestClient, no server socket).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from broker.members import add_member, assign_card, record_fee
from tests.dashboard.conftest import FakeClock, api, service  # noqa: F401 - fixtures

BRATISLAVA = ZoneInfo("Europe/Bratislava")
EVE = datetime(2026, 12, 31, 23, 0, tzinfo=BRATISLAVA)
CARD = "a1b2c3d4"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(EVE)


def _card_holder(service, years: tuple[int, ...], name: str = "Ambra Tomáš", uid: str = CARD) -> int:  # type: ignore[no-untyped-def]
    with service.store.session() as db:
        m = add_member(db, name, actor="test")
        assign_card(db, m.id, uid, actor="test")
        for year in years:
            record_fee(db, m.id, year, actor="test")
        return m.id


# --- 17: New Year's Eve -------------------------------------------------------------------


@pytest.mark.parametrize("years, lines", [
    ((2026, 2027), [("club_card", 800)]),
    ((2026,), [("club_card", 400), ("standard", 600)]),
])
def test_new_years_eve_bills_each_hour_by_the_fee_of_its_year(api, years, lines):  # noqa: F811
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
