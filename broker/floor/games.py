"""Games on the billed tables: start, the operations on a running one, and its bill's amendments.

Every change of a game is validated by the pure game logic (broker.domain.floor.game_ops), appended to
the game's op log in the database, and only then turned into MQTT commands. The op log is the
record: at start the hub replays it, so after a crash the games, their bills and the lights
wanted are exactly what they were.

Each command below has its one handler here, run by the hub's writer: validate, commit, update
the open games (broker.core.open_games) and register the effects (the light, the retained
summary, the live push, the metric), which run after the commit.

A game that carries a tournament's called match (broker.tournaments.calls) is the
tournament's: staff cannot stop or pause it (it stops with the match's result, a walkover or the
director's recall), and moving it moves the match with it, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol, cast

from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, abstract_command, command, handles
from broker.core.errors import CardInUse, NotFound, ServiceError
from broker.core.events import SessionChanged
from broker.core.open_games import OpenGame
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.floor import alert_kinds, game_ops
from broker.domain.floor.game_log import replay_row
from broker.domain.floor.game_ops import GameState
from broker.domain.people import membership
from broker.domain.refusals import N_, Name, table_name
from broker.domain.tariffs import MemberSnapshot, calendar_year
from broker.floor.lights import Lights
from broker.floor.table_service import OutOfServiceBook, TableService, refuse_out_of_service
from broker.storage.after_commit import Effects, after_commit
from broker.storage.audit import append_game_op
from broker.storage.members import MemberError, find_by_card, get_member
from broker.storage.models import Game, Member
from broker.till import Till
from devices.kinds import Kind

MakeOp = Callable[[datetime], game_ops.Op]
# Refuses prepaid minutes that would run into a booking or block ahead on a table (broker.bookings.bookings).
PrepaidGuard = Callable[[str, int | None, datetime], None]


class CalledMatches(Protocol):
    """The tournaments' matches on the tables (broker.tournaments.calls), as the games see them."""

    def refuse_change(self, game: int, kind: str, to_table: str | None) -> None:
        """Refuse an op of `kind` on a game that carries a called match (stop, pause), or a move
        of one to a table that has a match on it."""

    def refuse_start(self, table: str) -> None:
        """Refuse a game started by hand on a table a match is called to."""

    def game_moved(self, db: Db, game: int, to_table: str) -> None:
        """The game moved (in `db`'s transaction): its called match moves with it."""

    def carries_match(self, game: int) -> bool:
        """Does a called match play on this game now?"""


# -- the commands ---------------------------------------------------------------------------


@command
class StartGame(Command[int]):
    """Start a game on a table (the light goes on); answers the game's number. A member by id or
    by card (card_uid) bills at the member rate when their fee is paid."""

    table: str
    tariff: str | None = None
    member_id: int | None = None
    card_uid: str | None = None
    prepaid_minutes: int | None = None


@abstract_command
class GameCommand(Command[GameState]):
    """A command on one game (by its number); answers the game's state after it."""

    game: int


@command
class StopGame(GameCommand):
    """Stop a game: the light goes off, the bill is final. `at` backdates it (prepaid time ends
    when it ran out, not when the watchdog looked), never before the game's last op."""

    reason: str | None = None
    at: datetime | None = None


@command
class PauseGame(GameCommand):
    """Stop billing for a while (the light as the venue says)."""


@command
class ResumeGame(GameCommand):
    """Bill again after a pause."""


@command
class MoveGame(GameCommand):
    """Move a running game to a free table; the light moves with it."""

    to_table: str


@command
class ExtendGame(GameCommand):
    """Buy more prepaid minutes."""

    minutes: int


@command
class CorrectBill(GameCommand):
    """A manager's correction by an amount with a reason, on a running game or an issued bill."""

    amount_cents: int
    reason: str


@command
class MarkClockUnsure(GameCommand):
    """The hub's clock could not be trusted while the game ran (never synchronised since boot, or
    it jumped: broker.floor.box_watch): the game is marked so staff check its times and bill; its
    amount does not change. `cause` "unsynced" or "jump" (by `jump_s` seconds)."""

    cause: str
    jump_s: int | None = None


@command
class SetCard(GameCommand):
    """Put a member's club card on a running game (by member or by card), or take it off (neither)."""

    member_id: int | None = None
    card_uid: str | None = None


# -- the rules ------------------------------------------------------------------------------


def member_snapshot(db: Db, h: HallState, *, member_id: int | None = None, card_uid: str | None = None) -> MemberSnapshot | None:
    """The member a game is for, as the game logic sees them (fee years included), or None."""
    if member_id is None and not card_uid:
        return None
    member: Member | None
    if card_uid:
        member = find_by_card(db, card_uid)
        if member is None:
            raise ServiceError(N_("Unknown card %(card)s: assign it to a member, or start the game without a card."), card=card_uid)
    else:
        try:
            member = get_member(db, cast(int, member_id))  # no card, so an id (None returned above)
        except MemberError as e:
            raise NotFound.like(e) from None
    year = calendar_year(h.clock(), h.venue)
    paid = [f.year for f in member.fees]
    if membership.eligibility(member.active, paid, year) == "inactive":  # unpaid: plays, at the guest rate
        why = membership.refusal("inactive", member.name, year)
        assert why is not None
        raise ServiceError.like(why)
    # Both fee years a game can meet: on New Year's Eve the card rate goes on past midnight only
    # for a member who has already paid the coming year.
    return MemberSnapshot(member.id, member.name, membership.fee_paid(paid, year), year, next_year_paid=membership.fee_paid(paid, year + 1))


class Games(Part):
    def __init__(
        self,
        hall: HallState,
        lights: Lights,
        out_of_service: OutOfServiceBook,
        table_service: TableService,
        till: Till,
        prepaid_guard: PrepaidGuard | None = None,
    ) -> None:
        self.h = hall
        self.lights = lights
        self._out_of_service = out_of_service
        self._table_service = table_service
        self._till = till
        self._prepaid_guard = prepaid_guard
        self.matches: CalledMatches | None = None  # the tournaments' calls (set by the hub once they exist)

    # -- checks -------------------------------------------------------------------------

    def _card_free(self, member: MemberSnapshot | None, game: int | None = None) -> None:
        """Refuse a card already on another open game (running or paused: a paused one resumes at
        the club rate). By member, not UID: a member with two cards is one member."""
        if member is None:
            return
        for table, g in self.h.games.view().items():
            if g.id != game and g.state.member is not None and g.state.member.member_id == member.member_id:
                spec = self.h.tables[table]
                raise CardInUse(member.name, table, spec.name, g.id, spec.name_en)

    def _require_table(self, table: str) -> None:
        if table not in self.h.tables:
            raise NotFound(N_("There is no table %(table)s."), table=table[:40])
        if not Kind(self.h.tables[table].kind).billed:
            raise ServiceError(N_("%(table)s is not billed by time: it has no games to start."), table=table_name(self.h.tables[table]))

    def _open(self, game: int) -> tuple[str, OpenGame]:
        found = self.h.games.by_id(game)
        if found is None:
            raise NotFound(N_("Game no. %(game)d is no longer running."), game=game)
        return found

    # -- starting -----------------------------------------------------------------------

    @handles(StartGame)
    def start(self, c: StartGame) -> int:
        if c.tariff is not None and any(t.id == c.tariff and t.tournament for t in self.h.venue.tariffs):
            spec = self.h.venue.tariff(c.tariff)
            raise ServiceError(N_("The rate %(tariff)s is for tournament matches only."), tariff=Name(spec.name, spec.name_en))
        if self.matches is not None:
            self.matches.refuse_start(c.table)
        return self.start_game(c)

    def start_game(self, c: StartGame) -> int:
        """Start a game (the writer): StartGame's rules, and a tournament's call (broker.tournaments.calls),
        which may ask for a tournament's tariff."""
        table = c.table
        self._require_table(table)
        refuse_out_of_service(self._out_of_service, table, self.h.tables[table].name)
        busy = self.h.games.get(table)
        if busy is not None:
            raise ServiceError(
                N_("%(table)s already has game no. %(game)d running; stop or move it first."),
                table=table_name(self.h.tables[table]),
                game=busy.id,
            )
        if self._prepaid_guard is not None:
            self._prepaid_guard(table, c.prepaid_minutes, self.h.clock())
        with self.h.store.session() as db:
            member = member_snapshot(db, self.h, member_id=c.member_id, card_uid=c.card_uid)
            self._card_free(member)
            op = game_ops.start_op(self.h.clock(), table, c.tariff, member, c.prepaid_minutes, actor=c.actor)
            try:
                state = game_ops.apply(None, op, self.h.venue)
            except game_ops.GameError as e:
                raise ServiceError.like(e) from None
            row = Game(table_id=table, state="running", started_at=op.at, member_id=member.member_id if member else None)
            db.add(row)
            db.flush()
            _append(db, row.id, op)
            self._till.tabs.open_for_game(db, row, c.actor)  # the game's tab, in the same transaction
            for key in (alert_kinds.play_without_session_key(table), alert_kinds.light_without_session_key(table)):
                self.h.alerts.settle(db, key, op.at)
            gid = row.id
            effects = after_commit(db)
            effects.add(lambda: self.lights.send(table, True))
            effects.add(lambda: self.lights.publish_game(table))
            effects.add(lambda: self.h.listeners.notify(SessionChanged(table=table, session_id=gid, action="start")))
        # Committed: the owned state now; the effects run after this command.
        self.h.games.put(table, OpenGame(gid, state))
        self._table_service.game_started(table)
        self.h.runtime.reset(table)
        self.h.runtime.publish()
        return gid

    # -- a running game -----------------------------------------------------------------

    def change(self, game: int, make_op: MakeOp, at: datetime | None = None) -> GameState:
        """Validate and append one op to an open game, then make the lights follow (on the writer)."""
        table, g = self._open(game)
        op = make_op(max(at or self.h.clock(), g.state.last_at))
        try:
            new = game_ops.apply(g.state, op, self.h.venue)
        except game_ops.GameError as e:
            raise ServiceError.like(e) from None
        if op.kind == "transfer":
            self._check_move_to(op.data["table"])
        if self.matches is not None:
            self.matches.refuse_change(game, op.kind, op.data.get("table"))
        with self.h.store.session() as db:
            _append(db, game, op)
            row = db.get(Game, game)
            assert row is not None
            row.state = new.state
            row.table_id = new.table
            if op.kind == "transfer":
                self._till.game_moved(db, game, new.table)
                if self.matches is not None:
                    self.matches.game_moved(db, game, new.table)
            if op.kind == "card":
                row.member_id = new.member.member_id if new.member else None
            if op.kind == "extend":  # time bought again: the next run-out is a new alert
                self.h.alerts.settle(db, alert_kinds.prepaid_expired_key(table), op.at)
            if op.kind == "correction":  # paid in advance: the receipts must stay right (refused otherwise)
                self._till.bill_corrected(db, game)
            if new.state == "stopped":
                row.stopped_at = new.stopped_at
                row.total_cents = self.lights.bill_of(new).total_cents
                for key in (
                    alert_kinds.idle_session_key(table),
                    alert_kinds.open_after_closing_key(table),
                    alert_kinds.prepaid_expired_key(table),
                ):
                    self.h.alerts.settle(db, key, op.at)
                self._till.game_billed(db, game)
            self._effects(after_commit(db), table, g.id, new, op)
        self._owned_state(table, g.id, new, op)
        return new

    def _check_move_to(self, target: str) -> None:
        self._require_table(target)
        refuse_out_of_service(self._out_of_service, target, self.h.tables[target].name)
        busy = self.h.games.get(target)
        if busy is not None:
            raise ServiceError(
                N_("%(table)s is busy (game no. %(game)d); pick a free table."), table=table_name(self.h.tables[target]), game=busy.id
            )

    def _owned_state(self, table: str, gid: int, new: GameState, op: game_ops.Op) -> None:
        """Committed: the open games and the table's counters follow (before any effect runs)."""
        h = self.h
        # The lights the effects will send count as commanded before any reader sees the change:
        # a card drawn in between showed a stopped game's table "lit without a game" (CI, once).
        if new.state == "stopped" or op.kind in ("pause", "resume"):
            self.lights.commanding(table, self.lights.desired_with(table, new))
        elif op.kind == "transfer":
            self.lights.commanding(table, self.lights.desired_with(table, None))
            self.lights.commanding(new.table, self.lights.desired_with(new.table, new))
        if new.state == "stopped":
            h.games.remove(table)
        elif op.kind == "transfer":
            h.games.move(table, new.table, OpenGame(gid, new))
            # The same players: the warnings they were given move with them (not blinked again).
            moved = h.runtime.of(table)
            h.runtime.reset(new.table, prepaid_warned_for=moved.prepaid_warned_for, closing_warned_for=moved.closing_warned_for)
        else:
            h.games.put(table, OpenGame(gid, new))
            if op.kind == "resume":
                h.runtime.of(table).last_drop_at = op.at
        h.runtime.publish()

    def _effects(self, effects: Effects, table: str, gid: int, new: GameState, op: game_ops.Op) -> None:
        """What the tables, the live views and the metrics are told once the change is committed."""
        h, lights = self.h, self.lights
        if new.state == "stopped":
            effects.add(lambda: lights.send(table, False))
            effects.add(lambda: lights.publish_game(table))
            if h.metrics:
                b = lights.bill_of(new)
                minutes = sum(int((seg.end - seg.start).total_seconds()) for seg in game_ops.segments(new, h.venue, new.last_at)) // 60
                # The tariff its lines were billed at: a game started without one has none of its own.
                tariff = b.main_tariff or new.tariff or h.venue.billing.default_tariff
                effects.add(lambda: h.metrics.session(table, tariff, minutes, b.total_cents, op.at))
        elif op.kind == "transfer":
            effects.add(lambda: lights.send(table, False))
            effects.add(lambda: lights.send(new.table, lights.desired(new.table) or False))
            effects.add(lambda: lights.publish_game(table))
            effects.add(lambda: lights.publish_game(new.table))
        else:
            if op.kind in ("pause", "resume"):
                effects.add(lambda: lights.send(table, bool(lights.desired(table))))
            effects.add(lambda: lights.publish_game(table))
        # A transfer changed two tables: say both, so live views re-draw just those two.
        moved = table if op.kind == "transfer" else None
        effects.add(lambda: h.listeners.notify(SessionChanged(new.table, op.kind, session_id=gid, from_table=moved)))

    @handles(StopGame)
    def stop(self, c: StopGame) -> GameState:
        return self.change(c.game, lambda t: game_ops.stop_op(t, actor=c.actor, reason=c.reason), c.at)

    @handles(PauseGame)
    def pause(self, c: PauseGame) -> GameState:
        return self.change(c.game, lambda at: game_ops.pause_op(at, actor=c.actor))

    @handles(ResumeGame)
    def resume(self, c: ResumeGame) -> GameState:
        return self.change(c.game, lambda at: game_ops.resume_op(at, actor=c.actor))

    @handles(MoveGame)
    def move(self, c: MoveGame) -> GameState:
        return self.change(c.game, lambda at: game_ops.transfer_op(at, c.to_table, actor=c.actor))

    @handles(ExtendGame)
    def extend(self, c: ExtendGame) -> GameState:
        found = self.h.games.by_id(c.game)
        if self._prepaid_guard is not None and found is not None and found[1].state.prepaid_until is not None:
            now = self.h.clock()
            left = max(0, int((found[1].state.prepaid_until - now).total_seconds() // 60))
            self._prepaid_guard(found[0], left + c.minutes if isinstance(c.minutes, int) else None, now)
        return self.change(c.game, lambda at: game_ops.extend_op(at, c.minutes, actor=c.actor))

    @handles(MarkClockUnsure)
    def mark_clock(self, c: MarkClockUnsure) -> GameState:
        return self.change(c.game, lambda at: game_ops.clock_op(at, c.cause, c.jump_s))

    @handles(SetCard)
    def set_card(self, c: SetCard) -> GameState:
        # One writer over the check and the append: two tables showing one card at the same
        # moment cannot both pass.
        with self.h.store.reader() as db:
            member = member_snapshot(db, self.h, member_id=c.member_id, card_uid=c.card_uid)
        if member is None:
            return self.change(c.game, lambda at: game_ops.card_removed_op(at, actor=c.actor))
        self._open(c.game)  # a closed game says so before the card is looked at
        self._card_free(member, c.game)
        return self.change(c.game, lambda at: game_ops.card_op(at, member, actor=c.actor))

    # -- the bill: a manager's correction, while it runs or once issued ------------------
    # (What was put on the game's tab, an extra too, is voided on the tab: broker.till.tabs.)

    @handles(CorrectBill)
    def correct(self, c: CorrectBill) -> GameState:
        text = _reason(c.reason)
        return self._amend(c.game, lambda at: game_ops.correction_op(at, c.amount_cents, text, actor=c.actor))

    def _amend(self, game: int, make_op: MakeOp) -> GameState:
        """Append a correction to a running game, or to a stopped one's issued bill."""
        if self.h.games.by_id(game) is not None:
            return self.change(game, make_op)
        with self.h.store.session() as db:
            row = db.get(Game, game)
            if row is None:
                raise NotFound(N_("There is no game no. %(game)d."), game=game)
            state = replay_row(row, self.h.venue)
            op = make_op(max(self.h.clock(), state.last_at))
            try:
                new = game_ops.apply(state, op, self.h.venue)
            except game_ops.GameError as e:
                raise ServiceError.like(e) from None
            _append(db, game, op)
            row.total_cents = self.lights.bill_of(new).total_cents  # the stored total stays the bill's
            self._till.bill_corrected(db, game)  # refused when its tab's receipts would go wrong
        return new


def _append(db: Db, game: int, op: game_ops.Op) -> None:
    append_game_op(db, game, op.kind, op.data, op.actor, op.reason, op.at)


def _reason(reason: str) -> str:
    try:
        return game_ops.bill_reason(reason)
    except game_ops.GameError as e:
        raise ServiceError.like(e) from None
