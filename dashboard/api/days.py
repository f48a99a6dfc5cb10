"""The business day over the API: the current day with its running figures, opening it with a float,
closing it with the counted cash (the Z report, frozen), and the closed days for the manager.

The rules live in broker.till.closeout (one writer, one close); this shapes JSON. Amounts are
integer cents; days are business days (from the venue's cut, default 06:00, to the next morning's).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Depends, Path
from pydantic import Field

from broker.accounts.staff import Staff
from broker.domain.till.zreport import ZReport, withheld
from broker.till.closeout import MAX_DRAWER_CENTS, CloseDay, DayOverview, DaySummary, OpenDay
from dashboard.access import counts_blind
from dashboard.api.auth import can, demand
from dashboard.api.dates import Day
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import Body

router = APIRouter(prefix="/days", tags=["business day"])

DrawerCents = Annotated[int, Field(ge=0, le=MAX_DRAWER_CENTS, description="Cash in the drawer, in cents (0 to 100 000 €)")]
DayPath = Annotated[Day, Path(description="Business day, YYYY-MM-DD")]


class OpenDayIn(Body):
    float_cents: DrawerCents


class CloseDayIn(Body):
    counted_cents: DrawerCents
    open_tabs_ok: bool = Field(False, description="Close although tabs are still unpaid (they are listed on the Z report)")


def seen(z: ZReport, user: Staff) -> ZReport:
    """The report as `user` may see it: blind (broker.domain.till.zreport.BLIND null) for staff while the day is open."""
    return withheld(z) if counts_blind(user.role, z.closed) else z


def overview_seen(o: DayOverview, user: Staff) -> DayOverview:
    return replace(o, report=seen(o.report, user))


@router.get("/current", response_model=DayOverview, summary="The business day now: opened or not, its running figures, days left open")
def current(reads: Reads, user: Annotated[Staff, Depends(can("day.run"))]) -> DayOverview:
    return overview_seen(reads.till.day_overview(), user)


@router.post("/current/open", response_model=DayOverview, summary="Open the business day with the float in the drawer")
def open_day(body: OpenDayIn, hub: Hub, user: Annotated[Staff, Depends(can("day.run"))]) -> DayOverview:
    hub.execute(body.to(OpenDay, actor=user.username))
    return overview_seen(hub.reads.till.day_overview(), user)


@router.post("/{day}/close", response_model=ZReport, summary="Close a business day with the counted cash: its Z report, frozen")
def close_day(day: DayPath, body: CloseDayIn, hub: Hub, user: Annotated[Staff, Depends(can("day.run"))]) -> ZReport:
    return hub.execute(body.to(CloseDay, day=day, actor=user.username))


@router.get("", response_model=list[DaySummary], summary="Business days with a shift, newest first (closed or not)")
def days(reads: Reads, user: Annotated[Staff, Depends(can("day.history"))]) -> list[DaySummary]:
    return reads.till.business_days()


@router.get("/{day}", response_model=ZReport, summary="A day's Z report (frozen once closed); staff see only the current day")
def day_report(day: DayPath, reads: Reads, user: Annotated[Staff, Depends(can("day.run"))]) -> ZReport:
    if not reads.till.day_overview().at_hand(day):
        demand(user, "day.history")  # an earlier day's takings are the manager's, as on the pages
    return seen(reads.till.day_report(day), user)
