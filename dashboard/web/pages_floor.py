"""The floor view (every table as it stands in the hall) and a table's panel, where games start."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.venue import TableSpec
from broker.floor.games import StartGame
from broker.hall.facade import CardInUse, ServiceError
from broker.hall.read_models import HallReads
from dashboard.api.deps import MAX_ID, Hub, Reads
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.floor import FloorData, table_view
from dashboard.web.i18n import N_, gettext
from dashboard.web.request_text import refusal, translated
from dashboard.web.table_page import panel_context, speaking, start_notice
from dashboard.web.templating import NavLink, flash, render

router = APIRouter()
NAV = [NavLink("/", N_("Tables"), order=10)]

MAX_PREPAID_MIN = 12 * 60
Text32 = Annotated[str, Form(max_length=32)]


def _spec(reads: HallReads, table_id: str) -> TableSpec:
    if table_id not in reads.tables:
        raise HTTPException(404, gettext("There is no such table."))
    return reads.tables[table_id]


def _floor_context(reads: HallReads) -> dict[str, Any]:
    data = FloorData(reads)
    return {"rooms": data.rooms(), "open_alerts": [a for a in data.alerts if not a.acked]}


@router.get("/")
def floor(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("floor.view"))]) -> Response:
    return render(request, "floor.html", _floor_context(reads))


@router.get("/floor/rooms")
def floor_rooms(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("floor.view"))]) -> Response:
    return render(request, "_floor_rooms.html", _floor_context(reads))


@router.get("/tables/{table_id}/card")
def table_card(table_id: str, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("floor.view"))]) -> Response:
    _spec(reads, table_id)
    return render(request, "_table_card.html", {"t": table_view(reads, table_id)})


def free_tables(reads: HallReads, except_table: str | None = None) -> list[TableSpec]:
    """Billed tables without a game: where a game may start or be moved to."""
    open_now = reads.floor.hall_snapshot().open
    return [t for t in reads.venue.tables if t.kind.billed and t.id not in open_now and t.id != except_table]


@router.get("/tables/{table_id}")
def table_panel(table_id: str, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("floor.view"))]) -> Response:
    _spec(reads, table_id)
    return render(
        request,
        "table.html",
        {
            "t": table_view(reads, table_id),
            "tariffs": reads.venue.hand_tariffs,
            "extras": reads.venue.extras,
            "free_tables": free_tables(reads, table_id),
            **panel_context(reads, table_id),  # out of service, light, transfer rates, presets (dashboard.web.table_page)
        },
    )


@router.post("/tables/{table_id}/start", dependencies=[Depends(verify_csrf)])
def start(
    table_id: str,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("games.run"))],
    card_uid: Text32 = "",
    tariff: Text32 = "",
    member_id: Annotated[int | None, Form(ge=1, le=MAX_ID)] = None,
    prepaid_minutes: Annotated[int | None, Form(ge=1, le=MAX_PREPAID_MIN)] = None,
) -> Response:
    _spec(hub.reads, table_id)
    back = f"/tables/{table_id}"
    try:
        hub.execute(
            StartGame(
                table=table_id,
                tariff=tariff.strip() or None,
                member_id=member_id,
                card_uid=card_uid.strip() or None,
                prepaid_minutes=prepaid_minutes,
                actor=user.username,
            )
        )
    except CardInUse as e:
        flash(
            request,
            gettext("Not started: %(member)s's club card is already on %(table)s. Stop the game there first, or take the card off it.")
            % {"member": e.member, "table": e.table_name},
            "error",
        )
        return RedirectResponse(back, status_code=303)
    except ServiceError as e:
        flash(request, translated(request, N_("Not started: %(reason)s"), reason=refusal(request, e)), "error")
        return RedirectResponse(back, status_code=303)
    with speaking(request):
        level, text = start_notice(hub.reads, table_id)  # says now when the club rate does not apply
    flash(request, text, level)
    return RedirectResponse("/", status_code=303)
