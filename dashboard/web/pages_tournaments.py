"""The tournaments' pages (issue 21, the Lavosliga): the list and a new tournament (the manager's),
one tournament's day for staff (entrants and check-in, the draw, the tables, results, walkovers,
corrections, the standings), the score of a match at its table or on a phone (a tap a rack), the
season's ranking, a printable A4 bracket (staff print it: the director on a Sunday is usually
staff) and the CSV (the manager's). The TV and the players' phones: pages_tournament_tv.

The director's tablet (issue 29, item 33): after the draw the tables come first; a form on the
page comes back to where it was (static/tournament.js); on a phone the lists stack, so nothing
sits past the right edge.

Every action is the command the API builds (dashboard/api/tournaments.py); each answers with a
redirect and a message, a refusal says why in the staff's language.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from broker.accounts.staff import Staff
from broker.domain.dates import NOT_A_TIME, DateRefused
from broker.domain.tournaments.rules import BREAK_RULES, DISCIPLINES, FORMATS
from broker.hall.facade import HubFacade, ServiceError
from broker.hall.read_models import HallReads
from broker.tournaments.calls import CallMatch, RecallMatch, ScoreRack, StartMatch
from broker.tournaments.results import RecordResult
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
from broker.tournaments.views import MatchView, TournamentView
from dashboard.access import allows
from dashboard.api.deps import MAX_ID, Hub, IdPath, Reads
from dashboard.api.tournaments import csv_response, tournament_csv
from dashboard.web import i18n
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.pages_bookings import call_about
from dashboard.web.request_text import refusal, translated
from dashboard.web.table_page import do_then_back, in_visitor_lang
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/tournaments")
NAV = [NavLink("/tournaments", N_("Tournaments"), role="staff", order=40)]

MatchPath = Annotated[str, Path(pattern=r"^[A-Z0-9-]{1,16}$")]
Short = Annotated[str, Form(max_length=40)]
Text = Annotated[str, Form(max_length=200)]

FORMAT_WORDS = {
    "single": N_("Single elimination"),
    "double": N_("Double elimination"),
    "groups": N_("Round-robin groups, then a knockout"),
    "swiss": N_("Swiss"),
}
DISCIPLINE_WORDS = {
    "8-ball": N_("8-ball"),
    "9-ball": N_("9-ball"),
    "10-ball": N_("10-ball"),
    "14-1": N_("14/1 straight pool"),
    "carom": N_("Carom"),
}
BREAK_WORDS = {"alternate": N_("Alternate breaks"), "winner": N_("Winner breaks")}
STATUS_WORDS = {
    "waiting": N_("waiting for its players"),
    "ready": N_("ready, waiting for a table"),
    "called": N_("called to the table"),
    "playing": N_("playing"),
    "done": N_("finished"),
}
GROUP_WORDS = {"": N_("another event"), "I": N_("Group I (public)"), "II": N_("Group II (league players)")}


def said(label: tuple[str, dict[str, object]] | None) -> str:
    """A message id with its parameters (a round's name, where a player comes from), translated."""
    if not label or not label[0]:
        return ""
    msgid, params = label
    text = gettext(msgid)
    return text % params if params else text


def words() -> dict[str, Any]:
    return {
        "said": said,
        "format_words": FORMAT_WORDS,
        "discipline_words": DISCIPLINE_WORDS,
        "break_words": BREAK_WORDS,
        "status_words": STATUS_WORDS,
        "group_words": GROUP_WORDS,
    }


def _back(tid: int, anchor: str = "") -> str:
    return f"/tournaments/{tid}{anchor}"


def _next(path: str, fallback: str) -> str:
    """Back to where the tap came from: the tournament, a match's score page or a table's page."""
    ok = path.startswith(("/tournaments/", "/tables/")) and "//" not in path and "\\" not in path and len(path) < 120
    return path if ok else fallback


def _int(text: str, low: int, high: int) -> int | None:
    text = text.strip()
    if not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if low <= value <= high else None


# -- the list and a new tournament ---------------------------------------------------------------


@router.get("")
def tournaments_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("tournaments.view"))]) -> Response:
    return _list(request, reads, user)


def _list(
    request: Request, reads: HallReads, user: Staff, status: int = 200, error: str | None = None, form: dict[str, str] | None = None
) -> Response:
    venue = reads.venue
    start = reads.clock().astimezone(venue.tz).replace(hour=14, minute=0, second=0, microsecond=0)
    return render(
        request,
        "tournaments.html",
        {
            "tournaments": reads.tournaments.summaries(),
            "may_create": allows(user.role, "tournaments.manage"),
            "formats": FORMATS,
            "disciplines": DISCIPLINES,
            "break_rules": BREAK_RULES,
            "billed": [t for t in venue.tables if t.kind.billed],
            "tariffs": venue.tariffs,
            "default_start": start.strftime("%Y-%m-%dT%H:%M"),
            "form": form or {},
            "form_error": error,
            **words(),
        },
        status=status,
    )


@router.post("", dependencies=[Depends(verify_csrf)])
async def create(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.manage"))]) -> Response:
    data = await request.form()
    form = {k: str(v)[:200] for k, v in data.items() if isinstance(v, str)}
    tables = tuple(str(v)[:32] for v in data.getlist("tables") if isinstance(v, str))[:40]
    return await run_in_threadpool(_create_sync, request, hub, user, form, tables)


def _create_sync(request: Request, hub: HubFacade, user: Staff, form: dict[str, str], tables: tuple[str, ...]) -> Response:
    reads = hub.reads

    def bad(message: str, **values: Any) -> Response:
        return _list(request, reads, user, 400, translated(request, message, **values), form)

    try:
        starts_at = reads.dates().moment(form.get("starts_at", ""))  # the hall's parser: its range and DST nights
    except DateRefused as e:
        if e.msgid == NOT_A_TIME:  # the form's date and time picker was left empty (or typed over)
            return bad(N_("Give the tournament's date and start time."))
        return _list(request, reads, user, 400, refusal(request, e), form)
    numbers: dict[str, int | None] = {}
    for field, low, high in (
        ("race_winners", 1, 150),
        ("race_losers", 1, 150),
        ("race_final", 1, 150),
        ("group_size", 2, 16),
        ("advance", 1, 16),
        ("club_share_percent", 0, 100),
        ("block_hours", 0, 14),
    ):
        numbers[field] = _int(form.get(field) or ("6" if field == "block_hours" else ""), low, high)
        if numbers[field] is None:
            return bad(N_("A number in a field is out of its range; look at the field %(field)s."), field=field)
    optional: dict[str, int | None] = {}
    for field, low, high in (("swiss_rounds", 1, 15), ("shot_clock_s", 10, 45)):
        text = form.get(field, "").strip()
        optional[field] = _int(text, low, high) if text else None
        if text and optional[field] is None:
            return bad(N_("A number in a field is out of its range; look at the field %(field)s."), field=field)
    shares = [_int(x, 0, 100) for x in form.get("payout_shares", "").replace(",", " ").split()]
    if not shares or any(s is None for s in shares):
        return bad(N_("The payout shares must be positive numbers for the first places."))
    points: dict[int, int] = {}
    for pair in form.get("season_points", "").replace(",", " ").split():
        place, _, pts = pair.partition(":")
        p, v = _int(place, 1, 128), _int(pts, 0, 1000)
        if p is None or v is None:
            return bad(N_("Season points are written as place:points, e.g. 1:25 2:18 3:15."))
        points[p] = v
    cmd = CreateTournament(
        name=form.get("name", ""),
        starts_at=starts_at,
        league_group=form.get("league_group", ""),
        discipline=form.get("discipline", ""),
        format=form.get("format", ""),
        race_winners=numbers["race_winners"] or 0,
        race_losers=numbers["race_losers"] or 0,
        race_final=numbers["race_final"] or 0,
        break_rule=form.get("break_rule", ""),
        grand_final_reset=form.get("grand_final_reset") == "1",
        group_size=numbers["group_size"] or 0,
        advance=numbers["advance"] or 0,
        swiss_rounds=optional["swiss_rounds"],
        shot_clock_s=optional["shot_clock_s"],
        pairs=form.get("pairs") == "1",
        seeding=form.get("seeding", "random"),
        tables=tables,
        free_entry=form.get("free_entry") == "1",
        club_share_percent=numbers["club_share_percent"] or 0,
        payout_shares=tuple(s for s in shares if s is not None),
        season_points=points or None,
        tariff=form.get("tariff") or None,
        block_hours=numbers["block_hours"] or 0,
        actor=user.username,
    )
    try:
        tid = hub.execute(cmd)
    except ServiceError as e:
        return _list(request, reads, user, 409, refusal(request, e), form)
    flash(request, translated(request, N_("Tournament created: %(name)s"), name=" ".join(cmd.name.split())), "ok")
    return RedirectResponse(_back(tid), status_code=303)


@router.get("/season")
def season_page(
    request: Request,
    reads: Reads,
    user: Annotated[Staff, Depends(page_can("tournaments.view"))],
    group: Annotated[str, Query(pattern="^(I|II)$")] = "II",
    year: Annotated[int | None, Query(ge=2000, le=2100)] = None,
) -> Response:
    year = year or reads.today().year
    return render(
        request, "tournament_season.html", {"rows": reads.tournaments.season(group, year), "group": group, "year": year, **words()}
    )


# -- one tournament ----------------------------------------------------------------------------------


def _context(reads: HallReads, user: Staff, v: TournamentView) -> dict[str, Any]:
    phases: dict[str, list[MatchView]] = {}
    for m in v.matches:
        phases.setdefault(m.phase, []).append(m)
    free_tables = [(tid, name) for tid, name in v.tables if tid not in {c.table for c in v.on_tables}]
    return {
        "v": v,
        "phases": phases,
        "may_manage": allows(user.role, "tournaments.manage"),
        "may_run": allows(user.role, "tournaments.run"),
        "free_tables": free_tables or list(v.tables),
        "here": f"/tournaments/{v.id}",
        **words(),
    }


@router.get("/{tournament_id}")
def tournament_page(
    tournament_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("tournaments.view"))]
) -> Response:
    return render(request, "tournament.html", _context(reads, user, reads.tournaments.tournament(tournament_id)))


@router.get("/{tournament_id}/board")
def board(tournament_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("tournaments.view"))]) -> Response:
    """The live part of the tournament's page (re-fetched on every change of a tournament)."""
    return render(request, "_tournament_board.html", _context(reads, user, reads.tournaments.tournament(tournament_id)))


@router.get("/{tournament_id}/print")
def print_bracket(
    tournament_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("tournaments.run"))]
) -> Response:
    return render(request, "tournament_print.html", _context(reads, user, reads.tournaments.tournament(tournament_id)))


@router.get("/{tournament_id}/export.csv")
def export_csv(
    tournament_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("tournaments.manage"))]
) -> Response:
    """The matches as the project's Slovak-Excel file, in the visitor's language."""
    v, p = reads.tournaments.tournament(tournament_id), reads.tournaments.tournament_progress(tournament_id)
    token = i18n.use_lang(i18n.lang_of(request))
    try:
        data = tournament_csv(v, p, lambda msgid, params: said((msgid, dict(params))), reads.venue.tz)
    finally:
        i18n.reset_lang(token)
    return csv_response(v, data)


@router.post("/{tournament_id}/entrants", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def add_entrant(
    tournament_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tournaments.run"))],
    member_id: Annotated[str, Form(max_length=12)] = "",
    name: Short = "",
    member2_id: Annotated[str, Form(max_length=12)] = "",
    name2: Short = "",
    handicap: Annotated[str, Form(max_length=4)] = "",
    check_in: Annotated[str, Form(max_length=2)] = "",
) -> Response:
    first, second = _int(member_id, 1, MAX_ID) if member_id else None, _int(member2_id, 1, MAX_ID) if member2_id else None
    start = _int(handicap, 0, 149) if handicap.strip() else 0

    def run() -> str:
        if start is None:
            raise ServiceError(N_("A handicap start score must be below the race (to %(race)d)."), race=150)
        hub.execute(
            AddEntrant(
                tournament=tournament_id,
                member_id=first,
                name=name if first is None else "",
                member2_id=second,
                name2=name2 if second is None else "",
                handicap=start,
                check_in=check_in == "1",
                actor=user.username,
            )
        )
        return gettext("Player entered.")

    return do_then_back(request, _back(tournament_id, "#entrants"), run)


@router.post("/{tournament_id}/entrants/{entrant_id}/check-in", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def check_in(
    tournament_id: IdPath, entrant_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.run"))]
) -> Response:
    def run() -> str:
        tab = hub.execute(CheckInEntrant(tournament=tournament_id, entrant=entrant_id, actor=user.username))
        return gettext("Checked in; the entry fee is on their tab.") if tab else gettext("Checked in.")

    return do_then_back(request, _back(tournament_id, "#entrants"), run)


@router.post("/{tournament_id}/entrants/{entrant_id}/remove", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def remove_entrant(
    tournament_id: IdPath, entrant_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.run"))]
) -> Response:
    def run() -> str:
        drawn = hub.reads.tournaments.tournament(tournament_id).drawn
        hub.execute(RemoveEntrant(tournament=tournament_id, entrant=entrant_id, actor=user.username))
        return gettext("Withdrawn: every match of theirs not played is a walkover.") if drawn else gettext("The player withdrew.")

    return do_then_back(request, _back(tournament_id, "#entrants"), run)


@router.post("/{tournament_id}/draw", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def draw(tournament_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.run"))]) -> Response:
    def run() -> str:
        order = hub.execute(DrawTournament(tournament=tournament_id, actor=user.username))
        begins = hub.reads.tournaments.tournament(tournament_id).calls_from
        if begins is not None:  # drawn before the start: the bracket waits (the page says until when)
            return gettext("Drawn: %(n)d players. The matches are called to the tables from the start, %(time)s.") % {
                "n": len(order),
                "time": i18n.when(begins, hub.reads.venue.tz),
            }
        return gettext("Drawn: %(n)d players. The matches are being called to the tables.") % {"n": len(order)}

    return do_then_back(request, _back(tournament_id), run)


@router.post("/{tournament_id}/start-now", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def start_now(tournament_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.run"))]) -> Response:
    """Begin before the planned start (StartTournamentNow): whom to call about a booking its
    moved block left without a table is flashed as for any block."""
    started = None

    def run() -> str:
        nonlocal started
        started = hub.execute(StartTournamentNow(tournament=tournament_id, actor=user.username))
        return gettext("Started now: the matches are being called to the tables; %(moved)d bookings on its tables moved.") % {
            "moved": len(started.moved)
        }

    response = do_then_back(request, _back(tournament_id), run)
    if started is not None and started.to_call:
        call_about(request, hub.reads, hub.reads.bookings.to_call(started.to_call))
    return response


@router.post("/{tournament_id}/tv-link", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def new_tv_link(
    tournament_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.run"))]
) -> Response:
    try:
        token = hub.execute(NewTvLink(tournament=tournament_id, actor=user.username))
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
        return RedirectResponse(_back(tournament_id), status_code=303)
    # The token is shown once, now: only its hash is kept.
    link = str(request.url_for("tv_page", token=token))
    flash(
        request,
        gettext("The TV link (open it on the TV and give it to the players; it is shown only now): %(link)s") % {"link": link},
        "ok",
    )
    return RedirectResponse(_back(tournament_id, "#tv"), status_code=303)


@router.post("/{tournament_id}/tv-link/revoke", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def revoke_tv_link(
    tournament_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.run"))]
) -> Response:
    def run() -> str:
        hub.execute(RevokeTvLink(tournament=tournament_id, actor=user.username))
        return gettext("The TV link no longer works.")

    return do_then_back(request, _back(tournament_id, "#tv"), run)


# -- a match --------------------------------------------------------------------------------------


@router.get("/{tournament_id}/matches/{match}")
def match_page(
    tournament_id: IdPath, match: MatchPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("tournaments.run"))]
) -> Response:
    """A match's score, a tap a rack: for the table's tablet or a phone."""
    v = reads.tournaments.tournament(tournament_id)
    m = v.match(match)
    if m is None:
        raise HTTPException(404, translated(request, N_("There is no such match in this tournament.")))
    return render(request, "tournament_match.html", {**_context(reads, user, v), "m": m})


@router.post("/{tournament_id}/matches/{match}/rack", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def rack(
    tournament_id: IdPath,
    match: MatchPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tournaments.run"))],
    side: Annotated[str, Form(pattern="^[ab]$")],
    delta: Annotated[int, Form(ge=-1, le=1)] = 1,
    seen_a: Annotated[int | None, Form(ge=0, le=1000)] = None,
    seen_b: Annotated[int | None, Form(ge=0, le=1000)] = None,
    next: Text = "",
) -> Response:
    back = _next(next, f"/tournaments/{tournament_id}/matches/{match}")
    seen = (seen_a, seen_b) if seen_a is not None and seen_b is not None else None

    def run() -> str:
        a, b = hub.execute(ScoreRack(tournament=tournament_id, match=match, side=side, delta=delta or 1, seen=seen, actor=user.username))
        return f"{a} : {b}"

    return do_then_back(request, back, run)


@router.post("/{tournament_id}/matches/{match}/start", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def start(
    tournament_id: IdPath,
    match: MatchPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tournaments.run"))],
    next: Text = "",
) -> Response:
    def run() -> str:
        hub.execute(StartMatch(tournament=tournament_id, match=match, actor=user.username))
        return gettext("The match has begun.")

    return do_then_back(request, _next(next, _back(tournament_id)), run)


@router.post("/{tournament_id}/matches/{match}/call", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def call(
    tournament_id: IdPath,
    match: MatchPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tournaments.run"))],
    table: Annotated[str, Form(max_length=32)],
) -> Response:
    def run() -> str:
        hub.execute(CallMatch(tournament=tournament_id, match=match, table=table, actor=user.username))
        name = hub.reads.tables[table].name if table in hub.reads.tables else table
        return gettext("Called to %(table)s.") % {"table": name}

    return do_then_back(request, _back(tournament_id, "#on-tables"), run)


@router.post("/{tournament_id}/matches/{match}/recall", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def recall(
    tournament_id: IdPath, match: MatchPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tournaments.run"))]
) -> Response:
    def run() -> str:
        hub.execute(RecallMatch(tournament=tournament_id, match=match, actor=user.username))
        return gettext("The match is off its table; it waits until you call it to a table.")

    return do_then_back(request, _back(tournament_id, "#next-up"), run)


@router.post("/{tournament_id}/matches/{match}/result", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def result(
    tournament_id: IdPath,
    match: MatchPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tournaments.run"))],
    score_a: Short = "",
    score_b: Short = "",
    walkover: Annotated[str, Form(pattern="^(|a|b)$")] = "",
    reason: Text = "",
    force: Annotated[str, Form(max_length=2)] = "",
    next: Text = "",
) -> Response:
    back = _next(next, _back(tournament_id))
    if force == "1" and not allows(user.role, "tournaments.manage"):
        raise HTTPException(403, translated(request, N_("Only a manager can force a correction.")))

    def run() -> str:
        a: int | None
        b: int | None
        if walkover:
            m = hub.reads.tournaments.tournament(tournament_id).match(match)
            race = m.race_to if m else 0
            a, b = (race, 0) if walkover == "a" else (0, race)
        else:
            a, b = _int(score_a, 0, 1000), _int(score_b, 0, 1000)
            if a is None or b is None:
                raise ServiceError(N_("A score is a whole number."))
        reset = hub.execute(
            RecordResult(
                tournament=tournament_id,
                match=match,
                score_a=a,
                score_b=b,
                walkover=bool(walkover),
                force=force == "1",
                reason=reason,
                actor=user.username,
            )
        )
        if reset:
            return gettext("Result saved; matches played again: %(n)d.") % {"n": len(reset)}
        return gettext("Result saved.")

    return do_then_back(request, back, run)
