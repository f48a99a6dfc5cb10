"""Issue 29, items 29 and 30: every receipt of a tab adds up to its bill per VAT rate, and the Z report's
categories and VAT rows are what was sold, after voids, a manager's corrections of a game's bill, splits,
merges and reversals, cash rounded to
0,05 € and card not. The issue's two cases, then a property over sequences of till operations through
the real hub on SQLite (in-process, no MQTT: broker.compose.running_hub on a fake clock).

Item 29: A 10,00 € @19 % and B 10,00 € @5 %; 10,00 € paid by card; the manager voided A → 200 and the
tab was paid, its one receipt declaring 5,00 € @19 % and 5,00 € @5 % of a bill that is 10,00 € @5 %.
Item 30: A 10,00 € @19 % drinks, B 10,00 € @5 % food, C 6,00 € @23 % other; 10,00 € paid; A voided;
6,00 € paid: the day showed drinks 3,85, food 7,59, other 4,56 instead of food 10,00, other 6,00."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from broker.domain.till.money import TABLE_TIME, vat_rows
from broker.domain.till.receipt import lines_from_json
from broker.floor.games import CorrectBill, StartGame, StopGame
from broker.hall.facade import HubFacade, ServiceError
from broker.storage.models import Payment, Tab
from broker.till.payment_reads import TabPayView
from broker.till.payments import PayTab, ReversePayment
from broker.till.tabs import AddProduct, AddTabItem, MergeTabs, OpenWalkInTab, SplitTab, VoidTabItem
from tests.support.examples import few
from tests.support.sqlite_template import migrated_sqlite
from tests.support.till_days import FakeClock, day_hub, local

STAFF, MANAGER = "jana", "boss"
FIRST_DAY = date(2026, 12, 1)

# (price, VAT, category): round prices, so that a void often leaves a rate owing exactly what was paid there
PRODUCTS = (
    (1000, 19, "drinks"),
    (1000, 5, "food"),
    (600, 23, "other"),
    (250, 19, "food"),
    (333, 23, "drinks"),
    (500, 0, "tournament_entry"),
    (1000, 19, "food"),
)


@dataclass
class Hall:
    facade: HubFacade
    clock: FakeClock
    products: list[int]
    days: Iterator[int] = field(default_factory=lambda: iter(range(10_000)))

    def new_day(self) -> date:
        """Each case on a business day of its own, so the day's Z report is that case's alone."""
        n = next(self.days)
        self.clock.set(local(2026, 12, 1, 17) + timedelta(days=n))
        return FIRST_DAY + timedelta(days=n)


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hall]:
    url = migrated_sqlite(tmp_path_factory.mktemp("receipts") / "lavos.db")
    clock = FakeClock(local(2026, 12, 1, 17))
    with day_hub(url, clock) as (_hub, facade):
        ids = [
            facade.execute(
                AddProduct(name=f"Vec {n}", name_en=f"Thing {n}", price_cents=cents, vat_percent=vat, category=cat, actor=MANAGER)
            )
            for n, (cents, vat, cat) in enumerate(PRODUCTS)
        ]
        yield Hall(facade, clock, ids)


def _receipt_rates(facade: HubFacade, tab: int) -> dict[int, int]:
    """Gross per VAT rate over every receipt of the tab (reversals included), as printed."""
    gross: Counter[int] = Counter()
    with facade._hub.store.reader() as db:
        for p in db.scalars(select(Payment).where(Payment.tab_id == tab)):
            for row in vat_rows(lines_from_json(p.lines)):
                gross[row.vat_percent] += row.gross_cents
    return {r: c for r, c in gross.items() if c}


def _view(facade: HubFacade, tab: int) -> TabPayView:
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    return view


def _bill_rates(facade: HubFacade, tab: int) -> dict[int, int]:
    return {v.vat_percent: v.gross_cents for v in _view(facade, tab).vat if v.gross_cents}


def _item(hall: Hall, tab: int, product: int) -> int:
    return hall.facade.execute(AddTabItem(tab=tab, product=hall.products[product], actor=STAFF))


def test_item_29_a_void_that_would_leave_a_paid_receipt_wrong_is_refused_until_the_payment_is_reversed(hall: Hall) -> None:
    f = hall.facade
    hall.new_day()
    tab = f.execute(OpenWalkInTab(label="Novák", actor=STAFF))
    a, _b = _item(hall, tab, 0), _item(hall, tab, 1)  # A 10,00 € @19 %, B 10,00 € @5 %
    paid = f.execute(PayTab(tab=tab, method="card", amount_cents=1000, actor=STAFF))
    assert _receipt_rates(f, tab) == {19: 500, 5: 500}
    with pytest.raises(ServiceError, match="reverse its payment first"):
        f.execute(VoidTabItem(tab=tab, item=a, reason="omyl", may_void_paid=True, actor=MANAGER))
    view = _view(f, tab)
    assert (view.total_cents, view.owed_cents) == (2000, 1000)  # nothing changed
    # What the message says: the refund, the void, and the corrected bill paid on a new receipt.
    f.execute(ReversePayment(payment=paid.payment_id, reason="omyl na účte", actor=MANAGER))
    f.execute(VoidTabItem(tab=tab, item=a, reason="omyl", may_void_paid=True, actor=MANAGER))
    f.execute(PayTab(tab=tab, method="card", amount_cents=1000, actor=STAFF))
    assert _view(f, tab).status == "paid"
    assert _receipt_rates(f, tab) == _bill_rates(f, tab) == {5: 1000}


def _game_tab(hall: Hall, table: str, minutes: int) -> tuple[int, int]:
    """A game played `minutes` and stopped: (the game, its tab)."""
    f = hall.facade
    game = f.execute(StartGame(table=table, actor=STAFF))
    hall.clock.advance(minutes=minutes)
    f.execute(StopGame(game=game, actor=STAFF))
    with f._hub.store.reader() as db:
        tab = db.scalar(select(Tab.id).where(Tab.session_id == game))
    assert tab is not None
    return game, tab


def test_item_29_with_a_managers_correction_the_same_rule_as_a_void(hall: Hall) -> None:
    """Follow-up of item 29: a negative correction of a paid game's bill is the void's case. Table
    time T @23 % and B 10,00 € @5 %; 10,00 € paid by card (a receipt of T and B's shares); the manager
    corrects the bill by -T: the bill would be 10,00 € @5 %, owing nothing, its receipt declaring
    table time. Refused until the payment is reversed, as the void; and a correction that would
    leave money paid for nothing (a bill paid in full, then -1,00 €) likewise; and none on a split bill."""
    f = hall.facade
    hall.new_day()
    game, tab = _game_tab(hall, "pool-05", 47)
    _item(hall, tab, 1)  # B 10,00 € @5 %
    table_time = _view(f, tab).total_cents - 1000
    assert table_time > 0
    paid = f.execute(PayTab(tab=tab, method="card", amount_cents=1000, actor=STAFF))
    assert set(_receipt_rates(f, tab)) == {23, 5}
    with pytest.raises(ServiceError, match="reverse its payment first"):
        f.execute(CorrectBill(game=game, amount_cents=-table_time, reason="hra zadarmo", actor=MANAGER))
    view = _view(f, tab)
    assert (view.total_cents, view.owed_cents) == (table_time + 1000, table_time)  # nothing changed
    assert f.reads.floor.game(game).bill.total_cents == table_time
    f.execute(ReversePayment(payment=paid.payment_id, reason="hra zadarmo", actor=MANAGER))
    f.execute(CorrectBill(game=game, amount_cents=-table_time, reason="hra zadarmo", actor=MANAGER))
    f.execute(PayTab(tab=tab, method="card", amount_cents=1000, actor=STAFF))
    assert _view(f, tab).status == "paid"
    assert _receipt_rates(f, tab) == _bill_rates(f, tab) == {5: 1000}

    # Paid in full, then corrected down: money paid for nothing, refused the same way.
    game, tab = _game_tab(hall, "pool-06", 61)
    f.execute(PayTab(tab=tab, method="card", amount_cents=_view(f, tab).owed_cents, actor=STAFF))
    with pytest.raises(ServiceError, match="reverse its payment first"):
        f.execute(CorrectBill(game=game, amount_cents=-100, reason="zlá lampa", actor=MANAGER))
    assert _view(f, tab).owed_cents == 0 and _view(f, tab).status == "paid"
    # Up is fine: a later receipt takes what the correction adds.
    f.execute(CorrectBill(game=game, amount_cents=100, reason="tágo", actor=MANAGER))
    assert _view(f, tab).owed_cents == 100

    # A split freezes the bill (its parts are what is paid): a correction waits for its cancelling, as a void does.
    game, tab = _game_tab(hall, "pool-07", 53)
    f.execute(SplitTab(tab=tab, mode="equal", parts=2, actor=STAFF))
    with pytest.raises(ServiceError, match="cancel the split first"):
        f.execute(CorrectBill(game=game, amount_cents=-100, reason="zlá lampa", actor=MANAGER))
    assert sum(p.owed_cents for p in _view(f, tab).parts) == _view(f, tab).total_cents


def test_item_30_a_vat_correction_goes_back_to_the_category_it_was_paid_for(hall: Hall) -> None:
    f = hall.facade
    day = hall.new_day()
    tab = f.execute(OpenWalkInTab(label="Kováč", actor=STAFF))
    a = _item(hall, tab, 0)  # A 10,00 € @19 % drinks
    _item(hall, tab, 1)  # B 10,00 € @5 % food
    _item(hall, tab, 2)  # C 6,00 € @23 % other
    f.execute(PayTab(tab=tab, method="card", amount_cents=1000, actor=STAFF))
    f.execute(VoidTabItem(tab=tab, item=a, reason="vrátené", may_void_paid=True, actor=MANAGER))
    f.execute(PayTab(tab=tab, method="card", amount_cents=600, actor=STAFF))
    assert _view(f, tab).status == "paid"
    assert _receipt_rates(f, tab) == _bill_rates(f, tab) == {5: 1000, 23: 600}
    z = f.reads.till.day_report(day)
    assert {c.category: c.net_cents for c in z.by_category if c.net_cents} == {"food": 1000, "other": 600}
    assert {v.vat_percent: v.gross_cents for v in z.by_vat if v.gross_cents} == {5: 1000, 23: 600}


def test_a_void_after_a_part_payment_moves_its_share_to_what_is_left_at_the_same_rate(hall: Hall) -> None:
    """The rate still owes exactly what its receipt paid (10,00 € @19 %), but that share was half the
    drink's: the last receipt says nothing new at 19 %, and the day still shows food 10,00 € there."""
    f = hall.facade
    day = hall.new_day()
    tab = f.execute(OpenWalkInTab(label="Horváth", actor=STAFF))
    drink = _item(hall, tab, 0)  # 10,00 € @19 % drinks
    _item(hall, tab, 6)  # 10,00 € @19 % food
    _item(hall, tab, 1)  # 10,00 € @5 % food
    f.execute(PayTab(tab=tab, method="card", amount_cents=1500, actor=STAFF))  # 10,00 € @19 %, 5,00 € @5 %
    f.execute(VoidTabItem(tab=tab, item=drink, reason="vrátené", may_void_paid=True, actor=MANAGER))
    f.execute(PayTab(tab=tab, method="cash", amount_cents=500, actor=STAFF))
    assert _receipt_rates(f, tab) == _bill_rates(f, tab) == {19: 1000, 5: 1000}
    z = f.reads.till.day_report(day)
    assert {c.category: c.net_cents for c in z.by_category if c.net_cents} == {"food": 2000}


# --- the property: any sequence of till operations ---------------------------------------------
# (On the code before items 29 and 30 it fails in most runs of the ci profile's examples: a part
# payment, then a void or an item added at a rate of two categories, then the rest paid.)

# A payment of all that is owed, a half, a third or some cents; a void by the manager (after a payment) or staff.
PAY = st.tuples(
    st.just("pay"), st.integers(0, 9), st.sampled_from(["cash", "card"]), st.sampled_from([0, 1, 1, 2, 3]), st.integers(1, 3000)
)
VOID = st.tuples(st.just("void"), st.integers(0, 9), st.integers(0, 99), st.sampled_from([True, True, False]))
OP = st.one_of(  # payments and voids more often than the rest: the money moves between them
    PAY,
    PAY,
    PAY,
    VOID,
    VOID,
    VOID,
    st.tuples(st.just("add"), st.integers(0, 9), st.integers(0, len(PRODUCTS) - 1), st.integers(1, 2)),
    st.tuples(st.just("add"), st.integers(0, 9), st.integers(0, len(PRODUCTS) - 1), st.integers(1, 2)),
    st.tuples(st.just("reverse"), st.integers(0, 99)),
    st.tuples(st.just("split"), st.integers(0, 9), st.integers(2, 3), st.sampled_from(["equal", "items"])),
    st.tuples(st.just("merge"), st.integers(0, 9), st.integers(0, 9)),
    # A manager's correction of a game's bill: down past nothing (the bill stops at 0,00 €), down some, or up.
    st.tuples(st.just("correct"), st.integers(0, 9), st.sampled_from([-100_000, -300, -50, 100, 250])),
)
# A walk-in tab's first items, after a drink and a meal at 19 % (two categories at one rate: what a
# part payment pays for is shared between them, and a void moves it).
BAR = st.lists(st.integers(0, len(PRODUCTS) - 1), max_size=3).map(lambda more: [0, 6, *more])


@dataclass
class Case:
    tabs: list[int] = field(default_factory=list)
    items: dict[int, list[int]] = field(default_factory=dict)  # tab -> its items
    payments: list[int] = field(default_factory=list)
    games: dict[int, int] = field(default_factory=dict)  # a game's tab -> the game


def _open_tabs(hall: Hall, case: Case, games: int, walk_ins: list[list[int]]) -> None:
    f = hall.facade
    for n in range(games):  # a game's tab: table time (23 %), stopped so it can be split
        game = f.execute(StartGame(table=f"pool-0{n + 1}", actor=STAFF))
        hall.clock.advance(minutes=37 + 20 * n)
        f.execute(StopGame(game=game, actor=STAFF))
        with f._hub.store.reader() as db:
            tab = db.scalar(select(Tab.id).where(Tab.session_id == game))
            assert tab is not None
            case.tabs.append(tab)
            case.games[tab] = game
    case.items = {t: [] for t in case.tabs}
    for n, products in enumerate(walk_ins):
        tab = f.execute(OpenWalkInTab(label=f"Hosť {n + 1}", actor=STAFF))
        case.tabs.append(tab)
        case.items[tab] = [f.execute(AddTabItem(tab=tab, product=hall.products[p], actor=STAFF)) for p in products]


def _amount(owed: int, how: int, cents: int) -> int:
    return {0: owed, 1: max(1, owed // 2), 2: max(1, owed // 3)}.get(how, min(cents, owed))


def _apply(hall: Hall, case: Case, op: tuple[Any, ...]) -> None:
    f = hall.facade
    pick = case.tabs.__getitem__
    kind = op[0]
    if kind == "add":
        tab = pick(op[1] % len(case.tabs))
        for _ in range(op[3]):
            case.items[tab].append(f.execute(AddTabItem(tab=tab, product=hall.products[op[2]], actor=STAFF)))
    elif kind == "pay":
        view = _view(f, pick(op[1] % len(case.tabs)))
        parts = [p for p in view.parts if p.owed_cents > 0]
        part = parts[op[4] % len(parts)] if parts else None
        owed = part.owed_cents if part is not None else view.owed_cents
        amount = _amount(owed, op[3], op[4])
        pay = PayTab(tab=view.tab_id, method=op[2], amount_cents=amount, part=part.n if part is not None else None, actor=STAFF)
        case.payments.append(f.execute(pay).payment_id)
    elif kind == "void":
        tab = pick(op[1] % len(case.tabs))
        if case.items[tab]:
            item = case.items[tab][op[2] % len(case.items[tab])]
            f.execute(VoidTabItem(tab=tab, item=item, reason="storno", may_void_paid=op[3], actor=MANAGER if op[3] else STAFF))
    elif kind == "reverse":
        if case.payments:
            f.execute(ReversePayment(payment=case.payments[op[1] % len(case.payments)], reason="vrátené", actor=MANAGER))
    elif kind == "split":
        tab = pick(op[1] % len(case.tabs))
        if op[3] == "equal":
            f.execute(SplitTab(tab=tab, mode="equal", parts=op[2], actor=STAFF))
        else:  # the bill's lines dealt out to the parts in turn
            assignment = {line.key: n % op[2] + 1 for n, line in enumerate(_view(f, tab).lines)}
            f.execute(SplitTab(tab=tab, mode="items", assignment=assignment, actor=STAFF))
    elif kind == "merge":
        f.execute(MergeTabs(into=pick(op[1] % len(case.tabs)), from_tab=pick(op[2] % len(case.tabs)), actor=STAFF))
    elif kind == "correct":
        _correct(hall, case, op)


def _correct(hall: Hall, case: Case, op: tuple[Any, ...]) -> None:
    if not case.games:
        return
    tab = list(case.games)[op[1] % len(case.games)]
    hall.facade.execute(CorrectBill(game=case.games[tab], amount_cents=op[2], reason="korekcia", actor=MANAGER))


def _settle(hall: Hall, case: Case, method: str) -> list[int]:
    """Pay whatever each bill (or each split part) still owes; the bills that pay (not merged away)."""
    f = hall.facade
    homes = []
    for tab in case.tabs:
        view = _view(f, tab)
        if view.merged_into is not None:
            continue
        homes.append(tab)
        if not view.parts and view.owed_cents > 0:
            f.execute(PayTab(tab=tab, method=method, amount_cents=view.owed_cents, actor=STAFF))
        for part in view.parts:
            if part.owed_cents > 0:
                f.execute(PayTab(tab=tab, method=method, amount_cents=part.owed_cents, part=part.n, actor=STAFF))
    return homes


@settings(max_examples=few(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    games=st.integers(0, 1),
    walk_ins=st.lists(BAR, min_size=1, max_size=2),
    ops=st.lists(OP, min_size=2, max_size=8),
    last=st.sampled_from(["cash", "card"]),
)
def test_every_tabs_receipts_add_up_to_its_bill_and_the_day_is_what_was_sold(
    hall: Hall, games: Any, walk_ins: Any, ops: Any, last: Any
) -> None:
    f = hall.facade
    day = hall.new_day()
    case = Case()
    _open_tabs(hall, case, games, walk_ins)
    for op in ops:
        with contextlib.suppress(ServiceError):  # a refusal changes nothing; the sequence goes on
            _apply(hall, case, op)
    homes = _settle(hall, case, last)

    sold_by_category: Counter[str] = Counter()
    sold_by_rate: Counter[int] = Counter()
    for tab in homes:
        view = _view(f, tab)
        assert view.owed_cents == 0 and all(p.owed_cents == 0 for p in view.parts), view
        assert view.status == "paid" or not view.lines
        # Every receipt of the bill, reversals included, adds up to it per VAT rate.
        assert _receipt_rates(f, tab) == _bill_rates(f, tab)
        for line in view.lines:
            sold_by_category[line.category] += line.amount_cents
            sold_by_rate[line.vat_percent] += line.amount_cents
    z = f.reads.till.day_report(day)
    # The day's categories and VAT rows are what was sold (the bills paid), nothing else.
    assert {c.category: c.net_cents for c in z.by_category if c.net_cents} == {c: v for c, v in sold_by_category.items() if v}
    assert {v.vat_percent: v.gross_cents for v in z.by_vat if v.gross_cents} == {r: v for r, v in sold_by_rate.items() if v}
    assert z.table_time_cents == sold_by_category[TABLE_TIME]
    # The VAT of the day is its receipts' VAT (as printed, rate by rate).
    printed: Counter[int] = Counter()
    with f._hub.store.reader() as db:
        for p in db.scalars(select(Payment).where(Payment.business_day == day)):
            for row in vat_rows(lines_from_json(p.lines)):
                printed[row.vat_percent] += row.vat_cents
    assert {v.vat_percent: v.vat_cents for v in z.by_vat if v.vat_cents} == {r: v for r, v in printed.items() if v}
