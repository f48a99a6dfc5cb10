"""The tournament's TV and the players' phones (issue 21): no login, a read-only link whose token
staff make and revoke on the tournament's page (only its hash is stored, like an API token's).

/tv/{token} is one page for both: on a 1920×1080 TV it is dark and large, to be read from 5 m
(the tables now, who is next, the latest results, the expected end, the standings at the end);
on a phone it is the same, one column, with the whole bracket round by round. It updates by
itself: its own stream (/tv/{token}/events) tells it when this tournament changed, and it
fetches /tv/{token}/board again (within a second of a result). A revoked or wrong token is a 404.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import PlainTextResponse, Response, StreamingResponse
from starlette.background import BackgroundTask

from broker.hall.read_models import HallReads
from broker.tournaments.views import MatchView, TournamentView
from dashboard.api.auth import client_address
from dashboard.api.deps import Reads
from dashboard.web.i18n import N_
from dashboard.web.live import Subscriber
from dashboard.web.pages_events import SLOTS, StreamSlot, stream_events
from dashboard.web.pages_tournaments import words
from dashboard.web.request_text import translated
from dashboard.web.templating import render

router = APIRouter(prefix="/tv")

Token = Annotated[str, Path(min_length=16, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
RECENT = 8  # the latest results on the TV


def _view(request: Request, reads: HallReads, token: str) -> TournamentView:
    v = reads.tournaments.tournament_by_token(token)
    if v is None:
        raise HTTPException(404, translated(request, N_("This link does not work (any more): ask the staff for the new one.")))
    return v


def _context(v: TournamentView, token: str) -> dict[str, Any]:
    done = sorted((m for m in v.matches if m.status == "done"), key=lambda m: m.finished_at or v.starts_at, reverse=True)
    rounds: dict[tuple[str, int], list[MatchView]] = {}
    for m in v.matches:
        rounds.setdefault((m.phase, m.round), []).append(m)
    # A band per side of the bracket: the winners' (or the groups', the knockout's), the losers', the finals.
    phases = list(dict.fromkeys("final" if phase == "reset" else phase for phase, _ in rounds))
    return {"v": v, "token": token, "recent": done[:RECENT], "rounds": rounds, "phases": phases, **words()}


@router.get("/{token}", name="tv_page")
def tv_page(token: Token, request: Request, reads: Reads) -> Response:
    v = _view(request, reads, token)
    return render(request, "tv.html", _context(v, token))


@router.get("/{token}/board")
def tv_board(token: Token, request: Request, reads: Reads) -> Response:
    v = _view(request, reads, token)
    return render(request, "_tv_board.html", _context(v, token))


class _OneTournament(Subscriber):
    """A stream that hears only its tournament's changes."""

    def __init__(self, loop: asyncio.AbstractEventLoop, tournament: int) -> None:
        super().__init__(loop)
        self.tournament = tournament

    def push(self, topic: str, data: dict[str, Any]) -> None:
        if topic == "tournament" and data.get("tournament") == self.tournament:
            super().push(topic, data)


@router.get("/{token}/events")
async def tv_events(token: Token, request: Request, reads: Reads) -> Response:
    v = await asyncio.to_thread(reads.tournaments.tournament_by_token, token)
    if v is None:
        return PlainTextResponse(translated(request, N_("This link does not work (any more): ask the staff for the new one.")), 404)
    # Every TV and phone of one tournament counts as one login: a link passed around cannot hold
    # all of the server's streams (dashboard.web.pages_events caps them per login and per address).
    login, address = f"tv:{v.id}", client_address(request)
    if not SLOTS.take(login, address):
        text = translated(request, N_("Too many live pages are open for this login or this device; close some and reload."))
        return PlainTextResponse(text, status_code=429, headers={"Retry-After": "30"})
    sub, slot = _OneTournament(asyncio.get_running_loop(), v.id), StreamSlot(SLOTS, login, address)
    return StreamingResponse(
        stream_events(reads, sub, slot),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        background=BackgroundTask(slot.release),
    )
