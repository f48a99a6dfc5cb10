"""Tournaments (issue 21): create one, enter and check in players, draw, call matches to tables,
score racks, enter and correct results, export.

Staff run the day (tournaments.run: entrants, check-in, the draw, calls, scores, results,
walkovers, the TV link); a manager creates tournaments, forces a correction that resets later
matches, and exports (tournaments.manage). Each write is the same command the pages build.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, tzinfo
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from pydantic import BaseModel, Field

from broker.accounts.staff import Staff
from broker.domain.csv_cells import excel_csv
from broker.domain.tournaments.export import CSV_HEADER, CSV_YES, ExportNames, csv_rows, cuescore_json
from broker.domain.tournaments.progress import Progress
from broker.domain.tournaments.rules import MAX_ENTRANTS, BreakRule, Discipline, Format
from broker.hall.facade import HubFacade
from broker.tournaments.calls import CallMatch, RecallMatch, ScoreRack, StartMatch
from broker.tournaments.results import RecordResult
from broker.tournaments.season import SeasonRow
from broker.tournaments.setup import (
    AddEntrant,
    CheckInEntrant,
    CreateTournament,
    DrawTournament,
    NewTvLink,
    RemoveEntrant,
    RevokeTvLink,
    StartTournamentNow,
)
from broker.tournaments.views import EntrantView, MatchView, TournamentSummary, TournamentView, english
from dashboard.api.auth import can, demand
from dashboard.api.dates import Moment
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.errors import say_in
from dashboard.api.schemas import Body, Id, TableId, text

router = APIRouter(tags=["tournaments"])

MatchPath = Annotated[str, Path(pattern=r"^[A-Z0-9-]{1,16}$", description="A match of the plan, e.g. W1-1, L2-3, GF")]
Score = Annotated[int, Field(ge=0, le=1000)]
Race = Annotated[int, Field(ge=1, le=150)]


class TournamentIn(Body):
    name: Annotated[str, text(120, 2)]
    starts_at: Annotated[Moment, Field(description="ISO 8601, e.g. 2026-12-06T14:00:00+01:00; without an offset, the venue's wall clock")]
    league_group: Literal["", "I", "II"] = ""
    discipline: Discipline = "8-ball"
    format: Format = "double"
    race_winners: Race = 5
    race_losers: Race = 4
    race_final: Race = 5
    break_rule: BreakRule = "alternate"
    grand_final_reset: bool = True
    group_size: Annotated[int, Field(ge=2, le=16)] = 4
    advance: Annotated[int, Field(ge=1, le=16)] = 2
    swiss_rounds: Annotated[int, Field(ge=1, le=15)] | None = None
    shot_clock_s: Annotated[int, Field(ge=10, le=45)] | None = None
    pairs: bool = False
    seeding: Literal["random", "seeded"] = "random"
    tables: Annotated[list[TableId], Field(default_factory=list, max_length=32)]
    fee_member_product: Id | None = None
    fee_guest_product: Id | None = None
    free_entry: bool = False
    club_share_percent: Annotated[int, Field(ge=0, le=100)] = 0
    payout_shares: Annotated[
        list[Annotated[int, Field(ge=0, le=100)]], Field(default_factory=lambda: [50, 30, 20], min_length=1, max_length=16)
    ]
    season_points: dict[Annotated[int, Field(strict=False, ge=1, le=MAX_ENTRANTS)], Annotated[int, Field(ge=0, le=1000)]] | None = Field(
        None, description='Points per place, e.g. {"1": 25, "2": 18}; a place not listed gets the nearest listed above it'
    )
    tariff: Annotated[str, text(32)] | None = None
    block_hours: Annotated[int, Field(ge=0, le=14, description="Its tables held on the booking calendar from the start (0: not)")] = 6


class EntrantIn(Body):
    member_id: Id | None = None
    name: Annotated[str, text(80, 0)] = ""
    member2_id: Id | None = None
    name2: Annotated[str, text(80, 0)] = ""
    handicap: Annotated[int, Field(ge=0, le=149)] = 0
    check_in: bool = False


class CallIn(Body):
    table: TableId


class RackIn(Body):
    side: Literal["a", "b"]
    delta: Literal[1, -1] = 1
    # A JSON array (FastAPI validates the parsed body, where an array is a list, not a tuple: strict
    # mode would refuse every value); its scores stay strict integers.
    seen: Annotated[tuple[Score, Score], Field(strict=False)] | None = Field(
        None, description="The score the tap was made on: a repeat on a changed score changes nothing"
    )


class ResultIn(Body):
    score_a: Score
    score_b: Score
    walkover: bool = False
    force: bool = False
    reason: Annotated[str, text(200, 0)] = ""


# -- what the API answers -------------------------------------------------------------------


class DrawOut(BaseModel):
    order: list[int]
    tournament: TournamentView


class MovedBookingOut(BaseModel):
    booking: int
    from_table: str
    to_table: str


class StartedNowOut(BaseModel):
    starts_at: datetime
    moved: list[MovedBookingOut] = Field(description="Bookings on its tables its block moved to free tables of their kind")
    to_call: list[int] = Field(description="Bookings on its tables no other table was free for: call the guests")
    tournament: TournamentView


class CheckInOut(BaseModel):
    entrant: int
    fee_tab_id: int | None


class MatchAnswerOut(BaseModel):
    match: MatchView | None
    reset: list[str] = Field(default_factory=list, description="A forced correction: the matches reset")


class RackOut(BaseModel):
    match: str
    score_a: int
    score_b: int


class TvLinkOut(BaseModel):
    token: str = Field(description="Shown once: only its hash is kept. The TV and the phones open /tv/{token}")
    path: str


class CuePlayerOut(BaseModel):
    playerId: int
    name: str


class CueTableOut(BaseModel):
    tableId: str
    name: str


class CueMatchOut(BaseModel):
    matchId: str
    matchno: int | None
    tournamentId: int
    round: int
    roundName: str
    matchstatus: Literal["waiting", "ready", "called", "playing", "finished"] = Field(
        description='The state the API gives the match ("done" is CueScore\'s "finished")'
    )
    playerA: CuePlayerOut | None
    playerB: CuePlayerOut | None
    scoreA: int | None
    scoreB: int | None
    raceTo: int
    walkover: bool
    winner: int | None
    table: CueTableOut | None
    starttime: datetime | None
    stoptime: datetime | None
    winnerNext: int | None
    loserNext: int | None


class CueTournamentOut(BaseModel):
    """The shape of CueScore's tournament files (broker.domain.tournaments.export says where it comes from)."""

    tournamentId: int
    name: str
    discipline: str = ""
    starttime: datetime | None = None
    status: str
    winner: CuePlayerOut | None = None
    matches: list[CueMatchOut]


@router.get("/tournaments", response_model=list[TournamentSummary], summary="Tournaments, the latest first")
def list_tournaments(reads: Reads, user: Annotated[Staff, Depends(can("tournaments.view"))]) -> list[TournamentSummary]:
    return reads.tournaments.summaries()


@router.post("/tournaments", status_code=201, response_model=TournamentView, summary="A new tournament")
def create_tournament(body: TournamentIn, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.manage"))]) -> TournamentView:
    tid = hub.execute(
        CreateTournament(
            **body.model_dump(exclude={"tables", "payout_shares"}),
            tables=tuple(body.tables),
            payout_shares=tuple(body.payout_shares),
            actor=user.username,
        )
    )
    return hub.reads.tournaments.tournament(tid)


@router.get("/tournaments/season", response_model=list[SeasonRow], summary="A Lavosliga group's season ranking")
def season(
    reads: Reads,
    user: Annotated[Staff, Depends(can("tournaments.view"))],
    group: Annotated[Literal["I", "II"], Query()] = "II",
    year: Annotated[int | None, Query(ge=2000, le=2100)] = None,
) -> list[SeasonRow]:
    return reads.tournaments.season(group, year or reads.today().year)


@router.get(
    "/tournaments/{tournament_id}", response_model=TournamentView, summary="A tournament: entrants, matches, tables, standings, payouts"
)
def get_tournament(tournament_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can("tournaments.view"))]) -> TournamentView:
    return reads.tournaments.tournament(tournament_id)


@router.post(
    "/tournaments/{tournament_id}/entrants",
    status_code=201,
    response_model=EntrantView,
    summary="Enter a player (a member or a walk-in), or a pair",
)
def add_entrant(tournament_id: IdPath, body: EntrantIn, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]) -> EntrantView:
    eid = hub.execute(body.to(AddEntrant, tournament=tournament_id, actor=user.username))
    return next(e for e in hub.reads.tournaments.tournament(tournament_id).entrants if e.id == eid)


@router.post(
    "/tournaments/{tournament_id}/entrants/{entrant_id}/check-in",
    response_model=CheckInOut,
    summary="Check a player in: the entry fee on their tab",
)
def check_in(
    tournament_id: IdPath, entrant_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]
) -> dict[str, Any]:
    tab = hub.execute(CheckInEntrant(tournament=tournament_id, entrant=entrant_id, actor=user.username))
    return {"entrant": entrant_id, "fee_tab_id": tab}


@router.delete(
    "/tournaments/{tournament_id}/entrants/{entrant_id}",
    status_code=204,
    summary="A player withdraws (after the draw: every match of theirs not played is a walkover)",
)
def remove_entrant(
    tournament_id: IdPath, entrant_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]
) -> Response:
    hub.execute(RemoveEntrant(tournament=tournament_id, entrant=entrant_id, actor=user.username))
    return Response(status_code=204)


@router.post(
    "/tournaments/{tournament_id}/draw", response_model=DrawOut, summary="Draw the checked-in players (the same bracket when drawn already)"
)
def draw(tournament_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]) -> dict[str, Any]:
    order = hub.execute(DrawTournament(tournament=tournament_id, actor=user.username))
    return {"order": list(order), "tournament": hub.reads.tournaments.tournament(tournament_id)}


@router.post(
    "/tournaments/{tournament_id}/start-now",
    response_model=StartedNowOut,
    summary="Begin before the planned start: the start and its tables' block move to now (calls begin at the start)",
)
def start_now(tournament_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]) -> dict[str, Any]:
    started = hub.execute(StartTournamentNow(tournament=tournament_id, actor=user.username))
    return {
        "starts_at": started.starts_at,
        "moved": [{"booking": b, "from_table": a, "to_table": z} for b, a, z in started.moved],
        "to_call": list(started.to_call),
        "tournament": hub.reads.tournaments.tournament(tournament_id),
    }


@router.post(
    "/tournaments/{tournament_id}/tv-link",
    status_code=201,
    response_model=TvLinkOut,
    summary="A new read-only link for the TV and the players' phones",
)
def tv_link(tournament_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]) -> dict[str, Any]:
    token = hub.execute(NewTvLink(tournament=tournament_id, actor=user.username))
    return {"token": token, "path": f"/tv/{token}"}


@router.delete("/tournaments/{tournament_id}/tv-link", status_code=204, summary="The TV link stops working")
def revoke_tv_link(tournament_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]) -> Response:
    hub.execute(RevokeTvLink(tournament=tournament_id, actor=user.username))
    return Response(status_code=204)


@router.post("/tournaments/{tournament_id}/matches/{match}/call", response_model=MatchAnswerOut, summary="Call a ready match to a table")
def call(
    tournament_id: IdPath, match: MatchPath, body: CallIn, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]
) -> dict[str, Any]:
    hub.execute(body.to(CallMatch, tournament=tournament_id, match=match, actor=user.username))
    return _match(hub, tournament_id, match)


@router.post("/tournaments/{tournament_id}/matches/{match}/start", response_model=MatchAnswerOut, summary="The players are at the table")
def start(tournament_id: IdPath, match: MatchPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]) -> dict[str, Any]:
    hub.execute(StartMatch(tournament=tournament_id, match=match, actor=user.username))
    return _match(hub, tournament_id, match)


@router.post(
    "/tournaments/{tournament_id}/matches/{match}/recall",
    response_model=MatchAnswerOut,
    summary="Take a called match off its table: it waits for a call by hand",
)
def recall(tournament_id: IdPath, match: MatchPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]) -> dict[str, Any]:
    hub.execute(RecallMatch(tournament=tournament_id, match=match, actor=user.username))
    return _match(hub, tournament_id, match)


@router.post("/tournaments/{tournament_id}/matches/{match}/rack", response_model=RackOut, summary="A rack won (or taken back) at the table")
def rack(
    tournament_id: IdPath, match: MatchPath, body: RackIn, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]
) -> dict[str, Any]:
    a, b = hub.execute(body.to(ScoreRack, tournament=tournament_id, match=match, actor=user.username))
    return {"match": match, "score_a": a, "score_b": b}


@router.post(
    "/tournaments/{tournament_id}/matches/{match}/result",
    response_model=MatchAnswerOut,
    summary="A match's result, a walkover, or a correction",
)
def result(
    tournament_id: IdPath, match: MatchPath, body: ResultIn, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.run"))]
) -> dict[str, Any]:
    if body.force:
        demand(user, "tournaments.manage")  # a forced correction resets matches already played: the manager's
    reset = hub.execute(body.to(RecordResult, tournament=tournament_id, match=match, actor=user.username))
    return {"reset": reset, **_match(hub, tournament_id, match)}


def _match(hub: HubFacade, tournament_id: int, match: str) -> dict[str, Any]:
    return {"match": hub.reads.tournaments.tournament(tournament_id).match(match)}


def export_names(v: TournamentView, round_name: Any = english) -> ExportNames:
    return ExportNames(
        entrants={e.id: e.name for e in v.entrants},
        rounds={m.id: round_name(m.label) or "" for m in v.matches},
        tables={m.id: (m.table, m.table_name or m.table) for m in v.matches if m.table},
        started={m.id: m.started_at for m in v.matches if m.started_at is not None},
        states={m.id: m.status for m in v.matches},
    )


@router.get(
    "/tournaments/{tournament_id}/export.json",
    response_model=CueTournamentOut,
    summary="The matches in the shape of CueScore's tournament files",
)
def export_json(tournament_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.manage"))]) -> dict[str, Any]:
    v, p = hub.reads.tournaments.tournament(tournament_id), hub.reads.tournaments.tournament_progress(tournament_id)
    if p is None:
        return {"tournamentId": v.id, "name": v.name, "status": "not drawn", "matches": []}
    return cuescore_json(v.id, v.name, v.discipline, v.starts_at, p, export_names(v))


Say = Callable[[str, Mapping[str, object]], str]  # a message id with its parameters, in the reader's language


@router.get("/tournaments/{tournament_id}/export.csv", summary="The matches as the Slovak-Excel CSV (';', UTF-8 with a BOM), in Slovak")
def export_csv(tournament_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(can("tournaments.manage"))]) -> Response:
    v, p = hub.reads.tournaments.tournament(tournament_id), hub.reads.tournaments.tournament_progress(tournament_id)
    return csv_response(v, tournament_csv(v, p, say_in(request, "sk"), hub.reads.venue.tz))


def tournament_csv(v: TournamentView, p: Progress | None, say: Say, tz: tzinfo) -> bytes:
    """The matches as the project's Slovak-Excel file (broker.domain.csv_cells.excel_csv, as the
    members' and the reports' files): the header and the round names in the reader's language,
    times local to the minute, a walkover as a word."""
    names = export_names(v, lambda label: say(*label) if label else "")
    yes = say(CSV_YES, {})

    def cell(value: object) -> object:
        if isinstance(value, bool):
            return yes if value else ""
        if isinstance(value, datetime):
            return value.astimezone(tz).strftime("%Y-%m-%d %H:%M")  # Excel reads it as a date in any locale
        return value

    rows = csv_rows(p, names) if p is not None else []
    return excel_csv([[say(h, {}) for h in CSV_HEADER], *([cell(x) for x in row] for row in rows)])


def csv_response(v: TournamentView, data: bytes) -> Response:
    name = f"turnaj-{v.id}-{v.starts_at:%Y-%m-%d}.csv"
    return Response(data, media_type="text/csv; charset=utf-8", headers={"Content-Disposition": f'attachment; filename="{name}"'})
