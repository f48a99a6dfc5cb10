"""A tournament's matches on its tables: called to a table (its light on, its time billed to the
tournament), begun, scored rack by rack, offered as a walkover when nobody began it in time.

When a table of the tournament is free, the longest-waiting ready match is called to it
(broker.domain.tournaments.calls): at the draw, at a result on that table, and in the watchdog's
round every second (broker.floor.timers) for a table freed any other way; never before the
tournament's start (calls_from: a draw made earlier waits, and the round calls at the start; the
director who begins earlier moves the start, StartTournamentNow). The call starts a game on
the table through the games part (StartGame's own rules, inline on the writer), at the
tournament's rate (the venue's tournament tariff: the club's own use of its tables), so the light
comes on through the lights as for any game and the time shows as the tournament's, never as a
player's debt. A table whose match ended keeps its game when the next match is called to it at
once; its game stops (the light goes off) when no match is waiting for it.

SBiZ 1.7: a called match nobody began within 15 minutes (by the hub's clock) is offered as a
walkover, which staff confirm (broker.tournaments.results). A match begins when staff or
players say so, at its first rack scored, or at the first ball the table's pockets see after the call.

The table's game is the match's while it is called: staff cannot stop or pause it (broker.floor.games
asks here) nor switch the table's light off (broker.floor.table_service asks here: refuse_dark, the
one rule), only its result, a walkover or the director's recall (RecallMatch) end it; moving the
game (MoveGame) moves the match with it. Nobody is called to two tables at once, across the
tournaments running at the same time (a member, or a name, entered in two of them).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.errors import ServiceError
from broker.core.events import SessionChanged
from broker.core.part import Part, Round
from broker.core.ports import HallState
from broker.domain.refusals import N_, table_name
from broker.domain.tournaments.calls import callable_matches, walkover_due
from broker.domain.tournaments.labels import match_numbers
from broker.domain.tournaments.progress import MatchState
from broker.domain.tournaments.rules import TournamentRefused
from broker.floor.games import Games, StartGame, StopGame
from broker.floor.table_service import OutOfServiceBook, refuse_out_of_service
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import Tournament, TournamentCall
from broker.tournaments.events import TournamentCalled
from broker.tournaments.state import (
    RECALLED,
    Loaded,
    TournamentMissing,
    busy_entrants,
    calls_from,
    live_calls,
    load,
    recalled_matches,
)
from devices.kinds import Kind

log = logging.getLogger("lavos.hub.tournaments")
Execute = Callable[[Command[Any]], Any]
SIDES = ("a", "b")


@command
class CallMatch(Command[None]):
    """Call a ready match to a table (staff choosing the table; the hub calls by itself to free ones):
    the table's light comes on, its time is billed to the tournament."""

    tournament: int
    match: str
    table: str


@command
class StartMatch(Command[None]):
    """The players of a called match are at the table: its walkover clock stops."""

    tournament: int
    match: str


@command
class ScoreRack(Command[tuple[int, int]]):
    """A rack won (`delta` 1) or taken back (-1) by side `side` ("a" or "b") of a match on a table;
    answers the running score. `seen`: the score the tap was made on; when it is no longer the score
    (a double tap, a second phone), nothing changes. A +1 on a won race is refused, `seen` or not.
    The result itself is confirmed with RecordResult."""

    tournament: int
    match: str
    side: str
    delta: int = 1
    seen: tuple[int, int] | None = None


@command
class RecallMatch(Command[None]):
    """The director takes a called match off its table (called to the wrong table, the table is
    needed): the call ends, the table gets the next waiting match or its light goes off, and the
    match waits until it is called to a table by hand (CallMatch)."""

    tournament: int
    match: str


class TournamentCalls(Part):
    def __init__(self, hall: HallState, games: Games, out_of_service: OutOfServiceBook, execute: Execute) -> None:
        self.h = hall
        self.games = games
        self._out_of_service = out_of_service
        self._execute = execute  # StopGame, inline on the writer
        # The tables with a match on them, read again after every change of the calls (on the
        # writer): every floor card asks, and most tables most days have none (no query for them).
        self._on_tables: frozenset[str] = frozenset()

    def refresh(self) -> None:
        """Read which tables have a match on them (at start, and after a change of the calls)."""
        with self.h.store.reader() as db:
            self._on_tables = frozenset(call.table_id for call in live_calls(db))

    def has_call(self, table: str) -> bool:
        """Is a tournament's match on `table` now (any thread: a snapshot)?"""
        return table in self._on_tables

    # -- calling -------------------------------------------------------------------------------

    @handles(CallMatch)
    def call(self, c: CallMatch) -> None:
        with self.h.store.reader() as db:
            loaded = load(db, c.tournament)
            self._refuse_before_start(loaded.t)
            m = self._ready(loaded, c.match)
            calls = live_calls(db)
        if c.table not in self.h.tables or not Kind(self.h.tables[c.table].kind).billed:
            raise TournamentRefused(N_("A tournament is played on pool and carom tables; %(table)s is not one."), table=c.table[:40])
        self._check_free(c.table, calls, loaded.t.id)
        if any(call.tournament_id == loaded.t.id and call.match == m.id for call in calls):
            raise TournamentRefused(N_("This match is already called to a table."))
        players = m.players
        assert players is not None
        with self.h.store.reader() as db:
            busy = busy_entrants(db, loaded.t.id, calls)
        if busy & set(players):
            raise TournamentRefused(N_("A player of this match is at another table now."))
        self._call(loaded, [(m, c.table)], c.actor)

    def _refuse_before_start(self, t: Tournament) -> None:
        begins = calls_from(t, self.h.clock())
        if begins is not None:
            local = begins.astimezone(self.h.venue.tz)
            raise TournamentRefused(
                N_("%(tournament)s starts on %(day)s at %(time)s: its matches are called to the tables from then on (or start it now)."),
                tournament=t.name,
                day=f"{local.day}. {local.month}.",
                time=f"{local:%H:%M}",
            )

    def _ready(self, loaded: Loaded, match: str) -> MatchState:
        if loaded.progress is None:
            raise TournamentRefused(N_("The tournament is not drawn yet."))
        m = loaded.progress.by_id.get(match)
        if m is None:
            raise TournamentMissing(N_("There is no such match in this tournament."))
        if m.status != "ready" or m.players is None:
            raise TournamentRefused(N_("This match cannot be played now: its players are not known, or it is over."))
        return m

    def _check_free(self, table: str, calls: list[TournamentCall], tournament_id: int) -> None:
        """The table is in service, has no match on it, and no game but the tournament's own."""
        spec = self.h.tables[table]
        refuse_out_of_service(self._out_of_service, table, spec.name)
        if any(call.table_id == table for call in calls):
            raise TournamentRefused(N_("%(table)s already has a match on it."), table=table_name(spec))
        running = self.h.games.get(table)
        if running is not None and not self._ours(running.id, tournament_id):
            raise ServiceError(
                N_("%(table)s already has game no. %(game)d running; stop or move it first."), table=table_name(spec), game=running.id
            )

    def _ours(self, game: int, tournament_id: int) -> bool:
        with self.h.store.reader() as db:
            return game in self._games_of(db, tournament_id)

    @staticmethod
    def _games_of(db: Db, tournament_id: int) -> set[int]:
        """The games the tournament's calls started (its tables' games)."""
        return {g for g in db.scalars(select(TournamentCall.game_id).where(TournamentCall.tournament_id == tournament_id)) if g is not None}

    def _call(self, loaded: Loaded, todo: list[tuple[MatchState, str]], actor: str) -> None:
        """Call each match to its table (each checked free): the table's game first (the one
        running there, the tournament's own, or a new one at its rate: the light), then the calls,
        all in one transaction."""
        t = loaded.t
        assert loaded.plan is not None
        rules = loaded.plan.rules
        games: list[int] = []
        for _, table in todo:
            running = self.h.games.get(table)
            games.append(running.id if running is not None else self.games.start_game(StartGame(table=table, tariff=t.tariff, actor=actor)))
        now = self.h.clock()
        with self.h.store.session() as db:
            for (m, table), game in zip(todo, games, strict=True):
                assert m.players is not None
                a, b = m.players
                db.add(
                    TournamentCall(
                        tournament_id=t.id,
                        match=m.id,
                        table_id=table,
                        game_id=game,
                        a=a,
                        b=b,
                        called_at=now,
                        called_by=actor,
                        score_a=rules.start_score(a),
                        score_b=rules.start_score(b),
                    )
                )
                record_audit(db, actor, "tournament.call", f"tournament:{t.id}", {"match": m.id, "table": table}, at=now)
                self._notify(db, t.id, table)
        self.refresh()

    def _ensure_game(self, call_id: int, tariff: str | None, actor: str) -> None:
        """The called table's game: the one running there (the tournament's, kept from its last
        match) or a new one at the tournament's rate. Its own transaction: a game that could not
        start leaves the call without one, and the next round tries again."""
        with self.h.store.reader() as db:
            call = db.get(TournamentCall, call_id)
            if call is None or call.ended_at is not None or call.game_id is not None:
                return
            table = call.table_id
        running = self.h.games.get(table)
        game = running.id if running is not None else self.games.start_game(StartGame(table=table, tariff=tariff, actor=actor))
        with self.h.store.session() as db:
            call = db.get(TournamentCall, call_id)
            assert call is not None
            call.game_id = game

    def fill_tables(self, tournament_id: int, actor: str = "system", prefer: str | None = None) -> list[tuple[str, str]]:
        """Call the waiting matches to the tournament's free tables, longest-waiting first; answers
        the matches called with their tables. `prefer`: a table whose match just ended goes first (its game and light
        stay on). On the writer, after a commit (never inside a transaction)."""
        with self.h.store.reader() as db:
            t = db.get(Tournament, tournament_id)
            if t is None or t.draw_order is None or t.finished_at is not None or calls_from(t, self.h.clock()) is not None:
                return []  # (before its start the drawn bracket waits: calls_from)
            calls = live_calls(db)
            ours = self._games_of(db, tournament_id)
            free = [table for table in (t.options or {}).get("tables", []) if self._is_free(table, calls, ours)]
            # Who plays whom is worked out only when a table is free (the round asks every second).
            loaded = load(db, tournament_id) if free else None
            if loaded is not None:
                busy = busy_entrants(db, tournament_id, calls)  # at a table of this tournament or another one
                held = recalled_matches(db, tournament_id)  # the director's recalls wait for a call by hand
        if loaded is None or loaded.progress is None:
            return []
        if prefer in free:
            free.remove(prefer)
            free.insert(0, prefer)
        mine = {call.match for call in calls if call.tournament_id == tournament_id}
        todo = callable_matches(loaded.progress, mine | held, busy)
        pairs = list(zip(todo, free, strict=False))
        if pairs:
            self._call(loaded, pairs, actor)
        return [(m.id, table) for m, table in pairs]

    def _is_free(self, table: str, calls: list[TournamentCall], ours: set[int]) -> bool:
        if table not in self.h.tables or self._out_of_service.get(table) is not None:
            return False
        if any(call.table_id == table for call in calls):
            return False
        running = self.h.games.get(table)
        return running is None or running.id in ours

    def table_done(self, tournament_id: int, table: str | None, actor: str) -> None:
        """A match on `table` ended (its result, a walkover, a reset): the next waiting match is
        called to it, keeping its game; with none waiting its game stops and the light goes off."""
        called = self.fill_tables(tournament_id, actor, prefer=table)
        if table is None or any(where == table for _, where in called):
            return
        running = self.h.games.get(table)
        # (A match called there meanwhile, by an earlier table's turn of the same change, keeps it.)
        if running is not None and self._ours(running.id, tournament_id) and not self.carries_match(running.id):
            self._execute(StopGame(game=running.id, reason="tournament: no match waiting", actor=actor))

    @handles(RecallMatch)
    def recall(self, c: RecallMatch) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            call = self._live(db, c.tournament, c.match)
            call.ended_at, call.end_reason = now, RECALLED
            table = call.table_id
            record_audit(db, c.actor, "tournament.recall", f"tournament:{c.tournament}", {"match": c.match, "table": table}, at=now)
            self._notify(db, c.tournament, table)
        self.refresh()
        self.table_done(c.tournament, table, c.actor)

    # -- a called match's game (broker.floor.games asks) ----------------------------------------

    def _call_of_game(self, db: Db, game: int) -> TournamentCall | None:
        return db.scalar(select(TournamentCall).where(TournamentCall.game_id == game, TournamentCall.ended_at.is_(None)))

    def carries_match(self, game: int) -> bool:
        with self.h.store.reader() as db:
            return self._call_of_game(db, game) is not None

    def refuse_change(self, game: int, kind: str, to_table: str | None) -> None:
        """A called match's game is not stopped or paused by hand (refuse_dark); it moves only to
        a table with no match on it (the match moves with it: game_moved)."""
        if kind not in ("stop", "pause", "transfer"):
            return
        with self.h.store.reader() as db:
            call = self._call_of_game(db, game)
            if call is None:
                return
            if kind == "transfer":
                there = db.scalar(select(TournamentCall.id).where(TournamentCall.table_id == to_table, TournamentCall.ended_at.is_(None)))
                if there is not None and to_table in self.h.tables:
                    raise TournamentRefused(N_("%(table)s already has a match on it."), table=table_name(self.h.tables[to_table]))
                return
            raise self._dark_refusal(db, call)

    def refuse_dark(self, table: str) -> None:
        """The rule (issue 29, item 21): a table with a called match stays lit while the match is
        called. Staff neither stop nor pause its game (refuse_change) nor switch its light off
        (broker.floor.table_service); only its result, a walkover or the director's recall end it."""
        with self.h.store.reader() as db:
            call = db.scalar(select(TournamentCall).where(TournamentCall.table_id == table, TournamentCall.ended_at.is_(None)))
            if call is not None:
                raise self._dark_refusal(db, call)

    def _dark_refusal(self, db: Db, call: TournamentCall) -> TournamentRefused:
        """The one refusal of refuse_dark, naming the match and how it ends."""
        loaded = load(db, call.tournament_id)
        number = match_numbers(loaded.progress.matches).get(call.match, 0) if loaded.progress else 0
        spec = self.h.tables.get(call.table_id)
        return TournamentRefused(
            N_(
                "%(table)s plays match no. %(match)d of %(tournament)s: its game and its light end with its result or a "
                "walkover, or the director takes the match off the table on the tournament's page."
            ),
            table=table_name(spec) if spec is not None else call.table_id,
            match=number,
            tournament=loaded.t.name,
        )

    def refuse_start(self, table: str) -> None:
        """A table a match is called to (its game could not start yet: the next round starts it)
        takes no game by hand."""
        with self.h.store.reader() as db:
            there = db.scalar(select(TournamentCall.id).where(TournamentCall.table_id == table, TournamentCall.ended_at.is_(None)))
        if there is not None and table in self.h.tables:
            raise TournamentRefused(N_("%(table)s already has a match on it."), table=table_name(self.h.tables[table]))

    def game_moved(self, db: Db, game: int, to_table: str) -> None:
        """The called match's game moved to `to_table` (in the move's transaction): the match is
        played there now, on the floor, the TV and the tournament's page, and its result frees that table."""
        call = self._call_of_game(db, game)
        if call is None:
            return
        old, call.table_id = call.table_id, to_table
        record_audit(
            db,
            "system",
            "tournament.move",
            f"tournament:{call.tournament_id}",
            {"match": call.match, "from": old, "to": to_table},
            at=self.h.clock(),
        )
        self._notify(db, call.tournament_id, old)
        self._notify(db, call.tournament_id, to_table)
        after_commit(db).add(self.refresh)

    # -- the match at the table -------------------------------------------------------------------

    def _live(self, db: Db, tournament_id: int, match: str) -> TournamentCall:
        if db.get(Tournament, tournament_id) is None:
            raise TournamentMissing(N_("There is no such tournament."))
        call = db.scalar(
            select(TournamentCall).where(
                TournamentCall.tournament_id == tournament_id, TournamentCall.match == match, TournamentCall.ended_at.is_(None)
            )
        )
        if call is None:
            raise TournamentRefused(N_("This match is not on a table now."))
        return call

    @handles(StartMatch)
    def start(self, c: StartMatch) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            call = self._live(db, c.tournament, c.match)
            if call.started_at is None:
                call.started_at = now
                call.walkover_offered_at = None
                record_audit(db, c.actor, "tournament.start", f"tournament:{c.tournament}", {"match": c.match}, at=now)
                self._notify(db, c.tournament, call.table_id)

    @handles(ScoreRack)
    def score(self, c: ScoreRack) -> tuple[int, int]:
        if c.side not in SIDES or c.delta not in (1, -1):
            raise TournamentRefused(N_("A rack goes to one of the two players."))
        now = self.h.clock()
        with self.h.store.session() as db:
            call = self._live(db, c.tournament, c.match)
            loaded = load(db, c.tournament)
            assert loaded.progress is not None and loaded.plan is not None
            m = loaded.progress.by_id[c.match]
            rules = loaded.plan.rules
            race = m.spec.race_to
            player, score = (call.a, call.score_a) if c.side == "a" else (call.b, call.score_b)
            # A +1 on a won race is refused whatever score it was tapped on (a late double tap, a
            # second phone): the race is over, and the tap says so rather than answering the score.
            if c.delta > 0 and max(call.score_a, call.score_b) >= race:
                raise TournamentRefused(
                    N_("The race to %(race)d is won already (%(a)d : %(b)d): confirm the result, or take a rack back."),
                    race=race,
                    a=call.score_a,
                    b=call.score_b,
                )
            if c.seen is not None and tuple(c.seen) != (call.score_a, call.score_b):
                return call.score_a, call.score_b  # tapped on a score that has changed since: once is enough
            if c.delta < 0 and score <= rules.start_score(player):
                raise TournamentRefused(N_("There is no rack to take back: the score is %(a)d : %(b)d."), a=call.score_a, b=call.score_b)
            if c.side == "a":
                call.score_a += c.delta
            else:
                call.score_b += c.delta
            if call.started_at is None:
                call.started_at, call.walkover_offered_at = now, None
            self._notify(db, c.tournament, call.table_id)
            return call.score_a, call.score_b

    # -- the watchdog's round (broker.floor.timers: every second, on the writer) ------------------

    def rounds(self) -> tuple[Round, ...]:
        return (self.round,)

    def round(self, now: datetime) -> None:
        """Free tables get their matches; a call whose table's pockets saw a ball has begun; a call
        nobody began in time is offered as a walkover; a call whose game could not start gets one."""
        with self.h.store.reader() as db:
            running = db.execute(
                select(Tournament.id, Tournament.tariff).where(Tournament.draw_order.is_not(None), Tournament.finished_at.is_(None))
            ).all()
            calls = live_calls(db)
        if not running and not calls:
            return
        for tid, _ in running:
            self.fill_tables(tid)
        tariffs = dict(running)
        for call in calls:
            if call.game_id is None:
                self._ensure_game(call.id, tariffs.get(call.tournament_id), "system")
        self._begun_or_late(calls, now)

    def _begun_or_late(self, calls: list[TournamentCall], now: datetime) -> None:
        runtime = self.h.runtime.view()
        begun: dict[int, datetime] = {}
        late: list[int] = []
        for call in calls:
            if call.started_at is not None:
                continue
            drop = runtime[call.table_id].last_drop_at if call.table_id in runtime else None
            if drop is not None and drop >= call.called_at:
                begun[call.id] = drop
            elif call.walkover_offered_at is None and walkover_due(call.called_at, call.started_at, now):
                late.append(call.id)
        if not begun and not late:
            return
        with self.h.store.session() as db:
            for call_id, at in begun.items():
                row = db.get(TournamentCall, call_id)
                if row is not None and row.started_at is None:
                    row.started_at = at
                    self._notify(db, row.tournament_id, row.table_id)
            for call_id in late:
                row = db.get(TournamentCall, call_id)
                if row is not None and row.started_at is None and row.walkover_offered_at is None:
                    row.walkover_offered_at = now
                    record_audit(db, "system", "tournament.walkover_offer", f"tournament:{row.tournament_id}", {"match": row.match}, at=now)
                    self._notify(db, row.tournament_id, row.table_id)
                    log.info(
                        "tournament %d: match %s on %s not begun in 15 min, walkover offered", row.tournament_id, row.match, row.table_id
                    )

    def _notify(self, db: Db, tournament_id: int, table: str | None) -> None:
        effects = after_commit(db)
        effects.add(lambda: self.h.listeners.notify(TournamentCalled(tournament=tournament_id, table=table)))
        if table is not None:  # the table's card on the floor shows the call
            effects.add(lambda: self.h.listeners.notify(SessionChanged(table=table, action="tournament")))
