"""The business day over the API: the current day with its running figures, opening it with a float,
closing it with the counted cash (the Z report, frozen), and the closed days for the manager.

The rules live in broker.hall.till.closeout (one writer, one close); this shapes JSON. Amounts are
integer cents; days are business days (from the venue's cut, default 06:00, to the next morning's).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, Field

from broker.accounts.staff import Staff
from broker.domain.zreport import BLIND, ZReport, to_json
from broker.hall.till.closeout import MAX_DRAWER_CENTS, CloseDay, DaySummary, OpenDay
from dashboard.access import allows
from dashboard.api.auth import can, demand
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import Body

router = APIRouter(prefix="/days", tags=["business day"])

DrawerCents = Annotated[int, Field(ge=0, le=MAX_DRAWER_CENTS, description="Cash in the drawer, in cents (0 to 100 000 €)")]
DayPath = Annotated[date, Path(description="Business day, YYYY-MM-DD")]


class OpenDayIn(Body):
    float_cents: DrawerCents


class CloseDayIn(Body):
    counted_cents: DrawerCents
    open_tabs_ok: bool = Field(False, description="Close although tabs are still unpaid (they are listed on the Z report)")


class MethodTotalOut(BaseModel):
    method: str
    name: str
    name_en: str
    cash: bool
    count: int
    payments_cents: int
    reversals_cents: int
    net_cents: int


class StaffTotalOut(BaseModel):
    staff: str
    count: int
    payments_cents: int
    reversals_cents: int
    net_cents: int


class CategoryTotalOut(BaseModel):
    category: str
    net_cents: int


class VatTotalOut(BaseModel):
    vat_percent: int
    gross_cents: int
    vat_cents: int
    net_cents: int


class RefundOut(BaseModel):
    at: datetime
    staff: str
    method: str
    amount_cents: int
    reason: str
    receipt_no: int | None
    reverses_receipt_no: int | None
    corrects_day: date | None


class VoidOut(BaseModel):
    at: datetime
    by: str
    reason: str
    description: str
    description_en: str
    quantity: int
    amount_cents: int
    where: str
    tab_id: int | None
    kind: str


class CorrectionOut(BaseModel):
    at: datetime
    by: str
    reason: str
    amount_cents: int
    where: str
    game: int


class OpenTabOut(BaseModel):
    tab_id: int
    where: str
    opened_at: datetime
    total_cents: int
    owed_cents: int
    running: bool


class EarlierDayOut(BaseModel):
    at: datetime
    staff: str
    method: str
    amount_cents: int
    receipt_no: int | None
    tab: str
    tab_id: int
    corrects_day: date
    reversal: bool


class ZReportOut(BaseModel):
    """A day's Z report: frozen if `closed_at` is set, else the figures as they stand now (`made_at`).

    `blind`: a staff user's view of a day still open (a blind count): the expected cash, the takings
    and their breakdowns are null until the day is closed with the counted cash; a manager sees them."""

    day: date
    opened_at: datetime | None
    opened_by: str
    auto_opened: bool
    float_cents: int
    made_at: datetime
    closed_at: datetime | None
    closed_by: str | None
    counted_cents: int | None
    expected_cash_cents: int | None = Field(description="The float, the cash taken less the cash given back, and the cash rounding")
    variance_cents: int | None
    cash_method: str | None
    cash_cents: int | None
    rounding_cents: int | None = Field(description="The cash rounding to 0,05 € of the day's payments: in the drawer, not takings, no VAT")
    payments_count: int
    payments_cents: int | None
    reversals_cents: int | None
    total_cents: int | None = Field(description="Revenue (incl. VAT, paid): every payment counted on the day, refunds deducted")
    table_time_cents: int | None
    items_cents: int | None
    by_method: list[MethodTotalOut] | None
    by_staff: list[StaffTotalOut] | None
    by_category: list[CategoryTotalOut] | None
    by_vat: list[VatTotalOut] | None
    refunds: list[RefundOut] | None
    voids: list[VoidOut]
    corrections: list[CorrectionOut]
    open_tabs: list[OpenTabOut]
    open_tabs_cents: int
    open_tabs_confirmed: bool
    earlier_days: list[EarlierDayOut] | None
    blind: bool = False


class DaySummaryOut(BaseModel):
    day: date
    opened_at: datetime
    opened_by: str
    float_cents: int
    closed_at: datetime | None
    closed_by: str | None
    counted_cents: int | None
    expected_cents: int | None
    variance_cents: int | None
    total_cents: int | None


class CurrentDayOut(BaseModel):
    day: date = Field(description="The business day staff work on now")
    opened: bool
    report: ZReportOut
    unclosed: list[date] = Field(description="Earlier days nobody closed, oldest first")
    last_closed: DaySummaryOut | None


def report_json(z: ZReport, user: Staff | None = None) -> dict[str, Any]:
    """The report as JSON; blind (broker.domain.zreport.BLIND null) for a staff user while the day is open."""
    out = to_json(z)
    out.update(expected_cash_cents=z.expected_cash_cents, variance_cents=z.variance_cents, open_tabs_cents=z.open_tabs_cents)
    blind = user is not None and not z.closed and not allows(user.role, "day.expected")
    if blind:
        out.update(dict.fromkeys(("expected_cash_cents", *BLIND)))
    out["blind"] = blind
    return out


def _summary(s: DaySummary) -> dict[str, Any]:
    return {k: getattr(s, k) for k in DaySummaryOut.model_fields}


@router.get("/current", response_model=CurrentDayOut, summary="The business day now: opened or not, its running figures, days left open")
def current(reads: Reads, user: Annotated[Staff, Depends(can("day.run"))]) -> dict[str, Any]:
    o = reads.day_overview()
    return {
        "day": o.day,
        "opened": o.opened,
        "report": report_json(o.report, user),
        "unclosed": list(o.unclosed),
        "last_closed": _summary(o.last_closed) if o.last_closed else None,
    }


@router.post("/current/open", response_model=CurrentDayOut, summary="Open the business day with the float in the drawer")
def open_day(body: OpenDayIn, hub: Hub, user: Annotated[Staff, Depends(can("day.run"))]) -> dict[str, Any]:
    hub.execute(OpenDay(float_cents=body.float_cents, actor=user.username))
    return current(hub.reads, user)


@router.post("/{day}/close", response_model=ZReportOut, summary="Close a business day with the counted cash: its Z report, frozen")
def close_day(day: DayPath, body: CloseDayIn, hub: Hub, user: Annotated[Staff, Depends(can("day.run"))]) -> dict[str, Any]:
    return report_json(
        hub.execute(CloseDay(day=day, counted_cents=body.counted_cents, open_tabs_ok=body.open_tabs_ok, actor=user.username))
    )


@router.get("", response_model=list[DaySummaryOut], summary="Business days with a shift, newest first (closed or not)")
def days(reads: Reads, user: Annotated[Staff, Depends(can("day.history"))]) -> list[dict[str, Any]]:
    return [_summary(s) for s in reads.business_days()]


@router.get("/{day}", response_model=ZReportOut, summary="A day's Z report (frozen once closed); staff see only the current day")
def day_report(day: DayPath, reads: Reads, user: Annotated[Staff, Depends(can("day.run"))]) -> dict[str, Any]:
    if not reads.day_overview().at_hand(day):
        demand(user, "day.history")  # an earlier day's takings are the manager's, as on the pages
    return report_json(reads.day_report(day), user)
