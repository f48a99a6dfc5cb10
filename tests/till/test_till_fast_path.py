"""Issue 19, the bartender's fast path on the hub's writer and read models, on SQLite and PostgreSQL:
a one-tap payment refused when the bill moved since the page was drawn (item 9), a paid split part
refused as that part, in Slovak (item 12), a sale at the bar without a typed name (item 15), the
products most sold first and every game stopped at closing (item 10), the receipts journal (item 13)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.domain.till.tab_name import bar_label
from broker.floor.closing import StopAllGames
from broker.floor.games import PauseGame, StartGame
from broker.hall.facade import ServiceError
from broker.storage.models import AuditEntry, Game, Tab
from broker.till.payment_reads import journal_matches
from broker.till.payments import PayTab, ReversePayment
from broker.till.tabs import AddTabItem, OpenWalkInTab, VoidTabItem
from dashboard.web.i18n import refusal_text
from tests.support.matching import some
from tests.till.payments_support import MANAGER, STAFF, add_item, clock, facade, played_tab, rows, service, set_split  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from tests.dashboard.conftest import FakeClock


LINE = {
    "description": "Čas",
    "description_en": "Time",
    "quantity": 1,
    "unit_cents": 450,
    "amount_cents": 450,
    "vat_percent": 23,
    "category": "table_time",
}
VAT = [{"vat_percent": 23, "gross_cents": 450, "vat_cents": 84}]


def _product(facade: Any, name: str) -> int:
    result: int = next(p.id for p in facade.reads.till.products() if p.name == name)
    return result


def test_a_one_tap_payment_is_refused_when_the_bill_moved_since_the_page(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)  # 9,00 € shown on the page
    add_item(facade, tab, "Pivo 0,5 l", 250, 23)  # another tablet puts a beer on it meanwhile: 11,50 €
    before = rows(facade)
    with pytest.raises(ServiceError) as refused:
        facade.execute(PayTab(tab=tab, method="cash", amount_cents=900, expect_owed_cents=900, actor=STAFF))
    assert "now owes 11,50\u00a0€, not 9,00\u00a0€" in str(refused.value)
    assert refusal_text(refused.value, "sk") == (
        "Účet sa medzitým zmenil: Pool 1 teraz dlží 11,50\u00a0€, nie 9,00\u00a0€. Overte to s hosťom a zaplaťte znova."
    )
    assert rows(facade) == before
    taken = facade.execute(PayTab(tab=tab, method="cash", amount_cents=1150, tendered_cents=2000, expect_owed_cents=1150, actor=STAFF))
    assert some(facade.reads.till.payment(taken.payment_id)).change_cents == 850
    assert some(facade.reads.till.tab_payments(tab)).status == "paid"


def test_a_paid_part_is_refused_as_that_part_in_slovak_never_moved_to_the_next(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)  # 9,00 €
    set_split(facade, tab, {"mode": "equal", "parts": [{"n": n, "amount_cents": 450, "lines": [LINE], "vat": VAT} for n in (1, 2)]})
    facade.execute(PayTab(tab=tab, method="card", amount_cents=450, part=1, actor=STAFF))
    before = rows(facade)
    for expect in (None, 450):  # a stale "Zaplatiť časť 1" form, with or without the amount it showed
        with pytest.raises(ServiceError) as refused:
            facade.execute(PayTab(tab=tab, method="cash", amount_cents=450, part=1, expect_owed_cents=expect, actor=STAFF))
        assert str(refused.value) == "Part 1 of Pool 1 is paid already; choose a part still to pay."
        assert refusal_text(refused.value, "sk") == "Časť 1 účtu Pool 1 je už zaplatená; vyberte časť, ktorá ešte nie je zaplatená."
    assert rows(facade) == before  # nothing paid, and part 2 still owes all of it
    assert [p.owed_cents for p in some(facade.reads.till.tab_payments(tab)).parts] == [0, 450]


def test_a_sale_at_the_bar_needs_no_typed_name(facade: HubFacade, clock: FakeClock) -> None:
    first = facade.execute(OpenWalkInTab(form_key="bar-sale-key-1", actor=STAFF))  # 18:00 in Bratislava
    assert facade.execute(OpenWalkInTab(form_key="bar-sale-key-1", actor=STAFF)) == first  # a double tap: one tab
    second = facade.execute(OpenWalkInTab(label="  ", actor=STAFF))
    clock.advance(minutes=1)
    third = facade.execute(OpenWalkInTab(actor=STAFF))
    named = facade.execute(OpenWalkInTab(label="Peter", actor=STAFF))
    assert [facade.reads.till.tab(t).name for t in (first, second, third, named)] == ["Bar 18:00", "Bar 18:00 (2)", "Bar 18:01", "Peter"]
    before = rows(facade)
    with pytest.raises(ServiceError, match="at least 2 letters, or leave the name empty"):
        facade.execute(OpenWalkInTab(label="P", actor=STAFF))
    assert rows(facade) == before
    facade.execute(AddTabItem(tab=first, product=_product(facade, "Kofola 0,5 l"), actor=STAFF))
    taken = facade.execute(PayTab(tab=first, method="card", amount_cents=200, expect_owed_cents=200, actor=STAFF))
    assert some(facade.reads.till.receipt_of(taken.payment_id)).table_name == "Bar 18:00"


def test_the_bars_label_rule() -> None:
    at = datetime(2026, 11, 10, 23, 59)  # the venue's time, as the handler gives it
    assert bar_label(at, set()) == "Bar 23:59"
    assert bar_label(at, {"Bar 23:59", "Bar 23:59 (2)"}) == "Bar 23:59 (3)"


def test_the_products_most_sold_this_month_first_voided_ones_not_counted(facade: HubFacade, clock: FakeClock) -> None:
    kofola, beer, coffee = (_product(facade, n) for n in ("Kofola 0,5 l", "Pivo 0,5 l", "Káva espresso"))
    tab = facade.execute(OpenWalkInTab(actor=STAFF))
    facade.execute(AddTabItem(tab=tab, product=coffee, quantity=9, actor=STAFF))  # last month's habit
    clock.advance(days=31)
    facade.execute(AddTabItem(tab=tab, product=kofola, quantity=2, actor=STAFF))
    facade.execute(AddTabItem(tab=tab, product=beer, quantity=1, actor=STAFF))
    wrong = facade.execute(AddTabItem(tab=tab, product=beer, quantity=5, actor=STAFF))
    facade.execute(VoidTabItem(tab=tab, item=wrong, reason="zadané omylom", actor=STAFF))
    sold = {p.name: (p.sold, p.used) for p in facade.reads.till.products()}
    assert sold["Kofola 0,5 l"] == (2, True) and sold["Pivo 0,5 l"] == (1, True) and sold["Káva espresso"] == (0, True)
    assert sold["Minerálka 0,33 l"] == (0, False)
    from dashboard.web.tab_parts import most_sold

    order = [p.name for p in most_sold(facade.reads.till.products(active_only=True))]
    assert order[:2] == ["Kofola 0,5 l", "Pivo 0,5 l"]


def test_every_game_stops_at_closing_its_tab_left_open_or_paid(facade: HubFacade, clock: FakeClock) -> None:
    one = facade.execute(StartGame(table="pool-01", actor=STAFF))
    two = facade.execute(StartGame(table="pool-02", actor=STAFF))
    three = facade.execute(StartGame(table="carom-01", actor=STAFF))
    clock.advance(minutes=30)
    facade.execute(PauseGame(game=two, actor=STAFF))
    tab_three = facade.reads.till.tab_of_game(three)
    assert tab_three is not None
    facade.execute(PayTab(tab=tab_three, method="card", amount_cents=300, actor=STAFF))  # 30 min paid up front
    add_item(facade, some(facade.reads.till.tab_of_game(one)), "Pivo 0,5 l", 250, 23)
    done = facade.execute(StopAllGames(actor=MANAGER))
    assert [(g.game, g.table, g.total_cents, g.owed_cents) for g in done.games] == [
        (one, "pool-01", 300, 550),
        (two, "pool-02", 300, 300),
        (three, "carom-01", 300, 0),
    ]
    assert [g.game for g in done.left_open] == [one, two]
    assert facade.reads.floor.hall_snapshot().open == {}
    assert {u.game_id for u in facade.reads.till.unpaid_tabs()} == {one, two}
    assert some(facade.reads.till.tab_payments(tab_three)).settled_at is not None  # paid while it ran: settled by the stop
    with facade._hub.store.reader() as db:
        stopped = db.scalars(select(Game).where(Game.state == "stopped")).all()
        assert sorted(g.id for g in stopped) == [one, two, three]
        ops = [(o.kind, o.actor, o.reason) for g in stopped for o in g.ops if o.kind == "stop"]
        assert ops == [("stop", MANAGER, "closing")] * 3
        assert db.scalar(select(Tab.settled_at).where(Tab.id == facade.reads.till.tab_of_game(one))) is None
    assert facade.execute(StopAllGames(actor=MANAGER)).games == ()  # nothing left to stop


def test_the_receipts_journal_of_a_business_day(facade: HubFacade, clock: FakeClock) -> None:
    one = played_tab(facade, clock, table="pool-01")  # 9,00 €, stopped 19:30
    cash = facade.execute(PayTab(tab=one, method="cash", amount_cents=900, tendered_cents=1000, actor=STAFF))
    bar = facade.execute(OpenWalkInTab(label="Peter pri bare", actor=STAFF))
    facade.execute(AddTabItem(tab=bar, product=_product(facade, "Pivo 0,5 l"), actor=STAFF))
    beer = facade.execute(PayTab(tab=bar, method="card", amount_cents=250, actor=STAFF))
    back = facade.execute(ReversePayment(payment=beer.payment_id, reason="omyl", actor=MANAGER))
    day = facade.reads.today()
    journal = facade.reads.till.receipts_journal(day)
    assert [(r.receipt_no, r.name.name, r.amount_cents, r.method_name, r.change_cents) for r in journal] == [
        (3, "Peter pri bare", -250, "Karta", 0),
        (2, "Peter pri bare", 250, "Karta", 0),
        (1, "Pool 1, hra č. 1", 900, "Hotovosť", 100),
    ]
    assert (journal[0].reverses_no, journal[1].reversed_by_no, journal[0].payment_id) == (2, 3, back.payment_id)
    assert journal[1].walk_in and not journal[2].walk_in and journal[2].payment_id == cash.payment_id
    assert [r.receipt_no for r in journal if journal_matches(r, "PETER")] == [3, 2]
    assert [r.receipt_no for r in journal if journal_matches(r, "1")] == [1]  # a number is a receipt's, or in a name
    assert [r.receipt_no for r in journal if journal_matches(r, "", "bar")] == [3, 2]
    assert [r.receipt_no for r in journal if journal_matches(r, "", "pool-01")] == [1]
    assert facade.reads.till.receipts_journal(day - timedelta(days=1)) == []
    with facade._hub.store.reader() as db:
        assert db.scalar(select(AuditEntry.actor).where(AuditEntry.action == "payment.reverse")) == MANAGER
