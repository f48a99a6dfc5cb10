"""Čakacia listina: walk-in parties waiting for a table of a kind, with their estimated wait; the
offer of a table that freed ("Pool 4 voľný → Kováč, 2"), taken ("Berú": the game starts),
passed on or withdrawn; shown on the floor as a region of its own (`/waiting/panel`, refreshed
live) and on its own page. The same commands as the hub's watchdog uses (broker.bookings.waiting_list).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.bookings.waiting_list import DeclineOffer, JoinWaitingList, LeaveWaitingList, OfferTable, TakeOffer
from broker.hall.facade import HubFacade, ServiceError
from broker.hall.read_models import HallReads
from dashboard.api.deps import MAX_ID, Hub, IdPath, Reads
from dashboard.web.auth import came_from, page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.pages_bookings import act, safe_next
from dashboard.web.request_text import refusal
from dashboard.web.tab_parts import new_form_key
from dashboard.web.table_page import speaking
from dashboard.web.templating import NavLink, flash, render

router = APIRouter()
# In the top bar while a party waits ("Poradie 2"), on every page, redrawn live; the list shows
# itself on the floor too, and the Bookings page opens it.
NAV = [NavLink("/waiting", N_("Waiting list"), order=17, fragment="_waiting_link.html", src="/waiting/link", topics="waiting")]

Text = Annotated[str, Form(max_length=200)]


def _context(reads: HallReads) -> dict[str, Any]:
    return {"form_key": new_form_key}


@router.get("/waiting")
def waiting_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("bookings.read"))]) -> Response:
    return render(request, "waiting.html", _context(reads))


# The pages the waiting panel is part of: its forms go back there, where their message is said.
PANEL_PAGES = ("/", "/waiting")


@router.get("/waiting/panel")
def waiting_panel(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("bookings.read"))]) -> Response:
    """The floor's region: the waiting parties and the offers (empty when nobody waits). Fetched
    by the page it is part of (app.js, data-src), whose path the Referer gives: its forms go back
    to that page, never to this fragment (which shows no message: a refused "Berú" was silent)."""
    page = came_from(request) or "/"
    return render(request, "_waiting_panel.html", {**_context(reads), "back": page if page in PANEL_PAGES else "/"})


@router.get("/waiting/link")
def waiting_link(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("bookings.read"))]) -> Response:
    """The top bar's link to the list with how many wait (empty when nobody does)."""
    return render(request, "_waiting_link.html")


@router.post("/waiting", dependencies=[Depends(verify_csrf)])
def join(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    name: Annotated[str, Form(max_length=120)],
    party_size: Annotated[int, Form(ge=1, le=100)] = 2,
    kind: Annotated[str, Form(max_length=8)] = "pool",
    phone: Annotated[str, Form(max_length=40)] = "",
    sms_ok: Annotated[bool, Form()] = False,
    note: Text = "",
    form_key: Annotated[str, Form(max_length=64, pattern=r"^[A-Za-z0-9_-]*$")] = "",
    next: Text = "",
) -> Response:
    cmd = JoinWaitingList(
        name=name,
        party_size=party_size,
        kind=kind,
        phone=phone or None,
        sms_ok=sms_ok,
        note=note,
        form_key=form_key or None,
        actor=user.username,
    )
    return act(request, next, lambda: hub.execute(cmd), N_("Added to the waiting list."))


@router.post("/waiting/{party_id}/offer", dependencies=[Depends(verify_csrf)])
def offer(
    party_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    table: Annotated[str, Form(max_length=32)],
    next: Text = "",
) -> Response:
    return act(request, next, lambda: hub.execute(OfferTable(party=party_id, table=table, actor=user.username)), N_("Table offered."))


@router.post("/waiting/{party_id}/take", dependencies=[Depends(verify_csrf)])
def take(
    party_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("bookings.run"))],
    member_id: Annotated[int | None, Form(ge=1, le=MAX_ID)] = None,
    next: Text = "",
) -> Response:
    with speaking(request):
        try:
            game = hub.execute(TakeOffer(party=party_id, member_id=member_id, actor=user.username))
        except ServiceError as e:
            flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
            return RedirectResponse(safe_next(next, "/waiting"), status_code=303)
        table = _table_of(hub, game)
        flash(request, gettext("Game started on %(table)s.") % {"table": hub.reads.tables[table].name}, "ok")
    return RedirectResponse(f"/tables/{table}", status_code=303)


def _table_of(hub: HubFacade, game: int) -> str:
    return next(t for t, g in hub.reads.floor.hall_snapshot().open.items() if g.id == game)


@router.post("/waiting/{party_id}/decline", dependencies=[Depends(verify_csrf)])
def decline(
    party_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("bookings.run"))], next: Text = ""
) -> Response:
    return act(
        request, next, lambda: hub.execute(DeclineOffer(party=party_id, actor=user.username)), N_("The table goes to the next party.")
    )


@router.post("/waiting/{party_id}/leave", dependencies=[Depends(verify_csrf)])
def leave(
    party_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("bookings.run"))], next: Text = ""
) -> Response:
    return act(request, next, lambda: hub.execute(LeaveWaitingList(party=party_id, actor=user.username)), N_("Off the waiting list."))
