"""The close-out on the hub's writer, on SQLite and PostgreSQL: open with a float, close once with the
counted cash, the Z report frozen; the evening's game past midnight counted on the evening's day."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import date
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.domain.till.revenue import WALK_IN
from broker.domain.till.zreport import ZReport
from broker.floor.games import CorrectBill, StartGame, StopGame
from broker.hall.facade import ServiceError
from broker.storage.models import AuditEntry, BusinessDay, Payment
from broker.till.closeout import CloseDay, OpenDay
from broker.till.payments import PayTab
from broker.till.tabs import AddTabItem, OpenWalkInTab, VoidTabItem
from tests.support.till_days import FakeClock, add_item, day_hub, line, local, pay, settle, tab_of_game, void_item, walk_in

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade


DEC1 = date(2026, 12, 1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(local(2026, 12, 1, 15, 30))


@pytest.fixture
def hall(db_url: str, clock: FakeClock) -> Iterator[tuple[Any, HubFacade]]:
    with day_hub(db_url, clock) as pair:
        yield pair


def _rows(hub: Any) -> tuple[list[tuple[Any, Any, Any, Any, Any]], Any, Any]:
    with hub.store.reader() as db:
        days = [
            (d.day, d.float_cents, d.closed_at, d.counted_cents, d.report)
            for d in db.scalars(select(BusinessDay).order_by(BusinessDay.day))
        ]
        audit = db.scalar(select(func.count()).select_from(AuditEntry))
        pays = db.scalar(select(func.count()).select_from(Payment))
    return days, audit, pays


def test_close_out_at_0130_counts_the_game_started_before_midnight_on_the_evening(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    assert facade.execute(OpenDay(float_cents=5000, actor="jana")) == DEC1
    clock.set(local(2026, 12, 1, 23, 10))
    game = facade.execute(StartGame(table="pool-01", actor="jana"))
    tab = tab_of_game(hub, game)
    add_item(hub, tab, "Pivo 0,5 l", 250, 2, vat=19)
    clock.set(local(2026, 12, 2, 0, 50))  # past midnight: still the evening of the 1st
    state = facade.execute(StopGame(game=game, actor="jana"))
    time_cents = facade.reads.floor.bill_of(state).total_cents
    assert time_cents == 1000  # 1 h 40 min at 6 €/h
    clock.set(local(2026, 12, 2, 0, 55))
    _, day = pay(hub, tab, time_cents, lines=[line("Čas pri stole", time_cents, category="table_time")], tendered=2000)
    assert day == DEC1
    _, day = pay(hub, tab, 500, method="card", lines=[line("Pivo 0,5 l", 500, vat=19, qty=2)])
    settle(hub, tab)
    clock.set(local(2026, 12, 2, 1, 30))
    assert facade.reads.till.day_overview().day == DEC1
    z = facade.execute(CloseDay(day=DEC1, counted_cents=5000 + 1000 - 20, actor="jana"))
    assert z.day == DEC1 and z.closed_by == "jana"
    assert z.expected_cash_cents == 6000 and z.counted_cents == 5980 and z.variance_cents == -20
    assert z.total_cents == 1500 and z.table_time_cents == 1000 and z.items_cents == 500
    assert {m.method: m.net_cents for m in z.by_method} == {"cash": 1000, "card": 500}
    assert {v.vat_percent: (v.gross_cents, v.vat_cents) for v in z.by_vat} == {23: (1000, 187), 19: (500, 80)}
    assert [(s.staff, s.net_cents) for s in z.by_staff] == [("jana", 1500)]
    assert z.open_tabs == ()
    # Frozen: read back from the row, the same report.
    assert facade.reads.till.day_report(DEC1) == z
    # The next evening's day is the one running now.
    assert facade.reads.till.day_overview().day == date(2026, 12, 2)


def test_a_day_closes_once_even_with_two_tablets_racing(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    facade.execute(OpenDay(float_cents=0, actor="jana"))
    pay(hub, walk_in(hub), 300)
    clock.set(local(2026, 12, 2, 1, 0))
    results: list[object] = []
    go = threading.Barrier(2)

    def close(who: str) -> None:
        go.wait()
        try:
            results.append(facade.execute(CloseDay(day=DEC1, counted_cents=300, actor=who)))
        except ServiceError as e:
            results.append(e)

    threads = [threading.Thread(target=close, args=(w,)) for w in ("jana", "boss")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    refused = [r for r in results if isinstance(r, ServiceError)]
    assert len(refused) == 1 and "already closed" in str(refused[0])
    before = _rows(hub)
    with pytest.raises(ServiceError, match="already closed"):
        facade.execute(CloseDay(day=DEC1, counted_cents=999, actor="jana"))
    assert _rows(hub) == before


@pytest.mark.parametrize("garbage", [-1, 10_000_001, 1.5, "412,50", None, True, 2**63])
def test_counted_cash_garbage_is_refused_and_changes_nothing(hall: tuple[Any, HubFacade], clock: FakeClock, garbage: Any) -> None:
    hub, facade = hall
    facade.execute(OpenDay(float_cents=1000, actor="jana"))
    pay(hub, walk_in(hub), 300)
    before = _rows(hub)
    with pytest.raises(ServiceError, match="counted cash must be an amount"):
        facade.execute(CloseDay(day=DEC1, counted_cents=garbage, actor="jana"))
    with pytest.raises(ServiceError, match="float must be an amount"):
        facade.execute(OpenDay(float_cents=garbage, actor="jana"))
    assert _rows(hub) == before


def test_after_the_close_a_payment_and_a_reversal_land_on_the_next_day_and_say_which_day_they_correct(
    hall: tuple[Any, HubFacade], clock: FakeClock
) -> None:
    hub, facade = hall
    facade.execute(OpenDay(float_cents=2000, actor="jana"))
    tab = walk_in(hub, "Bar")
    first, _ = pay(hub, tab, 400, lines=[line("Kofola", 400, vat=19)])
    other = walk_in(hub, "Terasa")
    clock.set(local(2026, 12, 2, 1, 30))
    closed = facade.execute(CloseDay(day=DEC1, counted_cents=2400, open_tabs_ok=True, actor="jana"))
    frozen = _rows(hub)[0][0][4]
    clock.set(local(2026, 12, 2, 2, 0))  # still the night of the 1st, but the 1st is closed
    _, day = pay(hub, tab, -400, method="cash", staff="boss", reverses=first, reason="zlý nápoj")
    assert day == date(2026, 12, 2)
    _, day = pay(hub, other, 700, method="card", lines=[line("Pizza", 700, vat=19, category="food")])
    assert day == date(2026, 12, 2)
    void = add_item(hub, tab, "Džús", 200)
    void_item(hub, void, "omylom")
    assert _rows(hub)[0][0][4] == frozen and facade.reads.till.day_report(DEC1) == closed  # the closed day never changes
    nxt = facade.reads.till.day_report(date(2026, 12, 2))
    assert nxt.total_cents == 300 and nxt.reversals_cents == -400 and nxt.float_cents == 0 and nxt.auto_opened
    assert [(e.corrects_day, e.amount_cents, e.reversal) for e in nxt.earlier_days] == [(DEC1, -400, True), (DEC1, 700, False)]
    assert [(r.amount_cents, r.reason, r.corrects_day) for r in nxt.refunds] == [(-400, "zlý nápoj", DEC1)]
    assert [(v.description, v.reason) for v in nxt.voids] == [("Džús", "omylom")]
    assert nxt.expected_cash_cents == -400  # the refund came out of a drawer that started at 0


def test_a_payment_on_a_day_nobody_opened_opens_it_with_float_zero_then_the_float_is_given_once(
    hall: tuple[Any, HubFacade], clock: FakeClock
) -> None:
    hub, facade = hall
    clock.set(local(2026, 12, 1, 17, 0))
    pay(hub, walk_in(hub), 300, staff="jana")
    overview = facade.reads.till.day_overview()
    assert overview.opened and overview.report.auto_opened and overview.report.float_cents == 0
    assert overview.report.opened_by == "jana"
    with hub.store.reader() as db:
        assert db.scalar(select(AuditEntry.action).where(AuditEntry.target == "day:2026-12-01")) == "day.auto_open"
    facade.execute(OpenDay(float_cents=5000, actor="jana"))  # the float counted later still counts
    z = facade.reads.till.day_report(DEC1)
    assert z.float_cents == 5000 and not z.auto_opened and z.expected_cash_cents == 5300
    with pytest.raises(ServiceError, match="already open"):
        facade.execute(OpenDay(float_cents=100, actor="jana"))


def test_closing_with_tabs_open_needs_confirmation_and_lists_them(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    facade.execute(OpenDay(float_cents=0, actor="jana"))
    tab = walk_in(hub, "Bar")
    add_item(hub, tab, "Pivo", 250, 2)
    game = facade.execute(StartGame(table="pool-02", actor="jana"))
    clock.set(local(2026, 12, 1, 16, 30))
    before = _rows(hub)
    with pytest.raises(ServiceError, match="Tabs still unpaid: 2"):
        facade.execute(CloseDay(day=DEC1, counted_cents=0, actor="jana"))
    assert _rows(hub) == before
    z = facade.execute(CloseDay(day=DEC1, counted_cents=0, open_tabs_ok=True, actor="jana"))
    assert z.open_tabs_confirmed
    assert [(t.where, t.owed_cents, t.running) for t in z.open_tabs] == [("Bar", 500, False), ("Pool 2", 600, True)]
    assert game


def test_voids_refunds_and_manager_corrections_are_listed_with_who_and_why(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    _hub, facade = hall
    facade.execute(OpenDay(float_cents=0, actor="jana"))
    game = facade.execute(StartGame(table="pool-03", actor="jana"))
    tab = facade.reads.till.game_tab(game)
    item = facade.execute(AddTabItem(tab=tab, product=facade.reads.till.product_of_extra("topping").id, quantity=2, actor="jana"))
    facade.execute(VoidTabItem(tab=tab, item=item, reason="zadané dvakrát", actor="jana"))
    clock.set(local(2026, 12, 1, 17, 0))
    facade.execute(StopGame(game=game, actor="jana"))
    facade.execute(CorrectBill(game=game, amount_cents=-100, reason="stála guľa", actor="boss"))
    z = facade.execute(CloseDay(day=DEC1, counted_cents=0, open_tabs_ok=True, actor="jana"))
    assert [(v.kind, v.description, v.quantity, v.amount_cents, v.by, v.reason, v.where) for v in z.voids] == [
        ("item", "Prísada na pizzu navyše", 2, 120, "jana", "zadané dvakrát", "Pool 3")
    ]
    assert [(c.amount_cents, c.by, c.reason, c.where, c.game) for c in z.corrections] == [(-100, "boss", "stála guľa", "Pool 3", game)]


def test_a_day_in_the_future_cannot_be_closed_and_a_missing_day_is_not_found(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    with pytest.raises(ServiceError, match="has not begun"):
        facade.execute(CloseDay(day=date(2026, 12, 3), counted_cents=0, actor="jana"))
    from broker.hall.facade import NotFound

    with pytest.raises(NotFound):
        facade.reads.till.day_report(date(2026, 11, 1))
    assert _rows(hub)[0] == []


def test_a_past_day_nobody_opened_is_not_closed_by_a_stray_request(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    for day in (date(2026, 11, 30), date(1, 1, 1), date(2025, 6, 1)):
        with pytest.raises(ServiceError, match="no business day"):
            facade.execute(CloseDay(day=day, counted_cents=0, actor="jana"))
    assert _rows(hub)[0] == []


def test_two_hubs_on_one_database_close_a_day_once(db_url: str, clock: FakeClock) -> None:
    """A standby taking over while the old hub still answers: each has its own writer, the row decides."""
    from broker.hall.facade import StoreUnavailable

    with day_hub(db_url, clock) as (hub_a, a), day_hub(db_url, clock) as (_hub_b, b):
        a.execute(OpenDay(float_cents=1000, actor="jana"))
        pay(hub_a, walk_in(hub_a), 300)
        clock.set(local(2026, 12, 2, 1, 0))
        results: list[ZReport | Exception] = []
        go = threading.Barrier(2)

        def close(facade: Any, who: str) -> None:
            go.wait()
            try:
                results.append(facade.execute(CloseDay(day=DEC1, counted_cents=1300, actor=who)))
            except (ServiceError, StoreUnavailable) as e:
                results.append(e)

        threads = [threading.Thread(target=close, args=(f, w)) for f, w in ((a, "jana"), (b, "boss"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        closed = [r for r in results if not isinstance(r, Exception)]
        assert len(closed) == 1, results
        with hub_a.store.reader() as db:
            closes = db.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "day.close"))
            row = db.get(BusinessDay, DEC1)
            assert closes == 1 and row.closed_by == closed[0].closed_by
        assert b.reads.till.day_report(DEC1) == closed[0]


def test_a_day_nobody_closed_is_shown_the_next_evening_and_can_still_be_closed(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    hub, facade = hall
    pay(hub, walk_in(hub), 300)  # the 1st opens itself; nobody closes it
    clock.set(local(2026, 12, 2, 17, 0))
    pay(hub, walk_in(hub), 500, method="card")
    overview = facade.reads.till.day_overview()
    assert overview.day == date(2026, 12, 2) and overview.unclosed == (DEC1,)
    assert overview.at_hand(DEC1) and not overview.at_hand(date(2026, 11, 30))
    z = facade.execute(CloseDay(day=DEC1, counted_cents=300, actor="jana"))
    assert z.total_cents == 300 and z.variance_cents == 0  # only its own money, not the 2nd's
    assert facade.reads.till.day_overview().unclosed == () and facade.reads.till.day_report(date(2026, 12, 2)).total_cents == 500


# Issue 19, item 8: the Z report and the reports agree, and a late close-out keeps to its own day.


def _product(facade: Any, name: str) -> int:
    result: int = next(p.id for p in facade.reads.till.products() if p.name == name)
    return result


def test_the_reports_revenue_of_a_day_is_its_z_reports_takings_bar_items_included(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    _hub, facade = hall
    game = facade.execute(StartGame(table="pool-01", actor="jana"))
    tab = facade.reads.till.game_tab(game)
    facade.execute(AddTabItem(tab=tab, product=facade.reads.till.product_of_extra("topping").id, actor="jana"))
    clock.set(local(2026, 12, 1, 16, 0))
    facade.execute(StopGame(game=game, actor="jana"))
    facade.execute(PayTab(tab=tab, method="cash", amount_cents=360, actor="jana"))  # 30 min and a topping
    bar = facade.execute(OpenWalkInTab(label="Bar", actor="jana"))
    facade.execute(AddTabItem(tab=bar, product=_product(facade, "Kofola 0,5 l"), quantity=2, actor="jana"))
    facade.execute(PayTab(tab=bar, method="card", amount_cents=400, actor="jana"))
    z, revenue = facade.reads.till.day_report(DEC1), facade.reads.reports.revenue(DEC1, DEC1)
    assert revenue.total_cents == z.total_cents == 760  # before, the reports counted the games' bills only: 3,60 €
    assert (
        revenue.by_category
        == {c.category: c.net_cents for c in z.by_category}
        == {
            "table_time": 300,
            "drinks": 400,
            "pizza_toppings": 60,
        }
    )
    assert revenue.by_table == {"pool-01": 360, WALK_IN: 400} and revenue.by_day == {"2026-12-01": 760}
    assert facade.reads.reports.table_time(DEC1, DEC1).total_cents == 300  # billed table time: a figure of its own


def test_a_late_close_out_lists_only_its_own_days_tabs(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    _hub, facade = hall
    clock.set(local(2026, 12, 1, 20, 0))
    facade.execute(OpenDay(float_cents=0, actor="jana"))
    evening = facade.execute(OpenWalkInTab(label="Terasa", actor="jana"))
    facade.execute(AddTabItem(tab=evening, product=_product(facade, "Pivo 0,5 l"), actor="jana"))
    clock.set(local(2026, 12, 2, 7, 0))  # the 2nd has begun (the cut is 6:00) and the 1st is still open
    morning = facade.execute(OpenWalkInTab(label="Raňajky", actor="jana"))
    facade.execute(AddTabItem(tab=morning, product=_product(facade, "Káva espresso"), actor="jana"))
    clock.set(local(2026, 12, 2, 8, 0))
    with pytest.raises(ServiceError, match="Tabs still unpaid: 1, "):
        facade.execute(CloseDay(day=DEC1, counted_cents=0, actor="jana"))
    z = facade.execute(CloseDay(day=DEC1, counted_cents=0, open_tabs_ok=True, actor="jana"))
    assert [(t.tab_id, t.where) for t in z.open_tabs] == [(evening, "Terasa")]
    assert [t.tab_id for t in facade.reads.till.day_report(date(2026, 12, 2)).open_tabs] == [evening, morning]


def test_a_tab_opened_after_the_close_out_belongs_to_the_next_day(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    _hub, facade = hall
    clock.set(local(2026, 12, 1, 20, 0))
    facade.execute(OpenDay(float_cents=0, actor="jana"))
    clock.set(local(2026, 12, 2, 3, 0))  # the close-out at 3:00, still the night of the 1st
    facade.execute(CloseDay(day=DEC1, counted_cents=0, actor="jana"))
    clock.set(local(2026, 12, 2, 3, 30))
    late = facade.execute(OpenWalkInTab(label="Neskorý hosť", actor="jana"))
    game = facade.execute(StartGame(table="pool-03", actor="jana"))
    assert (
        facade.reads.till.tab(late).business_day
        == facade.reads.till.tab(facade.reads.till.game_tab(game)).business_day
        == date(2026, 12, 2)
    )
    facade.execute(AddTabItem(tab=late, product=_product(facade, "Kofola 0,5 l"), actor="jana"))
    facade.execute(PayTab(tab=late, method="cash", amount_cents=200, actor="jana"))
    nxt = facade.reads.till.day_report(date(2026, 12, 2))
    assert nxt.total_cents == 200 and nxt.earlier_days == ()  # the next day's own money, no correction of the 1st
