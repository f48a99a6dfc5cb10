"""Hypothesis properties of payments (issue 12, "must show" 1): a payment never exceeds what is owed
without change recorded; the payments plus what is owed equal the bill, per VAT rate too; reversals
bring every total back (paid, owed, status, settled_at). Pure rules first, then the writer on SQLite."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker.domain.cash_rounding import cash_due
from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.till.money import tab_bill, vat_rows
from broker.domain.till.payment_rules import PaymentRefused, check_payment, frozen_lines, negated
from broker.domain.till.receipt import ReceiptLine
from broker.hall.facade import HubFacade, ServiceError
from broker.till.payments import PayTab, ReversePayment
from tests.dashboard.conftest import FakeClock
from tests.support.examples import few
from tests.support.hub import fresh_login, started_hub
from tests.support.matching import some
from tests.support.sqlite_template import migrated_sqlite
from tests.till.payments_support import MANAGER, STAFF, add_item, played_tab

if TYPE_CHECKING:
    from broker.domain.till.money import MoneyLine
    from sim.mosquitto import Mosquitto


RATES = st.sampled_from([23, 19, 5])
LINE = st.builds(
    lambda cents, rate, n: ReceiptLine(f"vec {n}", f"thing {n}", 1, cents, cents, rate, "drinks"),
    st.integers(1, 20_000),
    RATES,
    st.integers(0, 99),
)


@given(
    owed=st.integers(-500, 50_000),
    amount=st.one_of(st.integers(-(10**13), 10**13), st.floats(), st.text(max_size=5), st.none(), st.booleans()),
    tendered=st.one_of(st.none(), st.integers(-(10**6), 10**8), st.floats(allow_nan=True)),
    cash=st.booleans(),
)
def test_a_payment_never_exceeds_what_is_owed_and_change_is_what_was_over(owed: Any, amount: Any, tendered: Any, cash: Any) -> None:
    try:
        t = check_payment(amount, owed, cash=cash, tendered_cents=tendered, what="Pool 1")
    except PaymentRefused:
        return
    assert isinstance(t.amount_cents, int) and 0 < t.amount_cents <= min(owed, MAX_AMOUNT_CENTS)
    if cash:
        assert t.tendered_cents is not None and t.change_cents == t.tendered_cents - t.amount_cents >= 0
    else:
        assert t.tendered_cents is None and t.change_cents == 0


@given(lines=st.lists(LINE, min_size=1, max_size=8), cuts=st.lists(st.integers(1, 10_000), max_size=6))
def test_payments_plus_owed_are_the_bill_and_the_receipts_add_up_per_rate(lines: Any, cuts: Any) -> None:
    total = sum(x.amount_cents for x in lines)
    frozen: list[ReceiptLine] = []
    paid = 0
    for cut in [*cuts, total]:  # some partial payments, then whatever is left
        owed = total - paid
        if owed <= 0:
            break
        amount = min(cut, owed)
        got = frozen_lines(amount, lines, frozen, label="Pool 1", label_en="Pool 1")
        assert sum(x.amount_cents for x in got) == amount
        frozen += got
        paid += amount
        assert paid + (total - paid) == total
        per_rate = {v.vat_percent: v.gross_cents for v in vat_rows(frozen)}
        bill = {v.vat_percent: v.gross_cents for v in vat_rows(lines)}
        assert all(0 <= per_rate.get(r, 0) <= g for r, g in bill.items())  # never more than the bill at any rate
    assert {v.vat_percent: v.gross_cents for v in vat_rows(frozen)} == {v.vat_percent: v.gross_cents for v in vat_rows(lines)}
    assert sum(x.amount_cents for x in frozen + negated(frozen)) == 0  # reversing all gives it all back


@given(lines=st.lists(LINE, min_size=1, max_size=5), paid=st.lists(st.integers(1, 5_000), max_size=4), closed=st.booleans())
def test_reversing_a_payment_gives_back_the_bill_it_had_before(lines: Any, paid: Any, closed: Any) -> None:
    base = [_ml(x) for x in lines]
    before = tab_bill(base, sum(paid[:-1]), closed=closed)
    after = tab_bill(base, sum(paid), closed=closed)
    reversed_ = tab_bill(base, sum(paid) - (paid[-1] if paid else 0), closed=closed)
    assert (reversed_.paid_cents, reversed_.owed_cents, reversed_.status) == (before.paid_cents, before.owed_cents, before.status)
    assert after.owed_cents + after.paid_cents == after.total_cents


def _ml(x: ReceiptLine) -> MoneyLine:
    from broker.domain.till.money import MoneyLine

    return MoneyLine("item:1", x.description, x.description_en, x.quantity, x.unit_cents, x.amount_cents, x.vat_percent, x.category, 1)


# --- the writer on SQLite: the same properties on real rows -------------------------------------

STEP = st.one_of(
    st.tuples(st.just("pay"), st.sampled_from(["cash", "card"]), st.integers(-100, 3000), st.integers(0, 2000)),
    st.tuples(st.just("reverse"), st.integers(0, 5)),
)


@pytest.fixture(scope="module")
def hall(mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HubFacade, FakeClock]]:
    url = migrated_sqlite(tmp_path_factory.mktemp("props") / "lavos.db")
    clock = FakeClock()
    with started_hub(url, mosquitto=mosquitto, clock=clock, client_id=fresh_login(), watchdog=False) as svc:
        yield HubFacade(svc), clock


@settings(max_examples=few(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=6), drink=st.integers(0, 900))
def test_on_the_writer_payments_and_reversals_keep_every_total(hall: tuple[HubFacade, FakeClock], steps: Any, drink: Any) -> None:
    facade, clock = hall
    tab = played_tab(facade, clock, table="pool-04", minutes=60)  # 6,00 €
    if drink:
        add_item(facade, tab, "Pivo", drink, 19)
    bill = some(facade.reads.till.tab_payments(tab)).total_cents
    snapshots = [facade.reads.till.tab_payments(tab)]
    taken: list[int] = []
    for step in steps:
        view = facade.reads.till.tab_payments(tab)
        try:
            if step[0] == "pay":
                _, method, amount, over = step
                tendered = amount + over if method == "cash" else None
                taken.append(
                    facade.execute(PayTab(tab=tab, method=method, amount_cents=amount, tendered_cents=tendered, actor=STAFF)).payment_id
                )
                snapshots.append(view)
            elif taken:
                pid = taken[step[1] % len(taken)]
                facade.execute(ReversePayment(payment=pid, reason="test vrátenia", actor=MANAGER))
        except ServiceError:
            assert facade.reads.till.tab_payments(tab) == view  # refused: nothing changed
            continue
        now = facade.reads.till.tab_payments(tab)
        assert now is not None
        assert now.paid_cents + now.owed_cents == bill and now.owed_cents >= 0
        live = [p for p in now.payments if p.reverses_id is None and p.reversed_by_no is None]
        assert now.paid_cents == sum(p.amount_cents for p in live)
        for p in now.payments:
            due = p.amount_cents + p.rounding_cents  # cash is rounded to 0,05 € (the shipped venue), card never
            assert p.rounding_cents == (cash_due(p.amount_cents, 5) - p.amount_cents if p.cash else 0) or p.reverses_id is not None
            assert p.change_cents == ((p.tendered_cents or due) - due if p.reverses_id is None else 0)
        assert (now.settled_at is not None) == (now.status == "paid")
    for pid in taken:  # give everything back: the tab is as it was before any payment
        with contextlib.suppress(ServiceError):  # reversed already
            facade.execute(ReversePayment(payment=pid, reason="všetko späť", actor=MANAGER))
    end, start = some(facade.reads.till.tab_payments(tab)), some(snapshots[0])
    assert (end.paid_cents, end.owed_cents, end.status, end.settled_at) == (
        start.paid_cents,
        start.owed_cents,
        start.status,
        start.settled_at,
    )
