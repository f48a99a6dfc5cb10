"""Foosball is for members only: who is checked in at each table, since when, and their goals."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.floor.table_service import CheckInFoosball, CheckOutFoosball
from broker.hall.read_models import HallReads
from dashboard.api.deps import MAX_ID, Hub, Reads
from dashboard.web.alerts_view import banner_alerts
from dashboard.web.auth import page_can, safe_next
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.table_page import do_then_back, in_visitor_lang
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/foosball")
NAV = [NavLink("/foosball", N_("Foosball"), order=20)]


def _context(reads: HallReads) -> dict[str, Any]:
    alerts = banner_alerts(reads)
    return {"foosball": reads.floor.active_checkins(), "open_alerts": alerts, "unguarded": {a.table for a in alerts if a.loud}}


@router.get("")
def foosball(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("foosball.checkin"))]) -> Response:
    return render(request, "foosball.html", _context(reads))


@router.get("/tables")
def foosball_tables(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("foosball.checkin"))]) -> Response:
    return render(request, "_foosball_tables.html", _context(reads))


# -- staff check-in and check-out (a member who forgot the card): the API's facade methods ----

MemberField = Annotated[int | None, Form(ge=1, le=MAX_ID)]
NextField = Annotated[str, Form(max_length=2000)]


def _foosball_table(reads: HallReads, table: str) -> str:
    if table not in reads.floor.foosball_tables():
        raise HTTPException(404, gettext("There is no such foosball table."))
    return reads.tables[table].name


@router.post("/{table}/checkin", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def checkin(
    table: str,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("foosball.checkin"))],
    member_id: MemberField = None,
    next: NextField = "",
) -> Response:
    name = _foosball_table(hub.reads, table)
    back = safe_next(next) if next else f"/tables/{table}"
    if member_id is None:
        flash(request, gettext("Choose the member to check in."), "error")
        return RedirectResponse(back, status_code=303)
    chosen = member_id

    def run() -> str:
        c = hub.execute(CheckInFoosball(table=table, member_id=chosen, actor=user.username))
        return gettext("%(member)s checked in at %(table)s.") % {"member": c.member, "table": name}

    return do_then_back(request, back, run)


@router.post("/{table}/checkout", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def checkout(
    table: str,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("foosball.checkin"))],
    member_id: Annotated[int, Form(ge=1, le=MAX_ID)],
    next: NextField = "",
) -> Response:
    name = _foosball_table(hub.reads, table)
    back = safe_next(next) if next else f"/tables/{table}"

    def run() -> str:
        who = hub.execute(CheckOutFoosball(table=table, member_id=member_id, actor=user.username))
        return gettext("%(member)s checked out at %(table)s.") % {"member": who, "table": name}

    return do_then_back(request, back, run)
