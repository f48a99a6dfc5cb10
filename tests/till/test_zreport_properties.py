"""Properties of the Z report (broker.domain.till.zreport), over random days of payments and reversals:
the close-out equals the sum of the day's payments by method, by-VAT and by-category sums equal the
payment total, a reversal brings every total back, and part payments go to the categories they paid for."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from broker.domain.till.money import TABLE_TIME
from broker.domain.till.payment_rules import PARTIAL, frozen_lines
from broker.domain.till.receipt import ReceiptLine, lines_from_json, lines_json
from broker.domain.till.zreport import BLIND, DayOpening, Method, PaymentRecord, ZReport, from_json, to_json, withheld, z_report

DAY = date(2026, 12, 1)
T0 = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)
METHODS = [Method("cash", "Hotovosť", "Cash", True), Method("card", "Karta", "Card", False), Method("voucher", "Poukaz", "Voucher", False)]
CATEGORIES = [TABLE_TIME, "drinks", "food", "tournament"]

lines = st.lists(
    st.builds(
        lambda cents, vat, cat: ReceiptLine("x", "x", 1, cents, cents, vat, cat),
        st.integers(min_value=-500, max_value=20_000),
        st.sampled_from([23, 19, 5]),
        st.sampled_from(CATEGORIES),
    ),
    min_size=1,
    max_size=6,
)


@st.composite
def payment(draw: Any, n: int) -> PaymentRecord:
    ls = tuple(draw(lines))
    # Mostly lines that add up to the payment (as Payment.lines are); sometimes not (a part payment's
    # whole-bill lines, a record from elsewhere): the sums must still hold.
    amount = sum(x.amount_cents for x in ls) if draw(st.booleans()) else draw(st.integers(min_value=1, max_value=50_000))
    return PaymentRecord(
        id=n,
        method=draw(st.sampled_from([m.id for m in METHODS])),
        amount_cents=amount,
        staff=draw(st.sampled_from(["jana", "peter", "boss"])),
        at=T0 + timedelta(minutes=n),
        receipt_no=n,
        tab="Pool 1",
        tab_id=1,
        lines=ls,
    )


days = st.integers(min_value=0, max_value=12).flatmap(lambda k: st.tuples(*(payment(n + 1) for n in range(k))))


def report(pays: Any, float_cents: int = 5000) -> ZReport:
    return z_report(DayOpening(DAY, T0, "jana", float_cents), pays, METHODS, made_at=T0 + timedelta(hours=10), fallback_vat=23)


def reversal(p: PaymentRecord, n: int, staff: str | None = None) -> PaymentRecord:
    neg = tuple(
        ReceiptLine(x.description, x.description_en, x.quantity, x.unit_cents, -x.amount_cents, x.vat_percent, x.category) for x in p.lines
    )
    return PaymentRecord(
        id=n,
        method=p.method,
        amount_cents=-p.amount_cents,
        staff=staff or p.staff,
        at=p.at + timedelta(hours=1),
        receipt_no=n,
        tab=p.tab,
        tab_id=p.tab_id,
        lines=neg,
        reverses_id=p.id,
        reason="vrátené",
    )


@settings(deadline=None)
@given(days, st.integers(min_value=0, max_value=100_000))
def test_the_close_out_is_the_sum_of_the_days_payments_by_method(pays: Any, float_cents: Any) -> None:
    z = report(pays, float_cents)
    for m in METHODS:
        assert next(t.net_cents for t in z.by_method if t.method == m.id) == sum(p.amount_cents for p in pays if p.method == m.id)
    assert z.total_cents == sum(p.amount_cents for p in pays) == sum(t.net_cents for t in z.by_method)
    assert z.expected_cash_cents == float_cents + sum(p.amount_cents for p in pays if p.method == "cash")
    assert z.payments_count == len(pays)
    assert sum(s.net_cents for s in z.by_staff) == z.total_cents


@settings(deadline=None)
@given(days)
def test_by_vat_and_by_category_sum_to_the_payment_total(pays: Any) -> None:
    z = report(pays)
    assert sum(v.gross_cents for v in z.by_vat) == z.total_cents
    assert sum(c.net_cents for c in z.by_category) == z.total_cents
    assert z.table_time_cents + z.items_cents == z.total_cents
    for v in z.by_vat:
        assert v.net_cents + v.vat_cents == v.gross_cents


@settings(deadline=None)
@given(days, st.data())
def test_reversals_bring_every_total_back(pays: Any, data: Any) -> None:
    if not pays:
        return
    before = report(pays)
    # Reverse some payments (by whoever took them, so the staff totals come back too)...
    picked = data.draw(st.lists(st.sampled_from(pays), unique_by=lambda p: p.id, min_size=1))
    reversed_ = [reversal(p, 1000 + n) for n, p in enumerate(picked)]
    after = report([*pays, *reversed_])
    kept = report([p for p in pays if p not in picked])

    def totals(z: ZReport) -> Any:
        return (
            z.total_cents,
            z.cash_cents,
            z.expected_cash_cents,
            z.table_time_cents,
            z.items_cents,
            {t.method: t.net_cents for t in z.by_method},
            {c.category: c.net_cents for c in z.by_category if c.net_cents},
            {v.vat_percent: (v.gross_cents, v.vat_cents) for v in z.by_vat if v.gross_cents or v.vat_cents},
            {s.staff: s.net_cents for s in z.by_staff if s.net_cents},
        )

    # ...and every total is as if they had never been taken.
    assert totals(after) == totals(kept)
    assert len(after.refunds) == len(picked) and after.reversals_cents == -sum(p.amount_cents for p in picked)
    assert totals(report([*pays, *reversed_, *picked])) == totals(before)  # taken again: as at first


@settings(deadline=None)
@given(days)
def test_the_frozen_report_reads_back_the_same(pays: Any) -> None:
    z = report(pays)
    assert from_json(to_json(z)) == z


# Issue 19, item 8: a part payment's share goes to the categories of what it paid for, pro rata per
# VAT rate, so the Z report's categories always sum to the takings and no raw "partial_payment" shows.
bill_lines = st.lists(
    st.builds(
        lambda cents, vat, cat: ReceiptLine(cat, cat, 1, cents, cents, vat, cat),
        st.integers(min_value=1, max_value=20_000),
        st.sampled_from([23, 19, 5]),
        st.sampled_from(CATEGORIES),
    ),
    min_size=1,
    max_size=8,
)


@settings(deadline=None)
@given(bill_lines, st.lists(st.integers(min_value=1, max_value=30_000), min_size=1, max_size=5), st.booleans())
def test_part_payments_go_to_the_categories_they_paid_for_and_sum_to_the_takings(bill: Any, amounts: Any, to_the_end: Any) -> None:
    owed = sum(x.amount_cents for x in bill)
    before: list[ReceiptLine] = []
    pays: list[PaymentRecord] = []
    for n, wanted in enumerate([*amounts, *([10**9] if to_the_end else [])], start=1):
        amount = min(wanted, owed - sum(p.amount_cents for p in pays))
        if amount <= 0:
            break
        frozen = frozen_lines(amount, bill, before, label="Pool 1", label_en="Pool 1")
        before += frozen
        pays.append(PaymentRecord(n, "cash", amount, "jana", T0 + timedelta(minutes=n), n, "Pool 1", 1, tuple(frozen)))
    z = report(pays)
    categories = {c.category: c.net_cents for c in z.by_category}
    assert sum(categories.values()) == z.total_cents == sum(p.amount_cents for p in pays)
    assert PARTIAL not in categories and set(categories) <= {x.category for x in bill}
    for v in z.by_vat:  # each rate's money stays at its rate, as the receipts froze it
        assert v.gross_cents == sum(x.amount_cents for p in pays for x in p.lines if x.vat_percent == v.vat_percent)
    if sum(p.amount_cents for p in pays) == owed:  # paid in full: each category within a cent a payment of the bill's
        held = {c: sum(x.amount_cents for x in bill if x.category == c) for c in categories}
        assert all(abs(categories[c] - held[c]) <= len(pays) for c in categories)


def test_the_z_report_of_a_part_payment_names_what_it_paid_for() -> None:
    """The issue's case: 40 % of a day's takings sat under the raw key partial_payment."""
    bill = [
        ReceiptLine("Pool 1", "Pool 1", 1, None, 600, 23, TABLE_TIME),
        ReceiptLine("Kofola", "Kofola", 1, 200, 200, 23, "drinks"),
        ReceiptLine("Pizza", "Pizza", 1, 300, 300, 19, "food"),
    ]
    first = frozen_lines(500, bill, [], label="Pool 1", label_en="Pool 1")
    rest = frozen_lines(600, bill, first, label="Pool 1", label_en="Pool 1")
    pays = [PaymentRecord(1, "cash", 500, "jana", T0, 1, "Pool 1", 1, tuple(first))]
    # 5,00 € over 8,00 € at 23 % and 3,00 € at 19 %: 3,64 € and 1,36 €; the 3,64 € as table time 6 : drinks 2.
    assert {c.category: c.net_cents for c in report(pays).by_category} == {TABLE_TIME: 273, "drinks": 91, "food": 136}
    pays.append(PaymentRecord(2, "card", 600, "jana", T0, 2, "Pool 1", 1, tuple(rest)))
    assert {c.category: c.net_cents for c in report(pays).by_category} == {TABLE_TIME: 600, "drinks": 200, "food": 300}
    assert lines_from_json(lines_json(first)) == tuple(first)  # what the payment row keeps says the same


@settings(max_examples=10)
@given(days)
def test_a_withheld_report_reads_as_json_with_exactly_the_blind_figures_null(pays: Any) -> None:
    """Staff count blind (dashboard.access.counts_blind): the report's JSON nulls what BLIND names
    and the expected cash, and nothing else; the same report unwithheld carries them all."""
    z = report(pays)
    seen, blind = (TypeAdapter(ZReport).dump_python(r, mode="json", by_alias=True) for r in (z, withheld(z)))
    nulled = {k for k, v in blind.items() if v is None and seen[k] is not None}
    assert nulled == {"expected_cash_cents", *BLIND} and blind["blind"] and not seen["blind"]
    assert {k: v for k, v in blind.items() if k not in nulled and k != "blind"} == {
        k: v for k, v in seen.items() if k not in nulled and k != "blind"
    }
    assert withheld(z).total_cents == z.total_cents  # the pages' report keeps its figures: only the JSON withholds them
