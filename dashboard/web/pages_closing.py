"""Closing time (/closing): a manager stops every game at once, after one confirmation.

The page lists the games playing now, each with what its tab owes so far (the game and what was
put on it); one button stops them all (the command StopAllGames, the same the API's
POST /api/sessions/stop-all builds). Nobody pays here: each tab stays open and leads the unpaid
list on the bills page, where it is paid when the guests pay (a tab paid while its game ran is
settled by the stop). The manager lands there afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.floor.closing import StopAllGames
from broker.hall.facade import ServiceError
from broker.hall.read_models import HallReads
from dashboard.api.deps import Hub, Reads
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import ngettext
from dashboard.web.request_text import refusal
from dashboard.web.table_page import speaking
from dashboard.web.templating import flash, render

router = APIRouter()


@dataclass(frozen=True)
class PlayingGame:
    game: int
    table: str
    started_at: datetime
    paused: bool
    tab_id: int | None
    owed_cents: int  # what its tab owes now: the game so far and what was put on it


def playing(reads: HallReads) -> list[PlayingGame]:
    """The games running or paused now, in the venue's table order, with their tabs' amounts so far."""
    games = reads.floor.hall_snapshot().open
    out = []
    for spec in reads.venue.tables:
        g = games.get(spec.id)
        if g is None:
            continue
        tab_id = reads.till.tab_of_game(g.id)
        view = reads.till.tab_payments(tab_id) if tab_id is not None else None
        owed = view.owed_cents if view is not None else reads.floor.bill_of(g.state).total_cents
        out.append(PlayingGame(g.id, spec.id, g.state.started_at, g.state.state == "paused", tab_id, owed))
    return out


@router.get("/closing")
def closing_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("games.stop_all"))]) -> Response:
    games = playing(reads)
    return render(request, "closing.html", {"games": games, "owed_cents": sum(g.owed_cents for g in games)})


@router.post("/closing", dependencies=[Depends(verify_csrf)])
def stop_all(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("games.stop_all"))]) -> Response:
    with speaking(request):
        try:
            done = hub.execute(StopAllGames(actor=user.username))
        except ServiceError as e:
            flash(request, refusal(request, e), "error")
            return RedirectResponse("/closing", status_code=303)
        n, left = len(done.games), len(done.left_open)
        text = ngettext("%(num)d game stopped.", "%(num)d games stopped.", n) % {"num": n}
        if left:
            text += " " + ngettext("%(num)d tab is left open to pay.", "%(num)d tabs are left open to pay.", left) % {"num": left}
        flash(request, text, "ok")
    return RedirectResponse("/bills", status_code=303)
