"""Revenue (tržba): one definition for the Z report, the reports ("Prehľady") and their exports. Pure.

Revenue is the money taken, VAT included: every payment counted on a business day (its
`business_day`: a late payment or a refund after the day's close-out counts on the next day, as
the close-out says), reversals included (they are negative). Not what was billed: a tab still
unpaid is no revenue until it is paid, and a game's table time, its extras and the drinks at the
bar count alike, by what each payment paid for. So the reports' revenue of a day is its Z
report's takings, to the cent, and both say so in the same words (LABEL).

What a payment paid for (category, VAT rate) is its frozen receipt lines. A part payment freezes
one line per VAT rate ("partial_payment"); its share of each rate goes to the categories of that
rate the tab's receipts have not paid for yet (`unpaid`: the bill per rate and category less what
the earlier receipts paid there, reversals included), pro rata, cents by largest remainder
(`paid_for`, frozen with the line). What a receipt paid for an item voided since (a category of
the rate paid beyond what the bill now holds there) is taken back first, so when a tab is paid in
full its receipts have paid, rate by rate and category by category, exactly what its bill holds:
the day's categories are what was sold, and they always sum to its takings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Annotated

from pydantic import Field

from broker.domain.json_shape import derived, every_field_sent, json_name
from broker.domain.refusals import N_
from broker.domain.till.money import TABLE_TIME, allocate, share_out
from broker.domain.till.receipt import ReceiptLine
from broker.domain.vouchers import CREDIT_SALE as CREDIT_SALE_CATEGORY
from broker.domain.vouchers import is_revenue

__all__ = [
    "LABEL",
    "OTHER",
    "UNASSIGNED",
    "WALK_IN",
    "Bucket",
    "PaymentRecord",
    "Revenue",
    "bought",
    "by_category",
    "category_totals",
    "paid_for",
    "payment_parts",
    "revenue",
    "revenue_cents",
    "revenue_parts",
    "takings",
    "unpaid",
]

LABEL = N_("Revenue (incl. VAT, paid)")  # what the pages, the exports and the Z report call it
UNASSIGNED = "unassigned"  # the category of money whose frozen lines do not say what it paid for
OTHER = "other"  # a part payment on a bill that holds nothing at its rate (the products' own "other")
WALK_IN = "walk_in"  # by table: the tabs without one (the bar)


@dataclass(frozen=True)
class PaymentRecord:
    """One payments row counted on a business day (`day`), a reversal included."""

    id: int
    method: str
    amount_cents: int  # signed: what counts (change already given back is not in it)
    staff: str
    at: datetime
    receipt_no: int | None
    tab: str  # where: the table's name or the walk-in tab's label ("" : a walk-in tab without one)
    tab_id: int
    lines: tuple[ReceiptLine, ...]
    reverses_id: int | None = None
    reverses_receipt_no: int | None = None
    reason: str | None = None
    # The earlier business day this payment corrects, when it does: a reversal of a payment counted
    # on a closed day, or money for a tab of an earlier (closed) day. None: it is the day's own.
    corrects_day: date | None = None
    day: date | None = None  # the business day it counts on
    table: str | None = None  # the tab's table id (None: a walk-in tab)
    rounding_cents: int = 0  # cash rounding: in the drawer beyond the amount, not revenue (broker.domain.cash_rounding)


def _rank(category: str) -> tuple[bool, str]:
    """Ties of a share go to table time first (what a hall sells), then by name."""
    return category != TABLE_TIME, category


Bucket = tuple[int, str]  # (VAT rate, category): what a receipt's money paid for


def bought(lines: Iterable[ReceiptLine]) -> dict[Bucket, int]:
    """What `lines` hold (a bill) or paid for (receipts) per VAT rate and category: a part payment's
    line by the categories frozen with it, any other line by its own category."""
    out: dict[Bucket, int] = {}
    for x in lines:
        for category, cents in x.categories or ((x.category, x.amount_cents),):
            out[(x.vat_percent, category)] = out.get((x.vat_percent, category), 0) + cents
    return out


def unpaid(bill: Iterable[ReceiptLine], paid: Iterable[ReceiptLine]) -> dict[Bucket, int]:
    """What the bill holds per VAT rate and category less what the receipts `paid` paid for there
    (reversals included, negative): negative where they paid for more than the bill now holds (an
    item voided after a payment). Every bucket of either side is a key, a settled one with 0."""
    out = bought(bill)
    for key, cents in bought(paid).items():
        out[key] = out.get(key, 0) - cents
    return out


def paid_for(amount_cents: int, left: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """What a receipt line of `amount_cents` at one VAT rate pays for, by category, where `left` is
    what that rate still owes per category (`unpaid`). All of it: exactly `left`. Otherwise a category
    paid beyond the bill is taken back to zero first, and the rest goes over the categories still
    owed, pro rata, cents by largest remainder (ties to table time, then by name). The shares sum to
    the amount; a line of a rate owing nothing goes to OTHER."""
    if amount_cents == sum(left.values()):
        shares = dict(left)
    else:
        shares = {c: v for c, v in left.items() if v < 0}
        owed = {c: v for c, v in left.items() if v > 0}
        rest = amount_cents - sum(shares.values())
        for c, v in (share_out(rest, owed, first=_rank) if owed else {OTHER: rest}).items():
            shares[c] = shares.get(c, 0) + v
    return tuple(sorted(((c, v) for c, v in shares.items() if v), key=lambda cv: _rank(cv[0])))


def by_category(amount_cents: int, rate: int, lines: Iterable[ReceiptLine]) -> tuple[tuple[str, int], ...]:
    """A part payment frozen before it said what it paid for (`paid_for`): its `amount_cents` at VAT
    `rate` shared over the categories of `lines` (the bill it paid towards, as it is now) at that rate
    in proportion to what each holds, cents by largest remainder: the shares sum to the amount
    exactly. A rate the bill no longer holds goes over the bill's categories at any rate; a bill of
    nothing, to OTHER. The best that is left for such a payment."""
    lines = list(lines)
    weights = _positive(_sums(x for x in lines if x.vat_percent == rate))
    if not weights:
        weights = _positive(_sums(lines)) or {OTHER: 1}
    shares = share_out(amount_cents, weights, first=_rank)
    return tuple(sorted(((c, v) for c, v in shares.items() if v), key=lambda cv: _rank(cv[0])))


def _sums(lines: Iterable[ReceiptLine]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in lines:
        out[x.category] = out.get(x.category, 0) + x.amount_cents
    return out


def _positive(weights: Mapping[str, int]) -> dict[str, int]:
    return {c: w for c, w in weights.items() if w > 0}


def payment_parts(p: PaymentRecord, fallback_vat: int) -> list[tuple[str, int, int]]:
    """(category, VAT rate, cents) of what the payment paid for, summing exactly to its amount."""
    parts = [(c, x.vat_percent, cents) for x in p.lines for c, cents in (x.categories or ((x.category, x.amount_cents),))]
    total = sum(c for _, _, c in parts)
    if total == p.amount_cents:
        return parts
    same_sign = total != 0 and all(c * total >= 0 for _, _, c in parts)
    if same_sign:
        # E.g. lines of the whole bill on a part payment: the amount is shared out over them, exactly.
        shares = allocate(abs(p.amount_cents), {n: abs(c) for n, (_, _, c) in enumerate(parts)})
        sign = -1 if p.amount_cents < 0 else 1
        return [(cat, rate, sign * shares[n]) for n, (cat, rate, _) in enumerate(parts)]
    return [*parts, (UNASSIGNED, fallback_vat, p.amount_cents - total)]


def revenue_parts(p: PaymentRecord, fallback_vat: int) -> list[tuple[str, int, int]]:
    """`payment_parts` that are revenue (broker.domain.vouchers: not the sale of credit, a
    multi-purpose voucher, nor table time a package, a single-purpose voucher taxed when sold, covered)."""
    return [(c, rate, cents) for c, rate, cents in payment_parts(p, fallback_vat) if is_revenue(p.method, c)]


def revenue_cents(p: PaymentRecord) -> int:
    """What of one payment is revenue (its amount, but for vouchers: `revenue_parts`)."""
    if is_revenue(p.method, "") and not any(x.category == CREDIT_SALE_CATEGORY for x in p.lines):
        return p.amount_cents
    return sum(cents for _, _, cents in revenue_parts(p, 0))


def takings(payments: Iterable[PaymentRecord]) -> int:
    """Revenue: the money the payments took (reversals negative), VAT included; voucher money as
    broker.domain.vouchers says."""
    return sum(revenue_cents(p) for p in payments)


def category_totals(payments: Iterable[PaymentRecord], fallback_vat: int) -> dict[str, int]:
    """Revenue by what it paid for; sums to `takings`."""
    out: dict[str, int] = {}
    for p in payments:
        for category, _rate, cents in revenue_parts(p, fallback_vat):
            out[category] = out.get(category, 0) + cents
    return dict(sorted(out.items(), key=lambda kv: _rank(kv[0])))


@every_field_sent
@dataclass(frozen=True)
class Revenue:
    """Revenue: the money taken on business days first..last (every payment counted on them, refunds
    deducted, VAT included), the Z reports' takings; every breakdown sums to total_cents."""

    first: Annotated[date, json_name("from")]
    last: Annotated[date, json_name("to")]
    total_cents: int = 0
    payments: Annotated[int, Field(description="Payments counted (refunds not)")] = 0
    by_day: dict[str, int] = field(default_factory=dict)  # every day of the range, one without takings too
    by_table: Annotated[dict[str, int], Field(description="Table id → cents; the bar's tabs (no table) under 'walk_in'")] = field(
        default_factory=dict
    )
    by_category: Annotated[dict[str, int], Field(description="What was paid for: table_time, drinks, food…")] = field(default_factory=dict)

    @derived
    def definition(self) -> str:
        """What total_cents counts, in words."""
        return LABEL


def revenue(payments: Iterable[PaymentRecord], first: date, last: date, *, fallback_vat: int) -> Revenue:
    """The revenue of the payments counted on business days first..last (others are left out)."""
    pays = [p for p in payments if p.day is not None and first <= p.day <= last]
    by_day = {(first + timedelta(days=n)).isoformat(): 0 for n in range((last - first).days + 1)}
    by_table: dict[str, int] = {}
    for p in pays:
        assert p.day is not None  # filtered above
        cents = revenue_cents(p)
        by_day[p.day.isoformat()] += cents
        where = p.table or WALK_IN
        by_table[where] = by_table.get(where, 0) + cents
    return Revenue(
        first=first,
        last=last,
        total_cents=takings(pays),
        payments=sum(1 for p in pays if p.reverses_id is None),
        by_day=by_day,
        by_table=by_table,
        by_category=category_totals(pays, fallback_vat),
    )
