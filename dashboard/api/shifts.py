"""Shifts over the API: clocking oneself in and out, the drawer counted at a shift change, and for the
manager everyone's shifts, a day's shift report, corrections with a reason and the hours per month.

The rules live in broker.shifts (one writer; a correction is a new row); this shapes JSON. Amounts
are integer cents; times ISO 8601 (without an offset: the venue's wall clock).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import Field

from broker.accounts.staff import Staff
from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.shifts.rules import REASON_MAX, MonthHours
from broker.shifts.reads import ShiftDay, ShiftView
from broker.shifts.shifts import NOTE_MAX, ClockIn, ClockOut, CorrectShift, CountDrawer, DrawerCounted, RecordShift
from dashboard.api.auth import can, demand
from dashboard.api.dates import Day, Moment
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(prefix="/shifts", tags=["shifts"])


class ClockOutIn(Body):
    staff: Annotated[str, text(64)] | None = Field(None, description="Whose shift ends (default: one's own; another's: the manager's)")


class CountIn(Body):
    counted_cents: int = Field(ge=0, le=MAX_AMOUNT_CENTS, description="The cash counted in the drawer, in cents")
    note: Annotated[str, text(NOTE_MAX, 0)] = ""


class CorrectIn(Body):
    started_at: Moment
    ended_at: Moment | None = Field(None, description="None only for a shift still running")
    reason: Annotated[str, text(REASON_MAX)]


class RecordIn(Body):
    staff: Annotated[str, text(64)]
    started_at: Moment
    ended_at: Moment
    reason: Annotated[str, text(REASON_MAX)]


@router.post("", response_model=list[ShiftView], status_code=201, summary="Record a shift somebody worked without clocking in (a reason)")
def record(body: RecordIn, hub: Hub, user: Annotated[Staff, Depends(can("shifts.manage"))]) -> list[ShiftView]:
    new = hub.execute(body.to(RecordShift, actor=user.username))
    return hub.reads.shifts.versions(new)


@router.get("/current", response_model=list[ShiftView], summary="Who is clocked in now")
def current(reads: Reads, user: Annotated[Staff, Depends(can("shifts.own"))]) -> list[ShiftView]:
    return reads.shifts.on_shift()


@router.post("/clock-in", response_model=ShiftView, status_code=201, summary="Clock oneself in: a shift begins now")
def clock_in(hub: Hub, user: Annotated[Staff, Depends(can("shifts.own"))]) -> ShiftView:
    hub.execute(ClockIn(staff=user.username, actor=user.username))
    shift = hub.reads.shifts.open_shift(user.username)
    assert shift is not None
    return shift


@router.post("/clock-out", response_model=ShiftView, summary="Clock out: one's own shift (another's: the manager's) ends now")
def clock_out(body: ClockOutIn, hub: Hub, user: Annotated[Staff, Depends(can("shifts.own"))]) -> ShiftView:
    staff = body.staff or user.username
    if staff != user.username:
        demand(user, "shifts.manage")
    shift = hub.execute(ClockOut(staff=staff, actor=user.username))
    return hub.reads.shifts.versions(shift)[0]


@router.post(
    "/drawer",
    response_model=DrawerCounted,
    status_code=201,
    summary="Count the drawer at a shift change: expected, counted, the difference",
)
def count_drawer(body: CountIn, hub: Hub, user: Annotated[Staff, Depends(can("shifts.own"))]) -> DrawerCounted:
    return hub.execute(body.to(CountDrawer, actor=user.username))


@router.get("/days/{day}", response_model=ShiftDay, summary="A day's shift report: takings and voids per shift and person, the drawer")
def day_report(day: Day, reads: Reads, user: Annotated[Staff, Depends(can("shifts.manage"))]) -> ShiftDay:
    return reads.shifts.day(day)


@router.get(
    "/hours", response_model=list[MonthHours], summary="Minutes worked per person and month over business days from..to (the payroll)"
)
def hours(
    reads: Reads,
    user: Annotated[Staff, Depends(can("shifts.manage"))],
    first: Annotated[Day, Query(alias="from", description="First business day, YYYY-MM-DD (a shift counts on the day it starts)")],
    last: Annotated[Day | None, Query(alias="to", description="Last business day (default: the same as from)")] = None,
) -> list[MonthHours]:
    return reads.shifts.hours(first, last or first)


@router.get("/{shift_id}", response_model=list[ShiftView], summary="A shift's versions, the latest first (corrections with reasons)")
def versions(shift_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can("shifts.manage"))]) -> list[ShiftView]:
    return reads.shifts.versions(shift_id)


@router.post("/{shift_id}/correct", response_model=list[ShiftView], summary="Correct a shift's times with a reason (a new version)")
def correct(shift_id: IdPath, body: CorrectIn, hub: Hub, user: Annotated[Staff, Depends(can("shifts.manage"))]) -> list[ShiftView]:
    new = hub.execute(body.to(CorrectShift, shift=shift_id, actor=user.username))
    return hub.reads.shifts.versions(new)
