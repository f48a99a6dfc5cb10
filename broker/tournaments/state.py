"""A tournament as its rules see it, read from its rows: the rules, the drawn plan, the live results
and so the state of every match (broker.domain.tournaments.progress). Any session, any thread:
it only reads. The bracket is never stored; this is where it is worked out from what is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.domain.refusals import N_
from broker.domain.tournaments.progress import Plan, Progress, Result, progress
from broker.domain.tournaments.rules import BreakRule, Discipline, Format, Races, Rules, TournamentRefused
from broker.storage.models import Tournament, TournamentCall, TournamentEntrant, TournamentResult

__all__ = [
    "Loaded",
    "TournamentMissing",
    "busy_entrants",
    "calls_from",
    "entrants_of",
    "live_calls",
    "load",
    "recalled_matches",
    "results_of",
    "rules_of",
]

RECALLED = "recall"  # a call's end_reason when the director took the match off its table (RecallMatch)


class TournamentMissing(TournamentRefused):
    """No such tournament, entrant or match (the hub's NotFound)."""


def calls_from(t: Tournament, now: datetime) -> datetime | None:
    """When the hub begins calling the tournament's matches to its tables (issue 29): at its start,
    where its tables' block on the booking calendar begins, never before (a draw made earlier
    stores the bracket and waits; StartTournamentNow moves the start). None once that has come."""
    return t.starts_at if t.starts_at > now else None


def rules_of(t: Tournament, entrants: Sequence[TournamentEntrant] = ()) -> Rules:
    """The tournament's rules from its row (handicaps from its entrants)."""
    return Rules(
        format=cast(Format, t.format),  # the row's text: checked by Rules itself
        races=Races(t.race_winners, t.race_losers, t.race_final),
        discipline=cast(Discipline, t.discipline),
        break_rule=cast(BreakRule, t.break_rule),
        grand_final_reset=t.grand_final_reset,
        group_size=t.group_size,
        advance=t.advance,
        swiss_rounds=t.swiss_rounds,
        handicap={e.id: e.handicap for e in entrants if e.handicap},
    )


def entrants_of(db: Db, tournament_id: int) -> list[TournamentEntrant]:
    """Its entrants (those who withdrew before the draw left out; those withdrawn after it are in
    the bracket still), in the order they were added."""
    return list(
        db.scalars(
            select(TournamentEntrant)
            .where(TournamentEntrant.tournament_id == tournament_id, TournamentEntrant.removed_at.is_(None))
            .order_by(TournamentEntrant.id)
        )
    )


def results_of(db: Db, tournament_id: int) -> dict[str, Result]:
    """The live result of each match (voided ones left out), as the rules read them."""
    r = TournamentResult
    rows = db.execute(  # plain rows, not ORM objects: read at every result, for every page
        select(r.match, r.a, r.b, r.score_a, r.score_b, r.finished_at, r.walkover).where(
            r.tournament_id == tournament_id, r.voided_at.is_(None)
        )
    )
    return {row.match: Result(row.match, row.a, row.b, row.score_a, row.score_b, row.finished_at, row.walkover) for row in rows}


def live_calls(db: Db, tournament_id: int | None = None) -> list[TournamentCall]:
    """Calls not ended yet (a match on a table), of one tournament or of all."""
    q = select(TournamentCall).where(TournamentCall.ended_at.is_(None))
    if tournament_id is not None:
        q = q.where(TournamentCall.tournament_id == tournament_id)
    return list(db.scalars(q.order_by(TournamentCall.id)))


@dataclass(frozen=True)
class Loaded:
    """A tournament's row, its entrants, and (once drawn) its plan, results and state."""

    t: Tournament
    entrants: list[TournamentEntrant]
    plan: Plan | None
    results: dict[str, Result]
    progress: Progress | None

    @property
    def names(self) -> dict[int, str]:
        return {e.id: entrant_name(e) for e in self.entrants}


def entrant_name(e: TournamentEntrant) -> str:
    """A player's name, a pair's two."""
    return f"{e.name} / {e.name2}" if e.name2 else e.name


def load(db: Db, tournament_id: int, *, for_update: bool = False) -> Loaded:
    """Everything the rules need about one tournament (TournamentMissing if there is none).
    `for_update` locks its row (PostgreSQL): two hubs' writers never decide on it at once."""
    q = select(Tournament).where(Tournament.id == tournament_id)
    t = db.scalar(q.with_for_update() if for_update else q)
    if t is None:
        raise TournamentMissing(N_("There is no such tournament."))
    entrants = entrants_of(db, t.id)
    if t.draw_order is None:
        return Loaded(t, entrants, None, {}, None)
    withdrawn = {e.id: e.withdrawn_at for e in entrants if e.withdrawn_at is not None}
    plan = Plan(rules_of(t, entrants), tuple(t.draw_order["order"]), t.starts_at, withdrawn)
    results = results_of(db, t.id)
    return Loaded(t, entrants, plan, results, progress(plan, results))


def person(e: TournamentEntrant) -> set[tuple[str, object]]:
    """Who an entrant is, beyond this tournament: the members and the names of its players (a
    walk-in is known by name only; a name is entered once per tournament, members' too)."""
    keys: set[tuple[str, object]] = {("member", m) for m in (e.member_id, e.member2_id) if m is not None}
    keys |= {("name", n.casefold()) for n in (e.name, e.name2) if n}
    return keys


def busy_entrants(db: Db, tournament_id: int, calls: Sequence[TournamentCall]) -> set[int]:
    """This tournament's entrants who are at a table now (`calls`: every live call): in one of its
    own matches, or the same person (by member or by name) in another tournament's running at the
    same time. Nobody is called to two tables at once (the README's rule), across tournaments."""
    busy = {p for c in calls if c.tournament_id == tournament_id for p in (c.a, c.b)}
    elsewhere = {p for c in calls if c.tournament_id != tournament_id for p in (c.a, c.b)}
    if not elsewhere:
        return busy
    away: set[tuple[str, object]] = set()
    for e in db.scalars(select(TournamentEntrant).where(TournamentEntrant.id.in_(elsewhere))):
        away |= person(e)
    return busy | {e.id for e in entrants_of(db, tournament_id) if person(e) & away}


def recalled_matches(db: Db, tournament_id: int) -> set[str]:
    """The matches the director took off their table (RecallMatch) and has not called again: they
    wait for a call by hand, the hub does not call them by itself."""
    last: dict[str, str | None] = {}
    q = select(TournamentCall.match, TournamentCall.end_reason).where(TournamentCall.tournament_id == tournament_id)
    for match, reason in db.execute(q.order_by(TournamentCall.id)):
        last[match] = reason
    return {m for m, reason in last.items() if reason == RECALLED}
