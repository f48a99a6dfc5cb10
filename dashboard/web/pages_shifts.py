"""Zmeny: staff clock themselves in and out (the top bar's button, the /shift page) and count the
drawer at a shift change; the manager sees a day's shift report (takings by method and voids per
shift and person, agreeing with the Z report; the drawer in segments between its counts), corrects
a shift with a reason (a new version; the history stays), ends someone's forgotten shift and
downloads the hours per person and month for the payroll (CSV for Slovak Excel).

The rules are broker.shifts's; these routes build the same commands as the API (dashboard.api.shifts).
A refused form comes back with the reason and what was typed, and nothing changes.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.dates import DateRefused
from broker.domain.shifts.rules import REASON_MAX
from broker.hall.facade import NotFound, ServiceError
from broker.hall.read_models import HallReads
from broker.shifts.shifts import NOTE_MAX, ClockIn, ClockOut, CorrectShift, CountDrawer, RecordShift
from dashboard.api.dates import WRITTEN_MAX
from dashboard.api.deps import MAX_ID, Hub, Reads
from dashboard.web import i18n
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_
from dashboard.web.pages_day import drawer_cents
from dashboard.web.pages_reports import csv_bytes
from dashboard.web.request_text import refusal, translated
from dashboard.web.templating import NavLink, flash, render

router = APIRouter()
NAV = [NavLink("/shifts", N_("Shifts"), role="manager", order=85)]

AmountField = Annotated[str, Form(max_length=40)]
When = Annotated[str, Form(max_length=WRITTEN_MAX)]


def _method_name(reads: HallReads, request: Request, method: str) -> str:
    for m in reads.venue.till.payment_methods:
        if m.id == method:
            return m.name if i18n.lang_of(request) == "sk" else (m.name_en or m.name)
    return method


# --- the bartender's own shift ------------------------------------------------------------------


def _my_page(
    request: Request, reads: HallReads, user: Staff, *, error: str | None = None, form: dict[str, Any] | None = None, status: int = 200
) -> Response:
    return render(
        request,
        "shift.html",
        {
            "mine": reads.shifts.open_shift(user.username),
            "on_shift": reads.shifts.on_shift(),
            "day": reads.till.day_overview(),
            "form_error": error,
            "form": form or {},
            "note_max": NOTE_MAX,
        },
        status=status,
    )


@router.get("/shift")
def my_shift(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("shifts.own"))]) -> Response:
    """Moja zmena: clock in or out, count the drawer at a shift change, who is on shift now."""
    return _my_page(request, reads, user)


@router.post("/shift/in", dependencies=[Depends(verify_csrf)])
def clock_in(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("shifts.own"))]) -> Response:
    try:
        hub.execute(ClockIn(staff=user.username, actor=user.username))
    except ServiceError as e:
        return _my_page(request, hub.reads, user, error=refusal(request, e), status=409)
    flash(request, translated(request, N_("Your shift began at %(time)s."), time=i18n.clock(hub.reads.clock(), hub.reads.venue.tz)), "ok")
    return RedirectResponse("/shift", status_code=303)


@router.post("/shift/out", dependencies=[Depends(verify_csrf)])
def clock_out(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("shifts.own"))]) -> Response:
    try:
        shift = hub.execute(ClockOut(staff=user.username, actor=user.username))
    except ServiceError as e:
        return _my_page(request, hub.reads, user, error=refusal(request, e), status=409)
    worked = hub.reads.shifts.versions(shift)[0]
    flash(request, translated(request, N_("Your shift ended; you worked %(time)s h."), time=i18n.duration(worked.minutes * 60)), "ok")
    return RedirectResponse("/shift", status_code=303)


@router.post("/shift/drawer", dependencies=[Depends(verify_csrf)])
def count_drawer(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("shifts.own"))],
    counted_eur: AmountField = "",
    note: Annotated[str, Form(max_length=NOTE_MAX * 4)] = "",
) -> Response:
    form = {"counted": counted_eur, "note": note}
    cents = drawer_cents(counted_eur)
    if cents is None:
        message = translated(request, N_("Give the cash counted in the drawer in euros, e.g. 412,50."))
        return _my_page(request, hub.reads, user, error=message, form=form, status=400)
    try:
        done = hub.execute(CountDrawer(counted_cents=cents, note=note, actor=user.username))
    except ServiceError as e:
        return _my_page(request, hub.reads, user, error=refusal(request, e), form=form, status=409)
    flash(
        request,
        translated(
            request,
            N_(
                "The drawer is counted: %(counted)s, expected %(expected)s, difference %(difference)s. The next shift starts from %(counted)s."
            ),
            counted=i18n.money(done.counted_cents),
            expected=i18n.money(done.expected_cents),
            difference=i18n.money(done.difference_cents),
        ),
        "ok" if done.difference_cents == 0 else "info",
    )
    return RedirectResponse("/shift", status_code=303)


# --- the manager's ------------------------------------------------------------------------------


def _shifts_page(
    request: Request,
    reads: HallReads,
    shown: date | None = None,
    *,
    error: str | None = None,
    form: dict[str, Any] | None = None,
    status: int = 200,
) -> Response:
    shown = shown or reads.till.day_overview().day
    report = reads.shifts.day(shown)
    return render(
        request,
        "shifts.html",
        {
            "form_error": error,
            "form": form or {},
            "accounts": sorted(r.u.username for r in reads.people.staff_rows() if r.u.active),
            "reason_max": REASON_MAX,
            "report": report,
            "shown": shown,
            "on_shift": reads.shifts.on_shift(),
            "shifts": reads.shifts.shifts(shown, shown),
            "method": lambda m: _method_name(reads, request, m),
            "methods": sorted({m.method for r in report.rows for m in r.by_method}, key=_method_order(reads)),
            "month": shown.strftime("%Y-%m"),
        },
        status=status,
    )


@router.get("/shifts")
def shifts_page(
    request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("shifts.manage"))], day: str | None = None
) -> Response:
    """The shift report of a business day (the running one by default), its shifts to correct, a forgotten one to record."""
    return _shifts_page(request, reads, reads.dates().day(day) if day else None)


@router.post("/shifts/record", dependencies=[Depends(verify_csrf)])
def record_shift(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("shifts.manage"))],
    staff: Annotated[str, Form(max_length=64)] = "",
    start: When = "",
    end: When = "",
    reason: Annotated[str, Form(max_length=REASON_MAX * 4)] = "",
) -> Response:
    """A shift somebody worked without clocking in, recorded by the manager with a reason."""
    form = {"staff": staff, "start": start, "end": end, "reason": reason}
    dates = hub.reads.dates()
    try:
        started, ended = dates.moment(start), dates.moment(end)
    except DateRefused as e:
        return _shifts_page(request, hub.reads, error=refusal(request, e), form=form, status=400)
    try:
        new = hub.execute(RecordShift(staff=staff, started_at=started, ended_at=ended, reason=reason, actor=user.username))
    except ServiceError as e:
        return _shifts_page(request, hub.reads, error=refusal(request, e), form=form, status=409)
    flash(request, translated(request, N_("The shift of %(who)s is recorded."), who=staff), "ok")
    return RedirectResponse(f"/shifts/{new}", status_code=303)


def _method_order(reads: HallReads) -> Any:
    order = [m.id for m in reads.venue.till.payment_methods]
    return lambda m: (order.index(m) if m in order else len(order), m)


@router.post("/shifts/out", dependencies=[Depends(verify_csrf)])
def end_someones_shift(
    request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("shifts.manage"))], staff: Annotated[str, Form(max_length=64)] = ""
) -> Response:
    """The manager ends a shift somebody forgot to end (now; a correction sets the real end)."""
    try:
        hub.execute(ClockOut(staff=staff, actor=user.username))
    except ServiceError as e:
        flash(request, refusal(request, e), "error")
        return RedirectResponse("/shifts", status_code=303)
    flash(request, translated(request, N_("The shift of %(who)s ended now; correct its end if it ended earlier."), who=staff), "ok")
    return RedirectResponse("/shifts", status_code=303)


@router.get("/shifts/hours.csv")
def hours_csv(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("shifts.manage"))], month: str = "") -> Response:
    """Hours worked per person in a month, for the payroll: CSV that Slovak Excel opens."""
    first: date = reads.dates().month(month) if month else reads.today().replace(day=1)  # no month: this one
    rows: list[list[Any]] = [[translated(request, x) for x in (N_("Month"), N_("Staff"), N_("Shifts"), N_("Hours"), N_("Minutes"))]]
    for h in reads.shifts.month_hours(first.year, first.month):
        # Hours as a number with two decimals (Excel sums them; 9 h 15 min is 9,25), the minutes exact.
        rows.append([h.month, h.staff, h.shifts, (Decimal(h.minutes) / 60).quantize(Decimal("0.01")), h.minutes])
    return Response(
        csv_bytes(rows),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="lavos-hodiny-{first:%Y-%m}.csv"'},
    )


def _shift_id(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_ID:
        raise NotFound(N_("There is no such shift."))
    return int(text)


def _local_input(dt: datetime | None, reads: HallReads) -> str:
    """A time as a datetime-local input shows it (the venue's wall clock)."""
    return dt.astimezone(reads.venue.tz).strftime("%Y-%m-%dT%H:%M") if dt else ""


def _shift_page(
    request: Request, reads: HallReads, shift: int, *, error: str | None = None, form: dict[str, Any] | None = None, status: int = 200
) -> Response:
    versions = reads.shifts.versions(shift)
    latest = versions[0]
    return render(
        request,
        "shift_detail.html",
        {
            "versions": versions,
            "latest": latest,
            "form_error": error,
            "form": form or {"start": _local_input(latest.started_at, reads), "end": _local_input(latest.ended_at, reads), "reason": ""},
            "reason_max": REASON_MAX,
        },
        status=status,
    )


@router.get("/shifts/{shift}")
def shift_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("shifts.manage"))], shift: str) -> Response:
    """A shift's versions (corrections with their reasons, the latest first) and the correction form."""
    return _shift_page(request, reads, _shift_id(shift))


@router.post("/shifts/{shift}/correct", dependencies=[Depends(verify_csrf)])
def correct_shift(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("shifts.manage"))],
    shift: str,
    start: When = "",
    end: When = "",
    reason: Annotated[str, Form(max_length=REASON_MAX * 4)] = "",
) -> Response:
    form = {"start": start, "end": end, "reason": reason}
    dates = hub.reads.dates()
    try:  # what was typed first: a refused time is said whatever the shift (a 400, the form again when there is one)
        started = dates.moment(start)
        ended = dates.moment(end) if end.strip() else None
    except DateRefused as e:
        if not shift.isdigit():
            raise
        return _shift_page(request, hub.reads, _shift_id(shift), error=refusal(request, e), form=form, status=400)
    shift_id = _shift_id(shift)
    try:
        new = hub.execute(CorrectShift(shift=shift_id, started_at=started, ended_at=ended, reason=reason, actor=user.username))
    except ServiceError as e:
        return _shift_page(request, hub.reads, shift_id, error=refusal(request, e), form=form, status=409)
    flash(request, translated(request, N_("The shift is corrected; its earlier version stays in its history.")), "ok")
    return RedirectResponse(f"/shifts/{new}", status_code=303)
