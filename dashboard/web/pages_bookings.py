"""Rezervácie: the day view (tables × hours, a free slot is a link to book it), the day's bookings
with what staff do to them, blocks (the manager's), deposits to settle, and one's own iCal link;
the booking form, reached from a table's page ("Rezervovať": the table filled in, so a phone
booking is the time and the name typed and one tap) or from a free slot of the day view.

Every action builds the command the API builds (dashboard.api.bookings). A refused booking
form draws the form again with the reason and what was typed (and, after too many no-shows, the
deposit field); a done action redirects (303) with a message.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.bookings.bookings import (
    DEPOSIT_NEEDED,
    AddBlock,
    BookTable,
    CancelBooking,
    ConfirmBooking,
    GuestsArrived,
    MarkNoShow,
    MoveBooking,
    NewCalendarFeed,
    RemoveBlock,
    RevokeCalendarFeed,
    SettleDeposit,
)
from broker.domain import bookings as rules
from broker.domain.dates import DateRefused, clock_time
from broker.domain.euros import parse_euros
from broker.domain.refusals import Refusal
from broker.hall.facade import ServiceError
from broker.hall.read_models import HallReads
from dashboard.access import allows
from dashboard.api.dates import WRITTEN_MAX
from dashboard.api.deps import MAX_ID, Hub, IdPath, Reads
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext, money
from dashboard.web.request_text import refusal
from dashboard.web.tab_parts import new_form_key
from dashboard.web.table_page import speaking
from dashboard.web.templating import NavLink, flash, render

router = APIRouter()
NAV = [NavLink("/bookings", N_("Bookings"), order=15)]

LENGTHS = (60, 90, 120, 150, 180, 240)  # minutes a booking may be chosen for in the form
SAFE_NEXT = ("/tables/", "/bookings", "/waiting")
Text = Annotated[str, Form(max_length=200)]
Short = Annotated[str, Form(max_length=40)]


def safe_next(path: str, fallback: str) -> str:
    """Where to go back to after a form: a page of ours (the floor, a table, bookings, the waiting list), else `fallback`."""
    ok = path == "/" or (path.startswith(SAFE_NEXT) and "//" not in path and "\\" not in path)
    return path if ok else fallback


def _day(reads: HallReads, text: str | None) -> date:
    """The day a page or form names (default today), read by the hall's parser: DateRefused otherwise (a 400)."""
    return reads.dates().day(text) if text else reads.today()


def _clock_text(text: str) -> str:
    """A time to fill the form with (a free slot's link gives one), as the hall's parser reads it; "" if it is none."""
    try:
        return clock_time(text).strftime("%H:%M") if text else ""
    except DateRefused:
        return ""


def next_slot(reads: HallReads) -> str:
    """The next half hour on the venue's clock ("20:30"), what the form offers first."""
    local = reads.clock().astimezone(reads.venue.tz)
    minutes = (local.minute // 30 + 1) * 30
    slot = local.replace(minute=0, second=0, microsecond=0) + timedelta(minutes=minutes)
    return slot.strftime("%H:%M")


# -- the day view -------------------------------------------------------------------------------


@router.get("/bookings")
def day_view(
    request: Request,
    reads: Reads,
    user: Annotated[Staff, Depends(page_can("bookings.read"))],
    day: Annotated[str | None, Query(max_length=WRITTEN_MAX)] = None,
) -> Response:
    on = _day(reads, day)
    view = reads.bookings.day(on)
    return render(
        request,
        "bookings.html",
        {
            "view": view,
            "today": reads.today(),
            "tomorrow": reads.today() + timedelta(days=1),
            "prev_day": on - timedelta(days=1),
            "next_day": on + timedelta(days=1),
            "tz": reads.venue.tz,
            "tables": [t for t in reads.venue.tables if rules.bookable(t)],
            "rooms": reads.venue.rooms,
            "can_block": allows(user.role, "bookings.blocks"),
            "can_settle": allows(user.role, "bookings.deposits"),
            "has_feed": reads.bookings.has_feed(user.username),
            "lengths": LENGTHS,
        },
    )


# -- the booking form ---------------------------------------------------------------------------


def _form_page(request: Request, reads: HallReads, form: dict[str, Any], error: str | None = None, status: int = 200) -> Response:
    return render(
        request,
        "booking_form.html",
        {
            "form": form,
            "form_error": error,
            "tables": [t for t in reads.venue.tables if rules.bookable(t)],
            "lengths": LENGTHS,
            "max_party": reads.venue.bookings.max_party,
            "deposit_default": money(reads.venue.bookings.deposit_cents),
        },
        status=status,
    )


@router.get("/bookings/new")
def booking_form(
    request: Request,
    reads: Reads,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    table: Annotated[str, Query(max_length=32)] = "",
    day: Annotated[str | None, Query(max_length=WRITTEN_MAX)] = None,
    time: Annotated[str, Query(max_length=WRITTEN_MAX)] = "",
    next: Annotated[str, Query(max_length=200)] = "",
) -> Response:
    where = table if table in reads.tables and rules.bookable(reads.tables[table]) else ""
    form = {
        "where": where,
        "day": _day(reads, day).isoformat(),
        "time": _clock_text(time) or next_slot(reads),
        "minutes": reads.venue.bookings.default_min,
        "party_size": 2,
        "form_key": new_form_key(),
        "next": safe_next(next, f"/tables/{where}" if where else "/bookings"),
    }
    return _form_page(request, reads, form)


@router.post("/bookings/new", dependencies=[Depends(verify_csrf)])
def book(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    where: Annotated[str, Form(max_length=40)],
    day: Annotated[str, Form(max_length=WRITTEN_MAX)],
    time: Annotated[str, Form(max_length=WRITTEN_MAX)],
    name: Annotated[str, Form(max_length=120)] = "",
    minutes: Annotated[int, Form(ge=15, le=12 * 60)] = 120,
    party_size: Annotated[int, Form(ge=1, le=100)] = 2,
    phone: Short = "",
    note: Text = "",
    member_id: Annotated[int | None, Form(ge=1, le=MAX_ID)] = None,
    deposit: Short = "",
    form_key: Annotated[str, Form(max_length=64, pattern=r"^[A-Za-z0-9_-]*$")] = "",
    next: Text = "",
) -> Response:
    reads = hub.reads
    form: dict[str, Any] = {
        "where": where,
        "day": day,
        "time": time,
        "minutes": minutes,
        "name": name,
        "party_size": party_size,
        "phone": phone,
        "note": note,
        "deposit": deposit,
        "ask_deposit": bool(deposit),
        "form_key": form_key,
        "next": safe_next(next, "/bookings"),
    }
    with speaking(request):
        try:
            deposit_cents = None
            if deposit.strip():
                deposit_cents = parse_euros(deposit, low=0, high=100_000)
                if deposit_cents is None:
                    return _form_page(request, reads, form, gettext("The deposit is an amount in euros, e.g. 10,00."), 400)
            span = rules.span_for(_day(reads, day), rules.parse_hhmm(time), minutes, reads.venue.tz)
            table, kind = (None, where[5:]) if where.startswith("kind:") else (where, None)
            booking = hub.execute(
                BookTable(
                    table=table or None,
                    kind=kind,
                    start=span.start,
                    end=span.end,
                    party_size=party_size,
                    name=name,
                    phone=phone or None,
                    note=note,
                    member_id=member_id,
                    deposit_cents=deposit_cents,
                    form_key=form_key or None,
                    actor=user.username,
                )
            )
        except DateRefused as e:  # not a day or a time, outside the hall's range, or skipped by the clocks
            return _form_page(request, reads, form, refusal(request, e), 400)
        except (ServiceError, Refusal) as e:
            if getattr(e, "msgid", None) == DEPOSIT_NEEDED:
                form["ask_deposit"], form["deposit"] = True, form["deposit"] or money(reads.venue.bookings.deposit_cents)
            return _form_page(request, reads, form, refusal(request, e), 409)
        b = reads.bookings.booking(booking)
        assert b is not None
        flash(request, _said(reads, b), "ok")
    return RedirectResponse(form["next"], status_code=303)


def _said(reads: HallReads, b: Any) -> str:
    tz = reads.venue.tz
    return gettext("Booked: %(table)s, %(day)s %(start)s–%(end)s, %(name)s (%(size)d).") % {
        "table": reads.tables[b.table].name,
        "day": f"{b.start.astimezone(tz):%-d. %-m.}",
        "start": f"{b.start.astimezone(tz):%H:%M}",
        "end": f"{b.end.astimezone(tz):%H:%M}",
        "name": b.name,
        "size": b.party_size,
    }


# -- what staff do to a booking -------------------------------------------------------------------


def act(request: Request, back: str, run: Any, done: str) -> Response:
    """Run a staff action (`run`), then back to `back` with `done` (a message id) or the refusal."""
    with speaking(request):
        try:
            run()
        except ServiceError as e:
            flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
        else:
            flash(request, gettext(done), "ok")
    return RedirectResponse(safe_next(back, "/bookings"), status_code=303)


@router.post("/bookings/{booking_id}/arrived", dependencies=[Depends(verify_csrf)])
def arrived(
    booking_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    to_table: Annotated[str, Form(max_length=32)] = "",
    next: Text = "",
) -> Response:
    with speaking(request):
        try:
            game = hub.execute(GuestsArrived(booking=booking_id, to_table=to_table or None, actor=user.username))
        except ServiceError as e:
            flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
            return RedirectResponse(safe_next(next, "/bookings"), status_code=303)
        b = hub.reads.bookings.booking(booking_id)
        assert b is not None
        name = hub.reads.tables[b.table].name
        if game is None:
            flash(
                request,
                gettext("%(name)s arrived; %(table)s is still played: seat them when it frees.") % {"name": b.name, "table": name},
                "info",
            )
            return RedirectResponse(safe_next(next, "/bookings"), status_code=303)
        flash(request, gettext("Game started on %(table)s for %(name)s.") % {"table": name, "name": b.name}, "ok")
    return RedirectResponse(f"/tables/{b.table}", status_code=303)


@router.post("/bookings/{booking_id}/confirm", dependencies=[Depends(verify_csrf)])
def confirm(
    booking_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("bookings.run"))], next: Text = ""
) -> Response:
    return act(request, next, lambda: hub.execute(ConfirmBooking(booking=booking_id, actor=user.username)), N_("Booking confirmed."))


@router.post("/bookings/{booking_id}/cancel", dependencies=[Depends(verify_csrf)])
def cancel(
    booking_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    reason: Text = "",
    next: Text = "",
) -> Response:
    return act(
        request,
        next,
        lambda: hub.execute(CancelBooking(booking=booking_id, reason=reason, actor=user.username)),
        N_("Booking cancelled."),
    )


@router.post("/bookings/{booking_id}/no-show", dependencies=[Depends(verify_csrf)])
def no_show(
    booking_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("bookings.run"))], next: Text = ""
) -> Response:
    return act(request, next, lambda: hub.execute(MarkNoShow(booking=booking_id, actor=user.username)), N_("Marked: they did not come."))


@router.post("/bookings/{booking_id}/move", dependencies=[Depends(verify_csrf)])
def move(
    booking_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    to_table: Annotated[str, Form(max_length=32)],
    next: Text = "",
) -> Response:
    return act(
        request,
        next,
        lambda: hub.execute(MoveBooking(booking=booking_id, to_table=to_table, actor=user.username)),
        N_("Booking moved."),
    )


@router.post("/bookings/{booking_id}/deposit", dependencies=[Depends(verify_csrf)])
def settle_deposit(
    booking_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.deposits"))],
    outcome: Annotated[str, Form(pattern="^(keep|refund)$")],
    reason: Text = "",
    next: Text = "",
) -> Response:
    keep = outcome == "keep"
    done = N_("Deposit kept.") if keep else N_("Deposit given back.")
    return act(request, next, lambda: hub.execute(SettleDeposit(booking=booking_id, keep=keep, reason=reason, actor=user.username)), done)


def call_about(request: Request, reads: HallReads, bookings: list[Any]) -> None:
    """Flash, for staff, whom to call about these bookings (their table was blocked or taken out of service)."""
    for b in bookings:
        flash(
            request,
            gettext("Call %(name)s (%(phone)s): their booking on %(table)s at %(time)s has no free table now.")
            % {
                "name": b.name,
                "phone": b.phone or "—",
                "table": reads.tables[b.table].name,
                "time": f"{b.start.astimezone(reads.venue.tz):%H:%M}",
            },
            "error",
        )


def out_of_service_calls(request: Request, reads: HallReads, table: str) -> None:
    """A table just taken out of service: its bookings still to come today are listed to call (or move)."""
    ids = tuple(m.booking for m in reads.bookings.upcoming(table) if m.booking is not None)
    call_about(request, reads, reads.bookings.to_call(ids))


# -- blocks (the manager's) -------------------------------------------------------------------------


@router.post("/bookings/blocks", dependencies=[Depends(verify_csrf)])
def add_block(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.blocks"))],
    kind: Annotated[str, Form(max_length=16)],
    day: Annotated[str, Form(max_length=WRITTEN_MAX)],
    start: Annotated[str, Form(max_length=WRITTEN_MAX)],
    end: Annotated[str, Form(max_length=WRITTEN_MAX)],
    label: Annotated[str, Form(max_length=120)] = "",
    where: Annotated[str, Form(max_length=40)] = "",
) -> Response:
    reads = hub.reads
    back = "/bookings"
    with speaking(request):
        try:
            on = _day(reads, day)
            back = f"/bookings?day={on.isoformat()}"
            span = rules.local_span(on, rules.parse_hhmm(start), rules.parse_hhmm(end), reads.venue.tz)
            room = where[5:] if where.startswith("room:") else None
            tables = () if room else ((where,) if where else ())
            added = hub.execute(
                AddBlock(kind=kind, start=span.start, end=span.end, label=label, tables=tables, room=room, actor=user.username)
            )
        except (ServiceError, Refusal) as e:
            flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
            return RedirectResponse(back, status_code=303)
        flash(request, gettext("Block added; %(moved)d bookings moved.") % {"moved": len(added.moved)}, "ok")
        call_about(request, reads, reads.bookings.to_call(added.to_call))
    return RedirectResponse(back, status_code=303)


@router.post("/bookings/blocks/{block_id}/remove", dependencies=[Depends(verify_csrf)])
def remove_block(
    block_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("bookings.blocks"))], next: Text = ""
) -> Response:
    return act(request, next, lambda: hub.execute(RemoveBlock(block=block_id, actor=user.username)), N_("Block removed."))


# -- one's own calendar link --------------------------------------------------------------------------


@router.post("/bookings/calendar", dependencies=[Depends(verify_csrf)])
def new_feed(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("bookings.read"))]) -> Response:
    token = hub.execute(NewCalendarFeed(username=user.username, actor=user.username))
    url = str(request.base_url).rstrip("/") + f"/api/calendar/{token}.ics"
    with speaking(request):
        flash(request, gettext("Your calendar link (shown once; add it to your calendar app): %(url)s") % {"url": url}, "ok")
    return RedirectResponse("/bookings#calendar", status_code=303)


@router.post("/bookings/calendar/revoke", dependencies=[Depends(verify_csrf)])
def revoke_feed(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("bookings.read"))]) -> Response:
    return act(
        request,
        "/bookings",
        lambda: hub.execute(RevokeCalendarFeed(username=user.username, actor=user.username)),
        N_("Calendar link ended."),
    )
