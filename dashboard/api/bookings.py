"""Bookings over the API: the list (staff: with phone numbers), one booking, a new one and its
cancellation (the same commands the pages build), the free tables of a kind (no personal data:
what a future public booking page would ask), and the private iCal feed of a staff member.

Times in and out are ISO 8601 with their offset (a time without one is read on the venue's wall
clock, Europe/Bratislava); a bare date in `from`/`to` means that business day. Every date and time
is read by the hall's one parser (dashboard.api.dates): its range, its DST nights, a 422 otherwise.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.responses import Response
from pydantic import Field

from broker.accounts.staff import Staff
from broker.bookings.bookings import BookTable, CancelBooking
from broker.bookings.reads import Availability, BookingView
from broker.domain.schedule import business_day_bounds
from broker.hall.read_models import HallReads
from dashboard.api.auth import can
from dashboard.api.calendar_feed import ics
from dashboard.api.dates import DayOrMoment, Moment
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, Id, text

router = APIRouter(tags=["bookings"])

MAX_WINDOW = timedelta(days=31)
Kind = Literal["pool", "pool9", "pool8", "carom"]


class BookingIn(Body):
    table: Annotated[str, text(32)] | None = None
    kind: Kind | None = None
    start: Annotated[Moment, Field(description="ISO 8601; without an offset, the venue's wall clock")]
    end: Moment
    party_size: Annotated[int, Field(ge=1, le=100)]
    name: Annotated[str, text(80, min_length=0)] = ""
    phone: Annotated[str, text(32, min_length=0)] | None = None
    note: Annotated[str, text(200, min_length=0)] = ""
    member_id: Id | None = None
    deposit_cents: Annotated[int, Field(ge=0, le=100_000)] | None = None
    form_key: Annotated[str, text(64, min_length=8)] | None = None


class CancelIn(Body):
    reason: Annotated[str, text(200, min_length=0)] = ""


def _bound(reads: HallReads, value: date | datetime | None, *, end: bool) -> datetime | None:
    """`from`/`to` as given: a day is that business day's start (`to`: its end), a time itself."""
    if value is None or isinstance(value, datetime):
        return value
    return business_day_bounds(value, reads.venue)[1 if end else 0]


def _window(reads: HallReads, start: date | datetime | None, end: date | datetime | None) -> tuple[datetime, datetime]:
    today = business_day_bounds(reads.today(), reads.venue)
    lo = _bound(reads, start, end=False) or today[0]
    hi = _bound(reads, end, end=True) or (lo + (today[1] - today[0]) if start else today[1])
    if not lo < hi:
        raise HTTPException(422, "`to` must be after `from`")
    if hi - lo > MAX_WINDOW:
        raise HTTPException(422, f"at most {MAX_WINDOW.days} days at once")
    return lo, hi


FromQ = Annotated[DayOrMoment | None, Query(alias="from", description="ISO date (a business day) or time; default: today")]
ToQ = Annotated[DayOrMoment | None, Query(alias="to", description="ISO date (that business day's end) or time")]


@router.get("/bookings", response_model=list[BookingView], summary="Bookings overlapping a window (default: today), with phone numbers")
def list_bookings(
    reads: Reads, user: Annotated[Staff, Depends(can("bookings.read"))], start: FromQ = None, end: ToQ = None
) -> list[BookingView]:
    lo, hi = _window(reads, start, end)
    return reads.bookings.bookings(lo, hi)


@router.get("/bookings/{booking_id}", response_model=BookingView, summary="One booking")
def get_booking(booking_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can("bookings.read"))]) -> BookingView:
    b = reads.bookings.booking(booking_id)
    if b is None:
        raise HTTPException(404, "There is no such booking.")
    return b


@router.post("/bookings", response_model=BookingView, status_code=201, summary="Book a table (or the first free one of a kind)")
def create_booking(body: BookingIn, hub: Hub, user: Annotated[Staff, Depends(can("bookings.run"))]) -> BookingView:
    reads = hub.reads
    booking = hub.execute(body.to(BookTable, actor=user.username))
    found = reads.bookings.booking(booking)
    assert found is not None
    return found


@router.post("/bookings/{booking_id}/cancel", response_model=BookingView, summary="Cancel a booking")
def cancel_booking(booking_id: IdPath, body: CancelIn, hub: Hub, user: Annotated[Staff, Depends(can("bookings.run"))]) -> BookingView:
    hub.execute(body.to(CancelBooking, booking=booking_id, actor=user.username))
    found = hub.reads.bookings.booking(booking_id)
    assert found is not None
    return found


@router.get("/availability", response_model=Availability, summary="When each table of a kind is free (no personal data)")
def availability(
    reads: Reads, user: Annotated[Staff, Depends(can("bookings.availability"))], kind: Kind = "pool", start: FromQ = None, end: ToQ = None
) -> Availability:
    lo, hi = _window(reads, start, end)
    return reads.bookings.availability(kind, lo, hi)


@router.get(
    "/calendar/{token}.ics",
    summary="A staff member's private iCal feed of the bookings (the link is the key)",
    response_class=Response,
    responses={200: {"content": {"text/calendar": {"schema": {"type": "string"}}}}, 404: {"description": "unknown or revoked link"}},
)
def calendar(token: Annotated[str, Path(max_length=64)], reads: Reads) -> Response:
    feed = reads.bookings.feed(token) if 16 <= len(token) <= 64 and token.isascii() else None
    if feed is None:
        raise HTTPException(404, "This calendar link is unknown or was revoked.")
    return Response(ics(reads, feed), media_type="text/calendar; charset=utf-8", headers={"Cache-Control": "private, max-age=300"})
