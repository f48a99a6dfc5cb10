"""What the pages, the API and the TV read about tournaments: frozen values built in a reader session.

Everything about who plays whom comes from broker.tournaments.state (the draw and the results
through the pure rules); this module only adds what a page shows beside it: names, tables, the
running score of a match at a table, the entry fees paid, the pot and its payouts, the expected end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, PlainSerializer
from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.core.ports import HallState
from broker.domain.people import membership
from broker.domain.tariffs import calendar_year
from broker.domain.till.zreport import TournamentTime
from broker.domain.tournaments.calls import callable_matches
from broker.domain.tournaments.labels import feed_label, is_played, match_numbers, next_played, round_label
from broker.domain.tournaments.pace import expected_finish
from broker.domain.tournaments.progress import MatchState, swiss_table
from broker.domain.tournaments.rules import TournamentRefused
from broker.domain.tournaments.standings import club_share, payouts, season_points, standings
from broker.storage.models import Member, Payment, Product, TabItem, Tournament, TournamentCall, TournamentEntrant
from broker.till.tournament_time import table_time
from broker.tournaments.state import Loaded, busy_entrants, calls_from, entrant_name, live_calls, load, recalled_matches

__all__ = [
    "CallView",
    "EntrantView",
    "MatchView",
    "PlaceView",
    "TournamentSummary",
    "TournamentView",
    "call_on_table",
    "summaries",
    "view_of",
]


def english(label: tuple[str, Mapping[str, object]] | None) -> str | None:
    """A label (a message id and its parameters) in English: what the API's JSON says."""
    if label is None:
        return None
    msgid, params = label
    return msgid % params if params else msgid


# A round's name or where a player comes from: a message id and its parameters, which the pages
# translate; the JSON carries it in English.
Label = Annotated[tuple[str, dict[str, object]], PlainSerializer(english, return_type=str | None)]
MatchStatus = Literal["waiting", "ready", "called", "playing", "done", "bye"]  # "bye": a match nobody plays (the seat is through at once)


@dataclass(frozen=True)
class TournamentSummary:
    id: int
    name: str
    starts_at: datetime
    league_group: str
    discipline: str
    format: str
    entrants: int
    drawn: bool
    finished: bool


@dataclass(frozen=True)
class EntrantView:
    id: int
    name: str
    member_id: int | None
    member2_id: int | None
    handicap: int
    member_fee_paid: Annotated[
        bool, Field(description="Every member of the entrant has this year's membership fee paid (the members' entry)")
    ]
    checked_in_at: datetime | None
    fee_tab_id: Annotated[int | None, Field(description="The tab of the entry fee (paid at the till)")]
    fee_total_cents: int
    fee_owed_cents: int
    seed: Annotated[int | None, Field(description="Place in the draw, 1 first")]  # None before it or when not drawn
    withdrawn_at: Annotated[datetime | None, Field(description="Withdrew after the draw: every match not played is a walkover")] = None

    @property
    def fee_paid(self) -> bool:
        return self.fee_tab_id is None or self.fee_owed_cents <= 0


@dataclass(frozen=True)
class MatchView:
    id: str
    number: Annotated[int, Field(description="What staff and players call the match")]
    label: Annotated[Label, Field(description="The round's name (English)")]
    phase: str
    round: int
    race_to: int
    a: int | None
    b: int | None
    a_name: str
    b_name: str
    a_from: Annotated[Label | None, Field(description="Where a player still unknown comes from")]
    b_from: Label | None
    status: MatchStatus
    score_a: int | None
    score_b: int | None
    walkover: bool
    winner: int | None
    table: str | None
    table_name: str | None
    called_at: datetime | None
    started_at: datetime | None
    walkover_offered: bool
    finished_at: datetime | None
    winner_next: int | None
    loser_next: int | None
    group: str | None
    recalled: Annotated[bool, Field(description="Taken off its table by the director: it waits for a call by hand")] = False


@dataclass(frozen=True)
class CallView:
    """A match on a table now, as the floor card and the table's page show it."""

    tournament_id: int
    tournament: str
    match: str
    number: int
    table: str
    table_name: str
    a: int
    b: int
    a_name: str
    b_name: str
    race_to: int
    score_a: int
    score_b: int
    called_at: datetime
    started_at: datetime | None
    walkover_offered: bool


@dataclass(frozen=True)
class PlaceView:
    first: int
    last: int
    names: tuple[str, ...]
    payout_cents: Annotated[int, Field(description="Each of them")]
    points: int


@dataclass(frozen=True)
class TournamentView:
    id: int
    name: str
    starts_at: datetime
    league_group: str
    discipline: str
    format: str
    race_winners: int
    race_losers: int
    race_final: int
    break_rule: str
    grand_final_reset: bool
    group_size: int
    advance: int
    swiss_rounds: int | None
    shot_clock_s: int | None
    pairs: bool
    seeding: str
    tables: tuple[tuple[str, str], ...]  # (id, name)
    fee_member: tuple[str, int] | None  # the entry product's name and price
    fee_guest: tuple[str, int] | None
    club_share_percent: int
    payout_shares: tuple[int, ...]
    season_points: Mapping[int, int]
    tariff: str | None
    drawn_at: datetime | None
    finished_at: datetime | None
    tv_link: bool
    entrants: tuple[EntrantView, ...]
    matches: tuple[MatchView, ...]
    on_tables: tuple[CallView, ...]
    next_up: tuple[MatchView, ...]  # ready matches waiting for a table, the next called first
    expected_end: datetime | None
    champion: str | None
    places: tuple[PlaceView, ...]
    fees_cents: int  # entry fees paid
    club_cents: int
    pot_cents: int
    table_time: TournamentTime
    groups: tuple[tuple[str, tuple[str, ...]], ...]
    swiss: tuple[tuple[str, int, int], ...]  # (name, points, Buchholz), best first
    calls_from: Annotated[
        datetime | None,
        Field(description="Its matches are called to the tables from this time on (its start); null once they are"),
    ] = None

    @property
    def drawn(self) -> bool:
        return self.drawn_at is not None

    @property
    def checked_in(self) -> int:
        return sum(1 for e in self.entrants if e.checked_in_at is not None)

    def match(self, match_id: str) -> MatchView | None:
        return next((m for m in self.matches if m.id == match_id), None)


def summaries(db: Db, limit: int = 200) -> list[TournamentSummary]:
    """Tournaments, the latest first."""
    counts = dict(
        db.execute(
            select(TournamentEntrant.tournament_id, func.count())
            .where(TournamentEntrant.removed_at.is_(None))
            .group_by(TournamentEntrant.tournament_id)
        ).all()
    )
    return [
        TournamentSummary(
            t.id,
            t.name,
            t.starts_at,
            t.league_group,
            t.discipline,
            t.format,
            counts.get(t.id, 0),
            t.draw_order is not None,
            t.finished_at is not None,
        )
        for t in db.scalars(select(Tournament).order_by(Tournament.starts_at.desc(), Tournament.id.desc()).limit(limit))
    ]


def _match_views(
    hall: HallState, loaded: Loaded, calls: list[TournamentCall], last_calls: Mapping[str, TournamentCall], held: set[str]
) -> list[MatchView]:
    p = loaded.progress
    assert p is not None
    names = loaded.names
    numbers = match_numbers(p.matches)
    specs = [m.spec for m in p.matches]
    by_id = p.by_id
    nxt = next_played(p.matches)
    live = {c.match: c for c in calls}
    # A round's name depends on its phase, round and group only: named once per round, not per match.
    labels: dict[tuple[str, int, str | None], tuple[str, dict[str, object]]] = {}
    out = []
    for m in p.matches:
        if not is_played(m) or m.status == "void":
            continue
        call = live.get(m.id)
        done = m.status == "done"
        last = last_calls.get(m.id)
        table = call.table_id if call else (last.table_id if (done and last) else None)
        sa: int | None
        sb: int | None
        if done and m.result is not None and isinstance(m.a, int):
            sa, sb = m.result.scores_for(m.a)
        elif call is not None:
            sa, sb = call.score_a, call.score_b
        else:
            sa = sb = None
        status: MatchStatus = "done" if done else ("playing" if call and call.started_at else ("called" if call else m.status))
        win_next, lose_next = nxt.get(m.id, (None, None))
        a = m.a if isinstance(m.a, int) else None
        b = m.b if isinstance(m.b, int) else None
        key = (m.spec.phase, m.spec.round, m.spec.group)
        if key not in labels:
            labels[key] = round_label(m.spec, specs)
        out.append(
            MatchView(
                id=m.id,
                number=numbers.get(m.id, 0),
                label=labels[key],
                phase=m.spec.phase,
                round=m.spec.round,
                race_to=m.spec.race_to,
                a=a,
                b=b,
                a_name=names.get(a, "") if a is not None else "",
                b_name=names.get(b, "") if b is not None else "",
                a_from=None if a is not None else feed_label(m.spec.a, by_id, numbers, names),
                b_from=None if b is not None else feed_label(m.spec.b, by_id, numbers, names),
                status=status,
                score_a=sa,
                score_b=sb,
                walkover=bool(m.result and m.result.walkover),
                winner=m.winner if isinstance(m.winner, int) else None,
                table=table,
                table_name=hall.tables[table].name if table in hall.tables else table,
                called_at=call.called_at if call else (last.called_at if (done and last) else None),
                started_at=call.started_at if call else (last.started_at if (done and last) else None),
                walkover_offered=bool(call and call.walkover_offered_at),
                finished_at=m.result.finished_at if m.result else None,
                winner_next=numbers.get(win_next) if win_next else None,
                loser_next=numbers.get(lose_next) if lose_next else None,
                group=m.spec.group,
                recalled=m.id in held and call is None and not done,
            )
        )
    return out


def _fees(db: Db, hall: HallState, loaded: Loaded, *, money: bool = True) -> tuple[list[EntrantView], int]:
    """The entrants with their fees: what each fee tab holds and what was paid on it (two queries
    for all of them: a fee tab holds only its fee items, made at check-in)."""
    year = calendar_year(hall.clock(), hall.venue)
    seeds = {e: n for n, e in enumerate(loaded.plan.draw, start=1)} if loaded.plan else {}
    tabs = [e.fee_tab_id for e in loaded.entrants if e.fee_tab_id is not None] if money else []
    totals: dict[int, int] = {}
    paid: dict[int, int] = {}
    if tabs:
        totals = dict(
            db.execute(
                select(TabItem.tab_id, func.sum(TabItem.quantity * TabItem.unit_cents))
                .where(TabItem.tab_id.in_(tabs), TabItem.voided_at.is_(None))
                .group_by(TabItem.tab_id)
            ).all()
        )
        paid = dict(
            db.execute(
                select(Payment.tab_id, func.sum(Payment.amount_cents)).where(Payment.tab_id.in_(tabs)).group_by(Payment.tab_id)
            ).all()
        )
    out = []
    for e in loaded.entrants:
        tab = e.fee_tab_id
        total = int(totals.get(tab, 0) or 0) if tab is not None else 0
        owed = total - int(paid.get(tab, 0) or 0) if tab is not None else 0
        members = [db.get(Member, m) for m in (e.member_id, e.member2_id) if m is not None] if money else []
        fee_ok = bool(members) and all(
            m is not None and membership.eligibility(m.active, [f.year for f in m.fees], year) == "ok" for m in members
        )
        out.append(
            EntrantView(
                e.id,
                entrant_name(e),
                e.member_id,
                e.member2_id,
                e.handicap,
                fee_ok,
                e.checked_in_at,
                tab,
                total,
                owed,
                seeds.get(e.id),
                e.withdrawn_at,
            )
        )
    return out, sum(int(v or 0) for v in paid.values())


def _product(db: Db, product_id: int | None) -> tuple[str, int] | None:
    p = db.get(Product, product_id) if product_id is not None else None
    return (p.name, p.price_cents) if p is not None else None


def view_of(db: Db, hall: HallState, tournament_id: int, *, public: bool = False) -> TournamentView:
    """Everything a page shows about one tournament (TournamentMissing if there is none).
    `public` (the TV and the players' phones): no money, neither the fees nor the table time."""
    loaded = load(db, tournament_id)
    t = loaded.t
    now = hall.clock()
    options: dict[str, Any] = t.options or {}
    entrants, fees = _fees(db, hall, loaded, money=not public)
    club = club_share(fees, t.club_share_percent)
    shares = tuple(int(s) for s in options.get("payout_shares", []))
    points_table = {int(k): int(v) for k, v in options.get("season_points", {}).items()}
    every_call = live_calls(db)
    calls = [c for c in every_call if c.tournament_id == t.id]
    last_calls = {
        c.match: c for c in db.scalars(select(TournamentCall).where(TournamentCall.tournament_id == t.id).order_by(TournamentCall.id))
    }
    matches: list[MatchView] = []
    on_tables: list[CallView] = []
    next_up: list[MatchView] = []
    places: list[PlaceView] = []
    expected = None
    champion = None
    swiss: list[tuple[str, int, int]] = []
    if loaded.progress is not None:
        p = loaded.progress
        names = loaded.names
        held = recalled_matches(db, t.id)
        matches = _match_views(hall, loaded, calls, last_calls, held)
        by_id = {m.id: m for m in matches}
        on_tables = [_call_view(hall, t, c, by_id[c.match], names) for c in calls if c.match in by_id]
        waiting = callable_matches(p, {c.match for c in calls}, busy_entrants(db, t.id, every_call))
        waiting.sort(key=lambda m: m.id in held)  # the director's recalls last: they wait for a call by hand
        next_up = [by_id[m.id] for m in waiting if m.id in by_id]
        started = {c.match: c.started_at for c in last_calls.values() if c.started_at is not None}
        # Laid from its start when that is still to come (nothing is called before it).
        expected = expected_finish(p, max(now, t.starts_at), max(1, len(options.get("tables", []))), started)
        champion = names.get(p.champion) if p.champion is not None else None
        if p.finished:
            places = _places(p, names, fees - club, shares, points_table)
        if t.format == "swiss":
            swiss = [(names.get(e, ""), pts, bh) for e, pts, bh in swiss_table(p)]
    return TournamentView(
        id=t.id,
        name=t.name,
        starts_at=t.starts_at,
        league_group=t.league_group,
        discipline=t.discipline,
        format=t.format,
        race_winners=t.race_winners,
        race_losers=t.race_losers,
        race_final=t.race_final,
        break_rule=t.break_rule,
        grand_final_reset=t.grand_final_reset,
        group_size=t.group_size,
        advance=t.advance,
        swiss_rounds=t.swiss_rounds,
        shot_clock_s=t.shot_clock_s,
        pairs=t.pairs,
        seeding=t.seeding,
        tables=tuple((x, hall.tables[x].name) for x in options.get("tables", []) if x in hall.tables),
        fee_member=_product(db, t.fee_member_product_id),
        fee_guest=_product(db, t.fee_guest_product_id),
        club_share_percent=t.club_share_percent,
        payout_shares=shares,
        season_points=points_table,
        tariff=t.tariff,
        drawn_at=t.drawn_at,
        finished_at=t.finished_at,
        tv_link=t.tv_token_hash is not None,
        entrants=tuple(entrants),
        matches=tuple(matches),
        on_tables=tuple(on_tables),
        next_up=tuple(next_up),
        expected_end=expected,
        champion=champion,
        places=tuple(places),
        fees_cents=fees,
        club_cents=club,
        pot_cents=fees - club,
        table_time=TournamentTime(t.id, t.name, 0, 0, 0, 0) if public else table_time(db, hall, t, now),
        groups=tuple(
            (g, tuple(loaded.names.get(e, "") for e in members))
            for g, members in (loaded.progress.groups if loaded.progress else {}).items()
        ),
        swiss=tuple(swiss),
        calls_from=None if t.finished_at is not None else calls_from(t, now),
    )


def _places(p: Any, names: Mapping[int, str], pot: int, shares: tuple[int, ...], points_table: Mapping[int, int]) -> list[PlaceView]:
    final = standings(p)
    try:
        paid = payouts(final, pot, shares) if pot > 0 else {}
    except TournamentRefused:
        paid = {}
    points = season_points(final, points_table)
    return [
        PlaceView(
            pl.first,
            pl.last,
            tuple(names.get(e, "") for e in pl.entrants),
            paid.get(pl.entrants[0], 0),
            points.get(pl.entrants[0], 0),
        )
        for pl in final
    ]


def _call_view(hall: HallState, t: Tournament, c: TournamentCall, m: MatchView, names: Mapping[int, str]) -> CallView:
    return CallView(
        t.id,
        t.name,
        c.match,
        m.number,
        c.table_id,
        hall.tables[c.table_id].name if c.table_id in hall.tables else c.table_id,
        c.a,
        c.b,
        names.get(c.a, ""),
        names.get(c.b, ""),
        m.race_to,
        c.score_a,
        c.score_b,
        c.called_at,
        c.started_at,
        c.walkover_offered_at is not None,
    )


def call_on_table(db: Db, hall: HallState, table: str) -> CallView | None:
    """The match on `table` now, if any (the floor card and the table's page show it)."""
    c = db.scalar(select(TournamentCall).where(TournamentCall.table_id == table, TournamentCall.ended_at.is_(None)))
    if c is None:
        return None
    loaded = load(db, c.tournament_id)
    if loaded.progress is None:
        return None
    m = loaded.progress.by_id.get(c.match)
    if m is None:
        return None
    number = match_numbers(loaded.progress.matches).get(c.match, 0)
    stub = _stub(m, number)
    return _call_view(hall, loaded.t, c, stub, loaded.names)


def _stub(m: MatchState, number: int) -> MatchView:
    return MatchView(
        m.id, number, ("", {}), m.spec.phase, m.spec.round, m.spec.race_to, None, None, "", "", None, None, "waiting", None, None, False,
        None, None, None, None, None, False, None, None, None, m.spec.group,
    )  # fmt: skip
