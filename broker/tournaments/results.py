"""A match's result: entered once it is played (or confirmed as a walkover), corrected when it was
wrong. Who plays the later matches follows by itself (broker.tournaments.state works it out
from the results), so a correction moves winner and loser through every later match.

A correction that would change the players of a later match already begun or played is refused
(409) with those matches named; a manager may force it, and then their results are voided and
their calls ended (each audited): they are played again by the right players. A result is never
deleted: a correction voids the old row (who, when, why) and a new row replaces it. A result
entered over another one without a reason (two directors at once) is refused with the one that is
there, who entered it and when.

A player who withdraws after the draw (WithdrawEntrant) loses every match of theirs not played yet
by walkover: those ready now at once (their match on a table ends, the table gets the next one),
the later ones as each becomes ready (broker.domain.tournaments.progress).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.errors import ServiceError
from broker.core.events import SessionChanged
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.refusals import N_
from broker.domain.tournaments.labels import match_numbers
from broker.domain.tournaments.progress import Progress, Result, affected_by, check_result, progress
from broker.domain.tournaments.rules import TournamentRefused
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import TournamentCall, TournamentResult
from broker.tournaments.calls import TournamentCalls
from broker.tournaments.events import TournamentChanged
from broker.tournaments.state import Loaded, TournamentMissing, live_calls, load

REASON_MIN, REASON_MAX = 3, 200


@command
class RecordResult(Command[list[str]]):
    """A match's result (scores in the order its players are shown), or a walkover (the side that
    came gets the race); a second one for the same match is a correction, with a reason. `force`
    (a manager's) resets the later matches it changes; answers the matches reset."""

    tournament: int
    match: str
    score_a: int
    score_b: int
    walkover: bool = False
    force: bool = False
    reason: str = ""


@command
class WithdrawEntrant(Command[list[str]]):
    """A player leaves a drawn tournament: every match of theirs not played yet is a walkover for the
    other side, those ready now at once (a match of theirs on a table ends) and the later ones as
    each becomes ready. Answers the matches decided now."""

    tournament: int
    entrant: int


class CorrectionRefused(ServiceError):
    """A correction that would change later matches already begun or played (names them)."""

    def __init__(self, numbers: list[int], matches: list[str]) -> None:
        self.matches = matches
        super().__init__(
            N_(
                "This correction changes who played matches already begun or played: no. %(matches)s. "
                "A manager can force it; those matches are then played again."
            ),
            matches=", ".join(str(n) for n in numbers),
        )


class TournamentResults(Part):
    def __init__(self, hall: HallState, calls: TournamentCalls) -> None:
        self.h = hall
        self.calls = calls

    @handles(RecordResult)
    def record(self, c: RecordResult) -> list[str]:
        for score in (c.score_a, c.score_b):
            if isinstance(score, bool) or not isinstance(score, int) or not 0 <= score <= 1000:
                raise TournamentRefused(N_("A score is a whole number."))
        now = self.h.clock()
        freed: list[str | None] = []
        with self.h.store.session() as db:
            loaded = load(db, c.tournament, for_update=True)
            if loaded.progress is None or loaded.plan is None:
                raise TournamentRefused(N_("The tournament is not drawn yet."))
            m = loaded.progress.by_id.get(c.match)
            if m is None:
                raise TournamentMissing(N_("There is no such match in this tournament."))
            new = check_result(loaded.plan.rules, m, c.score_a, c.score_b, now, walkover=c.walkover)
            old = loaded.results.get(c.match) if m.status == "done" else None
            calls = live_calls(db, loaded.t.id)
            reset: list[str] = []
            if old is not None:
                if _same(old, new):
                    return []
                reason = " ".join(c.reason.split())[:REASON_MAX]
                if len(reason) < REASON_MIN:
                    self._refuse_over(db, loaded, m.id, old)
                started = {call.match for call in calls if call.started_at is not None}
                reset = affected_by(loaded.plan, loaded.results, new, started)
                if reset and not c.force:
                    numbers = match_numbers(loaded.progress.matches)
                    raise CorrectionRefused([numbers.get(x, 0) for x in reset], reset)
                self._void(db, loaded, [c.match, *reset], c.actor, reason)
                freed += self._end_calls(db, calls, reset, "reset")
                record_audit(
                    db,
                    c.actor,
                    "tournament.correct",
                    f"tournament:{loaded.t.id}",
                    {
                        "match": c.match,
                        "old": [old.a, old.b, old.score_a, old.score_b],
                        "new": [new.a, new.b, new.score_a, new.score_b],
                        "reset": reset,
                    },
                    reason=reason,
                    at=now,
                )
            table = next((call.table_id for call in calls if call.match == c.match), None) or self._table_of(db, loaded.t.id, c.match)
            db.add(
                TournamentResult(
                    tournament_id=loaded.t.id,
                    match=new.match,
                    a=new.a,
                    b=new.b,
                    score_a=new.score_a,
                    score_b=new.score_b,
                    walkover=new.walkover,
                    table_id=table,
                    finished_at=new.finished_at,
                    entered_by=c.actor,
                )
            )
            freed += self._end_calls(db, calls, [c.match], "walkover" if c.walkover else "result")
            record_audit(
                db,
                c.actor,
                "tournament.result",
                f"tournament:{loaded.t.id}",
                {"match": c.match, "a": new.a, "b": new.b, "score": [new.score_a, new.score_b], "walkover": new.walkover},
                at=now,
            )
            # The state after it, worked out here rather than read again: the results less the voided, plus this one.
            results = {k: v for k, v in loaded.results.items() if k not in reset} | {c.match: new}
            after = progress(loaded.plan, results)
            freed += self._calls_follow(db, calls, after)
            loaded.t.finished_at = now if after.finished else None
            tid = loaded.t.id
            after_commit(db).add(lambda: self.h.listeners.notify(TournamentChanged(tournament=tid, match=c.match)))
        self.calls.refresh()  # committed: the tables whose match ended are free on the floor
        for where in dict.fromkeys(freed) or [None]:
            self.calls.table_done(tid, where, c.actor)
        return reset

    def _refuse_over(self, db: Db, loaded: Loaded, match: str, old: Result) -> None:
        """A second result without a reason: most often two directors at once. Say which result is
        there, who entered it and when; a correction needs its reason."""
        row = db.scalar(
            select(TournamentResult).where(
                TournamentResult.tournament_id == loaded.t.id, TournamentResult.match == match, TournamentResult.voided_at.is_(None)
            )
        )
        assert loaded.progress is not None
        m = loaded.progress.by_id[match]
        a, b = old.scores_for(m.a) if isinstance(m.a, int) else (old.score_a, old.score_b)
        raise TournamentRefused(
            N_(
                "Match no. %(match)d already has a result, %(a)d : %(b)d, entered by %(who)s at %(time)s. "
                "To correct it, write why (at least %(min)d letters)."
            ),
            match=match_numbers(loaded.progress.matches).get(match, 0),
            a=a,
            b=b,
            who=row.entered_by if row is not None else "?",
            time=old.finished_at.astimezone(self.h.venue.tz).strftime("%H:%M"),
            min=REASON_MIN,
        )

    @handles(WithdrawEntrant)
    def withdraw(self, c: WithdrawEntrant) -> list[str]:
        now = self.h.clock()
        with self.h.store.session() as db:
            loaded = load(db, c.tournament, for_update=True)
            if loaded.plan is None or loaded.progress is None:
                raise TournamentRefused(N_("The tournament is not drawn yet."))
            e = next((x for x in loaded.entrants if x.id == c.entrant), None)
            if e is None:
                raise TournamentMissing(N_("There is no such player in this tournament."))
            if e.withdrawn_at is not None:
                return []
            if loaded.t.finished_at is not None:
                raise TournamentRefused(N_("The tournament is over: nobody can withdraw now."))
            e.withdrawn_at, e.withdrawn_by = now, c.actor
            after = progress(replace(loaded.plan, withdrawn={**loaded.plan.withdrawn, e.id: now}), loaded.results)
            before = loaded.progress.by_id
            decided = [
                m.id
                for m in after.matches
                if m.status == "done"
                and m.result is not None
                and m.id not in loaded.results
                and getattr(before.get(m.id), "status", "") != "done"
            ]
            freed = self._calls_follow(db, live_calls(db, loaded.t.id), after, "walkover")
            loaded.t.finished_at = now if after.finished else None
            record_audit(db, c.actor, "tournament.withdraw", f"tournament:{loaded.t.id}", {"entrant": e.id, "walkovers": decided}, at=now)
            tid = loaded.t.id
            after_commit(db).add(lambda: self.h.listeners.notify(TournamentChanged(tournament=tid)))
        self.calls.refresh()
        for where in dict.fromkeys(freed) or [None]:
            self.calls.table_done(tid, where, c.actor)
        return decided

    def _void(self, db: Db, loaded: Loaded, matches: list[str], actor: str, reason: str) -> None:
        now = self.h.clock()
        rows = db.scalars(
            select(TournamentResult).where(
                TournamentResult.tournament_id == loaded.t.id, TournamentResult.match.in_(matches), TournamentResult.voided_at.is_(None)
            )
        )
        for row in rows:
            row.voided_at, row.voided_by, row.void_reason = now, actor, reason
        db.flush()

    def _end_calls(self, db: Db, calls: list[TournamentCall], matches: list[str], why: str) -> list[str | None]:
        """End the live calls (of `calls`) of these matches; answers their tables."""
        tables: list[str | None] = []
        for call in calls:
            if call.ended_at is None and call.match in matches:
                call.ended_at, call.end_reason = self.h.clock(), why
                tables.append(call.table_id)
                after_commit(db).add(self._table_changed(call.table_id))
        db.flush()
        return tables

    def _table_changed(self, table: str) -> Callable[[], None]:
        return lambda: self.h.listeners.notify(SessionChanged(table=table, action="tournament"))

    def _calls_follow(self, db: Db, calls: list[TournamentCall], after: Progress, why: str = "reset") -> list[str | None]:
        """A live call whose match no longer has the players it was called with (a correction moved
        them) or is decided (a withdrawal's walkover) ends, and its table is free; answers those tables."""
        by_id = after.by_id
        gone = []
        for call in calls:
            m = by_id.get(call.match)
            if call.ended_at is None and (m is None or m.status != "ready" or m.players != (call.a, call.b)):
                gone.append(call.match)
        return self._end_calls(db, calls, gone, why)

    def _table_of(self, db: Db, tournament_id: int, match: str) -> str | None:
        call = db.scalar(
            select(TournamentCall)
            .where(TournamentCall.tournament_id == tournament_id, TournamentCall.match == match)
            .order_by(TournamentCall.id.desc())
            .limit(1)
        )
        return call.table_id if call is not None else None


def _same(old: Result, new: Result) -> bool:
    """The same result entered again (a double tap): nothing to correct."""
    return (old.a, old.b, old.score_a, old.score_b, old.walkover) == (new.a, new.b, new.score_a, new.score_b, new.walkover)
