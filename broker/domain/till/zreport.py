"""The Z report (denná uzávierka): one business day's money, counted from its payment records. Pure.

The hall side (broker.till.closeout) reads the day's rows into the records below; `z_report`
adds them up. It is used twice: for the running figures while the day is open, and once more at
closing, when the result is frozen (`to_json`) into business_days.report and never computed again,
so a closed day's numbers cannot change whatever happens to the tables later.

Money is what `Payment.amount_cents` says (signed: a reversal is negative; change given back is
already netted out of it), so every total is a plain sum and a reversal brings each total back.
Cash rounding (`Payment.rounding_cents`) is neither takings nor VAT: it is a line of its own, and
the drawer's expected cash includes it.
The day's takings are its revenue, as broker.domain.till.revenue defines it for the reports too.
Category and VAT come from the payment's frozen lines (`Payment.lines`, the receipt's lines; a part
payment's share by the categories of what it paid for); if those do not add up to the payment (a
record from elsewhere), the amount is shared out over them (money.allocate) or the difference is
shown as "unassigned", so the breakdowns always sum to the total.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from broker.domain.billing import vat_share
from broker.domain.json_shape import HIDDEN, derived, every_field_sent, null_when
from broker.domain.till.money import TABLE_TIME
from broker.domain.till.revenue import UNASSIGNED, PaymentRecord, payment_parts, revenue_parts, takings
from broker.domain.vouchers import CREDIT, CREDIT_SALE, PACKAGE, WALLET_METHODS

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "BLIND",
    "UNASSIGNED",
    "CorrectionRecord",
    "DayOpening",
    "Method",
    "OpenTab",
    "PaymentRecord",
    "TournamentTime",
    "VoidRecord",
    "ZReport",
    "from_json",
    "payment_from_json",
    "payment_to_json",
    "to_json",
    "withheld",
    "z_report",
]

FORMAT = 1  # the version of the frozen report's shape (business_days.report["format"])


# --- what goes in ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    """A payment method of the venue ([till] in the venue file)."""

    id: str
    name: str
    name_en: str
    cash: bool


@dataclass(frozen=True)
class VoidRecord:
    """An item voided on a tab (a drink, a game's extra) on the day."""

    at: datetime
    by: str
    reason: str
    description: str
    description_en: str
    quantity: int
    amount_cents: int  # what was taken off the bill (positive)
    where: str  # the table's name or the walk-in tab's label
    tab_id: int | None
    kind: str  # "item" (a tab item; "extra" in reports frozen before extras were items)


@dataclass(frozen=True)
class CorrectionRecord:
    """A manager's correction of a game's bill on the day."""

    at: datetime
    by: str
    reason: str
    amount_cents: int  # signed: -250 lowered the bill by 2,50 €
    where: str  # the table's name
    game: int  # the game's number (staff say "hra č. 7")


@dataclass(frozen=True)
class OpenTab:
    """A tab left unpaid at the moment of the report."""

    tab_id: int
    where: str
    opened_at: datetime
    total_cents: int
    owed_cents: int
    running: bool  # its game is still being played: the amount still grows


@dataclass(frozen=True)
class TournamentTime:
    """A tournament's table time on the day: billed to the tournament, not to its players."""

    tournament_id: int
    name: str
    games: int  # the tables' games its matches were played in
    minutes: int
    # at the tournament's rate (the Lavosliga's: 0 €/h, the club's own use)
    billed_cents: Annotated[int, Field(description="The tournament's table time at its rate (not the players')")]
    list_cents: Annotated[int, Field(description="The same time at the standard rate")]  # what it is worth


@dataclass(frozen=True)
class DayOpening:
    day: date
    opened_at: datetime | None  # None: nobody opened it and no money came yet
    opened_by: str
    float_cents: int
    # Nobody opened the shift: the first payment opened it with a float of 0 (a bartender is never
    # stopped from taking money); the report says so, so the drawer's count is read with that in mind.
    auto_opened: bool = False


# --- what comes out ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodTotal:
    method: str
    name: str
    name_en: str
    cash: bool
    count: int  # payments, reversals not counted
    payments_cents: int
    reversals_cents: int  # negative or 0
    net_cents: int


@dataclass(frozen=True)
class StaffMethod:
    """What one person took by one payment method (reversals they made deducted)."""

    method: str
    cents: int


@dataclass(frozen=True)
class StaffTotal:
    """One person's money on the day, by the actor the till records on each payment, with the items
    they voided (the shift report, broker.shifts, splits the same figures by shift). Only who took
    money has a row, as before: a void by somebody else is in `voids`, which names who voided it."""

    staff: str
    count: int
    payments_cents: int
    reversals_cents: int  # reversals this person made (a manager's refund)
    net_cents: int
    # Empty in a report frozen before shifts kept them.
    by_method: tuple[StaffMethod, ...] = ()
    voids: int = 0  # items this person voided on the day
    voids_cents: int = 0  # what those voids took off the bills (positive)


@dataclass(frozen=True)
class CategoryTotal:
    """What the day's payments paid for, in one category: `gross_cents`, the money paid, VAT
    included (the VAT base is by rate: by_vat). `net_cents`, its first name, holds the same amount
    and is deprecated: it was never a net amount (kept under it in the frozen report and the centre's records)."""

    category: str
    net_cents: Annotated[
        int,
        Field(
            deprecated="The same amount as gross_cents, which it always was: VAT included, not a net amount. Read gross_cents.",
            description="Deprecated: the same as gross_cents (VAT included; the name was wrong). Kept for the clients that read it.",
        ),
    ]

    @derived
    def gross_cents(self) -> int:
        """The money paid for this category, VAT included (the by_category rows sum to total_cents)."""
        return self.net_cents


@dataclass(frozen=True)
class VatTotal:
    vat_percent: int
    gross_cents: int
    vat_cents: int
    net_cents: int  # the base (základ dane)


@dataclass(frozen=True)
class Refund:
    at: datetime
    staff: str
    method: str
    amount_cents: int  # negative
    reason: str
    receipt_no: int | None
    reverses_receipt_no: int | None
    corrects_day: date | None


@dataclass(frozen=True)
class EarlierDay:
    """A payment counted today that belongs to an earlier, closed day ("oprava k dňu 1. 12. 2026")."""

    at: datetime
    staff: str
    method: str
    amount_cents: int
    receipt_no: int | None
    tab: str
    tab_id: int
    corrects_day: date
    reversal: bool


@every_field_sent
@dataclass(frozen=True)
class ZReport:
    """A day's Z report: frozen if `closed_at` is set, else the figures as they stand now (`made_at`)."""

    day: date
    opened_at: datetime | None
    opened_by: str
    auto_opened: bool
    float_cents: int
    made_at: datetime  # when these figures were counted (the closing time, for a closed day)
    closed_at: datetime | None
    closed_by: str | None
    counted_cents: int | None  # the cash counted in the drawer; None while the day runs
    cash_method: str | None  # the venue's cash method (None: the venue takes no cash)
    cash_cents: int  # cash payments less cash reversals
    payments_count: int
    payments_cents: int
    reversals_cents: int
    # the day's takings: its revenue (broker.domain.till.revenue), every payment counted on it, reversals included
    total_cents: Annotated[int, Field(description="Revenue (incl. VAT, paid): every payment counted on the day, refunds deducted")]
    table_time_cents: int
    items_cents: int
    by_method: tuple[MethodTotal, ...]
    by_staff: tuple[StaffTotal, ...]
    by_category: tuple[CategoryTotal, ...]
    by_vat: tuple[VatTotal, ...]
    refunds: tuple[Refund, ...]
    voids: tuple[VoidRecord, ...]
    corrections: tuple[CorrectionRecord, ...]
    open_tabs: tuple[OpenTab, ...]
    earlier_days: tuple[EarlierDay, ...]
    open_tabs_confirmed: bool = False  # closed with tabs open, staff said so explicitly
    format: Annotated[int, HIDDEN] = FORMAT  # of the frozen copy (business_days.report), not of the API's JSON
    # The cash rounding of the day's payments (reversals give theirs back): cash in the drawer that
    # is not takings and bears no VAT. 0 in a report frozen before rounding was kept.
    rounding_cents: Annotated[
        int, Field(description="The cash rounding to 0,05 € of the day's payments: in the drawer, not takings, no VAT")
    ] = 0
    # Tournaments played on the day and their table time (not takings: its money, if any, is in
    # the payments of the tabs its games ran on). Empty in a report frozen before tournaments.
    tournaments: Annotated[tuple[TournamentTime, ...], Field(description="Tournaments played on the day and their table time")] = ()
    # A staff user's view of a day still open (a blind count, `withheld`): the JSON carries the
    # expected cash, the takings and their breakdowns (BLIND) as null until the day is closed.
    blind: Annotated[bool, Field(description="Staff count blind: the expected cash and the takings are null until the day is closed")] = (
        False
    )
    # Vouchers (broker.domain.vouchers, zákon o DPH § 9a). Credit sold less credit refunded: a
    # multi-purpose voucher, money taken (in by_method and the drawer) that is not revenue and bears no VAT.
    voucher_sales_cents: Annotated[
        int, Field(description="Credit (a multi-purpose voucher) sold less refunded: money taken, not revenue, no VAT")
    ] = 0
    # Bills paid from credit: revenue (in total_cents, VAT per the goods), already in the drawer when the credit was sold.
    credit_redeemed_cents: Annotated[int, Field(description="Bills paid from credit: revenue with VAT per the goods, no money taken")] = 0
    # Table time a package covered: taxed when the package was sold (a single-purpose voucher), not revenue again.
    package_redeemed_cents: Annotated[
        int, Field(description="Table time covered by packages (taxed when sold): neither revenue nor money taken")
    ] = 0

    @derived
    def expected_cash_cents(self) -> int:
        """The float, the cash taken less the cash given back, and the cash rounding: what the drawer should hold."""
        return self.float_cents + self.cash_cents + self.rounding_cents

    @derived
    def variance_cents(self) -> int | None:
        """Counted less expected: negative means cash is missing."""
        return None if self.counted_cents is None else self.counted_cents - self.expected_cash_cents

    @derived
    def open_tabs_cents(self) -> int:
        return sum(t.owed_cents for t in self.open_tabs)

    @property
    def closed(self) -> bool:
        return self.closed_at is not None

    # The blind count in the JSON: what BLIND names is null there (the view keeps its figures, so
    # the page and the frozen copy are made from the one report), each typed, so the document says
    # which may be null.
    _blind_cents = null_when(
        "blind",
        int,
        "expected_cash_cents",
        "cash_cents",
        "rounding_cents",
        "payments_cents",
        "reversals_cents",
        "total_cents",
        "table_time_cents",
        "items_cents",
        "voucher_sales_cents",
        "credit_redeemed_cents",
        "package_redeemed_cents",
    )
    _blind_methods = null_when("blind", tuple[MethodTotal, ...], "by_method")
    _blind_staff = null_when("blind", tuple[StaffTotal, ...], "by_staff")
    _blind_categories = null_when("blind", tuple[CategoryTotal, ...], "by_category")
    _blind_vat = null_when("blind", tuple[VatTotal, ...], "by_vat")
    _blind_refunds = null_when("blind", tuple[Refund, ...], "refunds")
    _blind_earlier = null_when("blind", tuple[EarlierDay, ...], "earlier_days")


def withheld(report: ZReport) -> ZReport:
    """The report as staff see it while the day is open: blind (its JSON withholds BLIND)."""
    return dataclasses.replace(report, blind=True)


# --- the sums ----------------------------------------------------------------------------------


def _vat(gross: int, rate: int) -> int:
    """vat_share for a signed gross: a reversal's VAT is exactly the payment's, negative."""
    return vat_share(gross, rate) if gross >= 0 else -vat_share(-gross, rate)


def z_report(
    opening: DayOpening,
    payments: Iterable[PaymentRecord],
    methods: Iterable[Method],
    *,
    made_at: datetime,
    fallback_vat: int,
    voids: Iterable[VoidRecord] = (),
    corrections: Iterable[CorrectionRecord] = (),
    open_tabs: Iterable[OpenTab] = (),
    closed_by: str | None = None,
    counted_cents: int | None = None,
    open_tabs_confirmed: bool = False,
    tournaments: Iterable[TournamentTime] = (),
) -> ZReport:
    """The day's figures. With `closed_by` and `counted_cents` it is the close-out itself (closed at `made_at`)."""
    pays = sorted(payments, key=lambda p: (p.at, p.id))
    known = {m.id: m for m in methods}
    # The wallet's methods are named, but show only on a day that has them.
    names = {**{mid: Method(mid, name, name_en, False) for mid, name, name_en in WALLET_METHODS}, **known}
    vouchers = 0
    cash = next((m.id for m in known.values() if m.cash), None)

    by_method: dict[str, list[int]] = {m: [0, 0, 0] for m in known}  # count, payments, reversals
    by_staff: dict[str, list[int]] = {}
    staff_methods: dict[str, dict[str, int]] = {}
    by_category: dict[str, int] = {}
    vat_gross: dict[int, int] = {}
    vat_vat: dict[int, int] = {}
    for p in pays:
        reversal = p.reverses_id is not None
        m = by_method.setdefault(p.method, [0, 0, 0])
        s = by_staff.setdefault(p.staff, [0, 0, 0])
        per = staff_methods.setdefault(p.staff, {})
        per[p.method] = per.get(p.method, 0) + p.amount_cents
        for row in (m, s):
            if reversal:
                row[2] += p.amount_cents
            else:
                row[0] += 1
                row[1] += p.amount_cents
        # VAT per rate per payment, as its receipt printed it; the day's VAT is the sum of its receipts'.
        gross_here: dict[int, int] = {}
        vouchers += sum(cents for category, _, cents in payment_parts(p, fallback_vat) if category == CREDIT_SALE)
        for category, rate, cents in revenue_parts(p, fallback_vat):
            by_category[category] = by_category.get(category, 0) + cents
            gross_here[rate] = gross_here.get(rate, 0) + cents
        for rate, gross in gross_here.items():
            vat_gross[rate] = vat_gross.get(rate, 0) + gross
            vat_vat[rate] = vat_vat.get(rate, 0) + _vat(gross, rate)

    def method_total(mid: str, row: list[int]) -> MethodTotal:
        m = names.get(mid) or Method(mid, mid, mid, False)
        return MethodTotal(mid, m.name, m.name_en, m.cash, row[0], row[1], row[2], row[1] + row[2])

    refunds = tuple(
        Refund(p.at, p.staff, p.method, p.amount_cents, p.reason or "", p.receipt_no, p.reverses_receipt_no, p.corrects_day)
        for p in pays
        if p.reverses_id is not None
    )
    earlier = tuple(
        EarlierDay(p.at, p.staff, p.method, p.amount_cents, p.receipt_no, p.tab, p.tab_id, p.corrects_day, p.reverses_id is not None)
        for p in pays
        if p.corrects_day is not None and p.corrects_day < opening.day
    )
    void_list = tuple(sorted(voids, key=lambda v: v.at))
    staff_voids: dict[str, list[int]] = {}
    for v in void_list:
        sv = staff_voids.setdefault(v.by, [0, 0])
        sv[0] += 1
        sv[1] += v.amount_cents

    def staff_total(name: str, r: list[int]) -> StaffTotal:
        methods = tuple(StaffMethod(m, c) for m, c in staff_methods.get(name, {}).items())
        sv = staff_voids.get(name, [0, 0])
        return StaffTotal(name, r[0], r[1], r[2], r[1] + r[2], methods, sv[0], sv[1])

    total = takings(pays)  # revenue: broker.domain.till.revenue, the reports' definition too
    table_time = by_category.get(TABLE_TIME, 0)
    return ZReport(
        day=opening.day,
        opened_at=opening.opened_at,
        opened_by=opening.opened_by,
        auto_opened=opening.auto_opened,
        float_cents=opening.float_cents,
        made_at=made_at,
        closed_at=made_at if closed_by is not None else None,
        closed_by=closed_by,
        counted_cents=counted_cents,
        cash_method=cash,
        cash_cents=sum(p.amount_cents for p in pays if p.method == cash),
        payments_count=sum(r[0] for r in by_method.values()),
        payments_cents=sum(r[1] for r in by_method.values()),
        reversals_cents=sum(r[2] for r in by_method.values()),
        total_cents=total,
        table_time_cents=table_time,
        items_cents=total - table_time,
        # The venue's methods in its order (a method with nothing still shows: "Karta 0,00 €"), then others.
        by_method=tuple(method_total(mid, row) for mid, row in by_method.items()),
        by_staff=tuple(staff_total(name, r) for name, r in sorted(by_staff.items())),
        # Table time first (what a hall sells), then the rest by name.
        by_category=tuple(CategoryTotal(c, v) for c, v in sorted(by_category.items(), key=lambda kv: (kv[0] != TABLE_TIME, kv[0]))),
        by_vat=tuple(VatTotal(r, vat_gross[r], vat_vat[r], vat_gross[r] - vat_vat[r]) for r in sorted(vat_gross, reverse=True)),
        refunds=refunds,
        voids=void_list,
        corrections=tuple(sorted(corrections, key=lambda c: c.at)),
        open_tabs=tuple(sorted(open_tabs, key=lambda t: (t.opened_at, t.tab_id))),
        earlier_days=earlier,
        open_tabs_confirmed=open_tabs_confirmed,
        rounding_cents=sum(p.rounding_cents for p in pays),
        tournaments=tuple(tournaments),
        voucher_sales_cents=vouchers,
        credit_redeemed_cents=sum(p.amount_cents for p in pays if p.method == CREDIT),
        package_redeemed_cents=sum(p.amount_cents for p in pays if p.method == PACKAGE),
    )


# A blind count: before a day is closed, these figures tell the cash the drawer should hold (the
# float plus the cash taken; or the takings less the other methods), so staff see none of them
# until they have typed what they counted (who counts blind is the dashboard's access table).
BLIND = (
    "cash_cents",
    "rounding_cents",
    "payments_cents",
    "reversals_cents",
    "total_cents",
    "table_time_cents",
    "items_cents",
    "by_method",
    "by_staff",
    "by_category",
    "by_vat",
    "refunds",
    "earlier_days",
    "voucher_sales_cents",
    "credit_redeemed_cents",
    "package_redeemed_cents",
)


# --- frozen as JSON (business_days.report) -----------------------------------------------------


_Built = typing.TypeVar("_Built", bound="DataclassInstance")


def _encode(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def to_json(report: ZReport) -> dict[str, object]:
    """The report as JSON the database keeps; from_json(to_json(r)) == r."""
    return typing.cast(dict[str, object], _encode(report))


def _decode(kind: object, value: Any) -> Any:
    # `value` is what json gave back for a field of type `kind`: its type is known only at run time.
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        inner = [k for k in typing.get_args(kind) if k is not type(None)]
        return _decode(inner[0], value)
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_decode(item, v) for v in value)
    if kind is datetime:
        return datetime.fromisoformat(value)
    if kind is date:
        return date.fromisoformat(value)
    if dataclasses.is_dataclass(kind):
        return _build(typing.cast("type[DataclassInstance]", kind), value)
    return value


def _build(cls: type[_Built], doc: Mapping[str, Any]) -> _Built:
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: _decode(hints[k], v) for k, v in doc.items() if k in names})


def from_json(doc: Mapping[str, Any]) -> ZReport:
    return _build(ZReport, doc)


def payment_to_json(p: PaymentRecord) -> dict[str, object]:
    """One payment as the hall sends it to the centre (broker.outbox.records); payment_from_json reads it back."""
    return typing.cast(dict[str, object], _encode(p))


def payment_from_json(doc: Mapping[str, Any]) -> PaymentRecord:
    return _build(PaymentRecord, doc)
