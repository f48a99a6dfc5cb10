"""Issue 19, item 6: per-id reads of money keep to the days staff work with.

Staff see the running business day, days left open, the last closed one, and every tab still to be
paid; an older day's tabs, payments, receipts and game bills are the manager's, as that day's Z
report is (day.history). Before, staff got 403 on /api/days/D but 200 on the same day's
/api/payments/{id}, its receipt, /api/tabs/{id} and the pages, and ids are sequential.

Walks every GET route of both apps that names a tab, a payment or a game in its path, so a new
per-id route is checked without being listed here."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import select

from broker.floor.games import StartGame, StopGame
from broker.storage.models import Tab
from broker.till.closeout import CloseDay
from broker.till.payments import PayTab
from dashboard.api.app import api_routes
from dashboard.web.app import web_routes
from tests.dashboard.conftest import CHEAP, PASSWORD
from tests.support.till_days import FakeClock, day_hub, local
from tests.support.web import Browser, add_users, bound_app

MONEY = ("tab_id", "payment_id", "session_id", "game_id")  # a game: the API's session_id, the pages' game_id
# Not money, or guarded by their own capability (a booking: bookings.read; its deposit is a tab; a calendar link's token is its key;
# a tournament and its match: tournaments.view, its money the pot it announces, each fee a tab of its own walked here as a tab;
# a shift: shifts.manage, the manager's alone; export: the stock report's sheet, the manager's whole).
OTHER = {
    "table_id",
    "member_id",
    "day",
    "name",
    "username",
    "booking_id",
    "token",
    "tournament_id",
    "match",
    "shift",
    "shift_id",
    "export",
}
GETS = [p for m, p, _ in [*api_routes(), *web_routes()] if m == "GET" and "{" in p]
sqlite_only = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(local(2026, 12, 1, 16, 0))


def _paid_game(facade: Any, clock: Any, table: str) -> dict[str, int]:
    game = facade.execute(StartGame(table=table, actor="jana"))
    clock.advance(minutes=30)
    facade.execute(StopGame(game=game, actor="jana"))
    with facade._hub.store.reader() as db:
        tab = int(db.scalar(select(Tab.id).where(Tab.session_id == game)))
    owed = facade.reads.till.tab_payments(tab).owed_cents
    payment = facade.execute(PayTab(tab=tab, method="card", amount_cents=owed, actor="jana")).payment_id
    return {"tab_id": tab, "payment_id": payment, "session_id": game, "game_id": game}


def _unpaid_game(facade: Any, clock: Any, table: str) -> dict[str, int]:
    game = facade.execute(StartGame(table=table, actor="jana"))
    clock.advance(minutes=30)
    facade.execute(StopGame(game=game, actor="jana"))
    with facade._hub.store.reader() as db:
        tab = int(db.scalar(select(Tab.id).where(Tab.session_id == game)))
    return {"tab_id": tab, "session_id": game, "game_id": game}


def _path(template: str, ids: dict[str, int]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(ids[m.group(1)]), template)


@sqlite_only
def test_staff_read_todays_and_unpaid_money_by_id_and_older_money_is_the_managers(db_url: str, clock: FakeClock) -> None:
    names = {n for p in GETS for n in re.findall(r"\{(\w+)\}", p)}
    assert names <= set(MONEY) | OTHER, f"a per-id route names {names - set(MONEY) - OTHER}: is it money? add it to MONEY or OTHER"
    money_routes = [p for p in GETS if any(f"{{{n}}}" in p for n in MONEY)]
    assert len(money_routes) >= 9, money_routes  # the API's and the pages' tab, payment, receipt and game reads
    with day_hub(db_url, clock) as (hub, facade):
        add_users(hub, {"jana": "staff", "boss": "manager"}, PASSWORD, CHEAP)
        old = _paid_game(facade, clock, "pool-01")  # 1 December, paid
        left = _unpaid_game(facade, clock, "pool-02")  # 1 December, still unpaid
        facade.execute(CloseDay(day=local(2026, 12, 1, 12).date(), counted_cents=0, open_tabs_ok=True, actor="jana"))
        clock.set(local(2026, 12, 2, 16, 0))
        facade.execute(CloseDay(day=local(2026, 12, 2, 12).date(), counted_cents=0, open_tabs_ok=True, actor="jana"))
        clock.set(local(2026, 12, 3, 16, 0))  # 1 December is now neither running, open, nor the last closed
        today = _paid_game(facade, clock, "pool-03")
        staff, manager = Browser(bound_app(hub)), Browser(bound_app(hub))
        staff.login("jana", PASSWORD)
        manager.login("boss", PASSWORD)
        wrong = []
        for template in money_routes:
            asks = {n for n in MONEY if f"{{{n}}}" in template}
            for who, ids, expected in (
                (staff, old, 403),
                (manager, old, 200),
                (staff, today, 200),
                *([(staff, left, 200)] if asks <= set(left) else []),
            ):
                path = _path(template, ids)
                got = who.get(path).status_code
                if got != expected:
                    wrong.append(f"{'staff' if who is staff else 'manager'} GET {path}: {got}, expected {expected}")
        assert wrong == [], "\n".join(wrong)
