"""The wallet's pure rules (broker.domain.wallet.rules) and the VAT rule of vouchers (broker.domain.vouchers):
balances as sums, never below zero, what lapses, a package's minute-by-minute cover."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.domain.vouchers import CREDIT, CREDIT_SALE, PACKAGE, PACKAGE_SALE, is_fiscal, is_revenue
from broker.domain.wallet.rules import Entry, TimeSlice, WalletRefused, balance, check_amount, check_use, cover, lapsed, lots

D1, D2 = date(2026, 12, 1), date(2026, 12, 31)


@st.composite
def histories(draw: st.DrawFn) -> list[Entry]:
    """Top-ups (some with a last day) and uses that never take more than the balance, as the writer allows."""
    out: list[Entry] = []
    for n in range(1, draw(st.integers(1, 25)) + 1):
        bal = balance(out)
        if bal > 0 and draw(st.booleans()):
            out.append(Entry(n, draw(st.sampled_from(["use", "refund"])), cents=-draw(st.integers(1, bal))))
        else:
            out.append(Entry(n, "topup", cents=draw(st.integers(1, 5000)), expires_on=draw(st.sampled_from([None, D1, D2]))))
    return out


@given(histories())
def test_the_lots_sum_to_the_balance_and_none_is_negative(entries: list[Entry]) -> None:
    got = lots(entries)
    assert sum(lot.left_cents for lot in got) == balance(entries) >= 0
    assert all(lot.left_cents > 0 for lot in got)


@given(histories(), st.sampled_from([D1, D2, date(2027, 1, 1)]))
def test_what_lapses_is_never_more_than_the_balance_and_lapsing_it_leaves_only_later_credit(entries: list[Entry], today: date) -> None:
    gone = lapsed(entries, today)
    assert sum(lot.left_cents for lot in gone) <= balance(entries)
    after = entries + [Entry(1000 + n, "expiry", cents=-lot.left_cents) for n, lot in enumerate(gone)]
    assert lapsed(after, today) == [] and balance(after) >= 0
    assert all(lot.expires_on is None or lot.expires_on >= today for lot in lots(after))


def test_uses_take_from_the_top_up_that_lapses_first() -> None:
    rows = [Entry(1, "topup", cents=1000), Entry(2, "topup", cents=500, expires_on=D1), Entry(3, "use", cents=-700)]
    # The 5 € lapsing on 1 December goes first, then 2 € of the credit without a date.
    assert [(lot.id, lot.left_cents) for lot in lots(rows)] == [(1, 800)]
    assert lapsed(rows, date(2026, 12, 2)) == []
    rows2 = [Entry(1, "topup", cents=1000), Entry(2, "topup", cents=500, expires_on=D1), Entry(3, "use", cents=-200)]
    assert [(lot.id, lot.left_cents) for lot in lapsed(rows2, date(2026, 12, 2))] == [(2, 300)]
    assert lapsed(rows2, D1) == []  # its last day is still valid


@given(st.integers(0, 10_000), st.integers(1, 10_000))
def test_a_use_above_the_balance_is_refused(bal: int, amount: int) -> None:
    if amount > bal:
        with pytest.raises(WalletRefused):
            check_use(bal, amount, member="Novák")
    else:
        check_use(bal, amount, member="Novák")


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, "10", None, 100_001])
def test_an_amount_is_whole_cents_above_zero(bad: object) -> None:
    with pytest.raises(WalletRefused):
        check_amount(bad)


def test_a_package_covers_minute_by_minute_at_its_rate_and_never_more_than_the_bill() -> None:
    # 90 min at 6 €/h (9,00 €) with 60 min of a 5 €/h package: 60 min at 5 €/h, the other 30 min stay.
    got = cover([TimeSlice(90, 900)], 60, 500, 900)
    assert (got.minutes, got.cents) == (60, 500)
    # A package's rate above the table's: a minute is worth no more than it costs on the bill.
    got = cover([TimeSlice(90, 900)], 600, 800, 900)
    assert (got.minutes, got.cents) == (90, 900)
    # Two rates (a band): minute by minute in the order played.
    got = cover([TimeSlice(30, 300), TimeSlice(60, 900)], 45, 1200, 1200)
    assert (got.minutes, got.cents) == (45, 300 + 225)
    # Never more than the table time still unpaid.
    assert cover([TimeSlice(90, 900)], 600, 600, 400).cents == 400
    assert cover([TimeSlice(90, 900)], 0, 600, 900).cents == 0
    # A package priced as a whole: 10 h for 49,99 € covers 600 minutes worth 49,99 €, not 600 × 4,99 €/h.
    assert cover([TimeSlice(600, 6000)], 600, 4999, 6000, per_minutes=600).cents == 4999
    assert cover([TimeSlice(90, 900)], 600, 4999, 900, per_minutes=600).cents == 750  # 90/600 of 49,99 €, half up


@given(
    st.lists(st.tuples(st.integers(1, 300), st.integers(0, 5000)), max_size=5),
    st.integers(0, 1000),
    st.integers(0, 3000),
    st.integers(0, 20000),
)
def test_a_cover_is_within_the_package_the_bill_and_what_is_owed(slices: list[tuple[int, int]], left: int, rate: int, owed: int) -> None:
    got = cover([TimeSlice(m, c) for m, c in slices], left, rate, owed)
    assert 0 <= got.minutes <= left and got.minutes <= sum(m for m, _ in slices)
    assert 0 <= got.cents <= min(owed, sum(c for _, c in slices))


def test_the_vat_rule_of_vouchers() -> None:
    """§ 9a: credit sold is no revenue, credit used is; a package sold is revenue, its use is not again."""
    assert not is_revenue("cash", CREDIT_SALE) and is_revenue("cash", PACKAGE_SALE)
    assert is_revenue(CREDIT, "drinks") and is_revenue(CREDIT, "table_time")
    assert not is_revenue(PACKAGE, "table_time")


def test_only_a_sale_of_credit_is_not_sent_to_ekasa() -> None:
    from broker.domain.till.receipt import ReceiptLine

    credit = ReceiptLine("Kredit", "Credit", 1, 2000, 2000, 0, CREDIT_SALE)
    package = ReceiptLine("Balík", "Package", 1, 5000, 5000, 23, PACKAGE_SALE)
    assert not is_fiscal([credit]) and is_fiscal([package]) and is_fiscal([credit, package])


@st.composite
def days(draw: st.DrawFn) -> list[Any]:
    """A day's payments: bills paid by cash, card or credit (lines at 23 % and 19 %), credit sold and
    given back, packages sold, table time covered by packages, and reversals of some of them."""
    from datetime import UTC, datetime

    from broker.domain.till.receipt import ReceiptLine
    from broker.domain.till.revenue import PaymentRecord

    at = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
    out: list[PaymentRecord] = []
    for n in range(1, draw(st.integers(1, 12)) + 1):
        kind = draw(st.sampled_from(["bill", "credit_sale", "credit_refund", "package_sale", "package_use"]))
        a, b = draw(st.integers(1, 3000)), draw(st.integers(0, 3000))
        lines: tuple[ReceiptLine, ...]
        if kind == "bill":
            method = draw(st.sampled_from(["cash", "card", CREDIT]))
            lines = (ReceiptLine("Čas", "Time", 1, a, a, 23, "table_time"), ReceiptLine("Pivo", "Beer", 1, b, b, 19, "drinks"))
        elif kind == "credit_sale":
            method, lines = draw(st.sampled_from(["cash", "card"])), (ReceiptLine("Kredit", "Credit", 1, a, a, 0, CREDIT_SALE),)
        elif kind == "credit_refund":
            method, lines = "cash", (ReceiptLine("Vrátenie", "Back", -1, a, -a, 0, CREDIT_SALE),)
        elif kind == "package_sale":
            method, lines = "card", (ReceiptLine("Balík", "Package", 1, a, a, 23, PACKAGE_SALE),)
        else:
            method, lines = PACKAGE, (ReceiptLine("Čas z balíka", "Time", 1, a, a, 23, "table_time"),)
        amount = sum(x.amount_cents for x in lines)
        out.append(PaymentRecord(n, method, amount, "jana", at, n, "Pool 1", n, lines, day=at.date()))
    return out


@given(days())
def test_the_z_report_of_a_day_with_vouchers_adds_up(payments: list[Any]) -> None:
    """Revenue is what the VAT rows and categories sum to; the methods sum to the money taken, which
    is revenue plus credit sold (net) plus table time packages covered (§ 9a, broker.domain.vouchers)."""
    from datetime import UTC, datetime

    from broker.domain.till.zreport import DayOpening, Method, z_report

    day = datetime(2026, 12, 1, tzinfo=UTC)
    z = z_report(
        DayOpening(day.date(), day, "jana", 0),
        payments,
        [Method("cash", "Hotovosť", "Cash", True), Method("card", "Karta", "Card", False)],
        made_at=day,
        fallback_vat=23,
    )
    assert sum(v.gross_cents for v in z.by_vat) == z.total_cents == sum(c.gross_cents for c in z.by_category)
    assert sum(m.net_cents for m in z.by_method) == z.total_cents + z.voucher_sales_cents + z.package_redeemed_cents
    assert z.voucher_sales_cents == sum(p.amount_cents for p in payments if p.lines[0].category == CREDIT_SALE)
    assert z.credit_redeemed_cents == sum(p.amount_cents for p in payments if p.method == CREDIT)
    assert 0 not in {v.vat_percent for v in z.by_vat} and CREDIT_SALE not in {c.category for c in z.by_category}
