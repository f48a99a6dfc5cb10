"""What staff do to a table itself rather than to a game on it: out of service, the light by hand,
a foosball check-out.

Out of service (cleaning, repair): no game starts on the table or moves to it, no foosball
check-in, and its light is kept off. The state is a row of `tables_out_of_service` (so it
survives a restart) mirrored in `OutOfServiceBook`, which the writer owns and readers see as
a snapshot, like the open games.

The light by hand is treated like the button on the table: switched on while no game wants it,
it raises "light without a game" (cause "dashboard") at once, as the node's report of a button
press would; switched off, it settles that alert. The command goes out after the commit. A table
a tournament's match is called to is not darkened by hand (the calls' rule, as for stopping its
game: broker.tournaments.calls.refuse_dark).

A foosball check-in by staff (a member who forgot the card) is here too: like a card tap, it
settles "foosball without a member", so the alert fires again the next time the table is played
without anyone checked in.

Every handler here runs on the hub's writer and audits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.errors import NotFound, ServiceError
from broker.core.events import SessionChanged
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.floor import alert_kinds
from broker.domain.people import membership
from broker.domain.refusals import N_
from broker.domain.tariffs import calendar_year
from broker.floor.events import CheckinChanged
from broker.people.member_views import CheckinView, checkin_view
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.foosball import checkin
from broker.storage.models import FoosballCheckin, Member, TableOutOfService
from devices.kinds import Kind

LIGHT_CAUSE = "dashboard"  # the cause the "light without a game" alert names for a light switched here
MAX_REASON = 200


@dataclass(frozen=True)
class OutOfService:
    """Why a table is out of service, since when and who said so."""

    reason: str
    since: datetime
    by: str


class OutOfServiceBook:
    """Tables out of service now; copy-on-write like broker.core.open_games."""

    def __init__(self) -> None:
        self._by_table: Mapping[str, OutOfService] = MappingProxyType({})

    def view(self) -> Mapping[str, OutOfService]:
        return self._by_table

    def get(self, table: str) -> OutOfService | None:
        return self._by_table.get(table)

    # -- the writer only ----------------------------------------------------------------

    def load(self, db: Db) -> None:
        rows = db.scalars(select(TableOutOfService)).all()
        self._by_table = MappingProxyType({r.table_id: OutOfService(r.reason, r.since, r.by) for r in rows})

    def put(self, table: str, oos: OutOfService | None) -> None:
        new = dict(self._by_table)
        if oos is None:
            new.pop(table, None)
        else:
            new[table] = oos
        self._by_table = MappingProxyType(new)


@command
class SetOutOfService(Command[OutOfService | None]):
    """Take a table out of service (refused while a game runs on it) or put it back (`out` False)."""

    table: str
    out: bool
    reason: str = ""


@command
class SwitchLight(Command[None]):
    """Staff switch a table's light from the dashboard: checked like the table's button."""

    table: str
    on: bool


@command
class CheckInFoosball(Command[CheckinView]):
    """Staff check a paid-up member in at a foosball table (the card forgotten)."""

    table: str
    member_id: int


@command
class CheckOutFoosball(Command[str]):
    """End a member's check-in at a foosball table; answers the member's name."""

    table: str
    member_id: int


class CalledTables(Protocol):
    """The tournaments' matches on the tables (broker.tournaments.calls), as the light sees them."""

    def refuse_dark(self, table: str) -> None:
        """Refuse darkening a table a match is called to (its light stays on while it is called)."""


class LightsOps(Protocol):
    """What these handlers need of the hub's lights (broker.floor.lights.Lights)."""

    def desired(self, table: str) -> bool | None: ...

    def send(self, table: str, on: bool, blink_s: int | None = None) -> None: ...


def refuse_out_of_service(book: OutOfServiceBook, table: str, name: str) -> None:
    """The one refusal every action that would use a table out of service gives."""
    oos = book.get(table)
    if oos is None:
        return
    if oos.reason:
        raise ServiceError(N_("%(table)s is out of service (%(reason)s); put it back in service first."), table=name, reason=oos.reason)
    raise ServiceError(N_("%(table)s is out of service; put it back in service first."), table=name)


class TableService(Part):
    def __init__(self, hall: HallState, lights: LightsOps, book: OutOfServiceBook) -> None:
        self.h = hall
        self.lights = lights
        self.book = book
        # Tables whose light staff switched on here while no game wanted it (the writer's own):
        # the node's "on" report (cause "command") then keeps the alert, as a button's would,
        # even when a late "off" from an earlier command settled it in between.
        self._by_hand: set[str] = set()
        self.matches: CalledTables | None = None  # set by the hub once the tournaments' part exists

    def lit_by_hand(self, table: str) -> bool:
        return table in self._by_hand

    def game_started(self, table: str) -> None:
        """A game wants the light now: it is no longer on by hand."""
        self._by_hand.discard(table)

    def _name(self, table: str) -> str:
        if table not in self.h.tables:
            raise NotFound(N_("There is no such table."))
        return self.h.tables[table].name

    @handles(SetOutOfService)
    def set_out_of_service(self, c: SetOutOfService) -> OutOfService | None:
        table, out, actor = c.table, c.out, c.actor
        name = self._name(table)
        now = self.h.clock()
        reason = " ".join(c.reason.split())[:MAX_REASON]
        current = self.book.get(table)
        if out:
            busy = self.h.games.get(table)
            if busy is not None:
                raise ServiceError(N_("%(table)s has game no. %(game)d running; stop or move it first."), table=name, game=busy.id)
        elif current is None:
            raise ServiceError(N_("%(table)s is in service already."), table=name)
        with self.h.store.session() as db:
            effects = after_commit(db)
            row = db.get(TableOutOfService, table)
            if out:
                if row is None:
                    row = TableOutOfService(table_id=table, reason=reason, since=now, by=actor)
                    db.add(row)
                else:  # already out: a new reason, the same since
                    row.reason = reason
                new = OutOfService(row.reason, row.since, row.by)
                record_audit(db, actor, "table.out_of_service", f"table:{table}", {"reason": reason}, reason=reason or None, at=now)
                # Nobody plays here now: a light left on by the button is being switched off.
                self.h.alerts.settle(db, alert_kinds.light_without_session_key(table), now)
            else:
                if row is not None:
                    db.delete(row)
                new = None
                record_audit(db, actor, "table.in_service", f"table:{table}", {"was": current.reason if current else ""}, at=now)
            if out:
                effects.add(lambda: self.lights.send(table, False))
            effects.add(lambda: self.h.listeners.notify(SessionChanged(table=table, action="service")))
        self.book.put(table, new)
        if out:
            self._by_hand.discard(table)
        return new

    @handles(SwitchLight)
    def switch_light(self, c: SwitchLight) -> None:
        table, on, actor = c.table, c.on, c.actor
        name = self._name(table)
        now = self.h.clock()
        if on:
            refuse_out_of_service(self.book, table, name)
        elif self.matches is not None:
            self.matches.refuse_dark(table)  # a called match's table stays lit (its game's own rule)
        want = self.lights.desired(table)
        game = self.h.games.get(table)
        with self.h.store.session() as db:
            record_audit(db, actor, "table.light", f"table:{table}", {"on": on, "session_id": game.id if game else None}, at=now)
            if want is not None:  # the cross-check, as for the table's button (broker.floor.ingest_rules)
                if on and not want:
                    self._by_hand.add(table)
                    self.h.alerts.raise_alert(db, alert_kinds.light_without_session(table, LIGHT_CAUSE))
                elif not on or want:
                    self.h.alerts.settle(db, alert_kinds.light_without_session_key(table), now)
            effects = after_commit(db)
            effects.add(lambda: self.lights.send(table, on))
            effects.add(lambda: self.h.listeners.notify(SessionChanged(table=table, action="light")))
        if not on:
            self._by_hand.discard(table)

    def _foosball(self, table: str, *, naming: bool = True) -> str:
        """The foosball table's name. The refusal names what was asked at a check-in (a card tapped
        at a table that is not foosball); a check-out only says there is no such table, as before."""
        if table not in self.h.tables or self.h.tables[table].kind is not Kind.FOOSBALL:
            if naming:
                raise NotFound(N_("There is no foosball table %(table)s."), table=table[:40])
            raise NotFound(N_("There is no such foosball table."))
        return self.h.tables[table].name

    @handles(CheckInFoosball)
    def foosball_checkin(self, c: CheckInFoosball) -> CheckinView:
        """On the writer: a check-in does not interleave with a goal being applied on this table."""
        table = c.table
        refuse_out_of_service(self.book, table, self._foosball(table))
        now = self.h.clock()
        with self.h.store.session() as db:
            member = db.get(Member, c.member_id)
            if member is None:
                raise NotFound(N_("There is no member no. %(member_id)d: search by name to find the right one."), member_id=c.member_id)
            year = calendar_year(now, self.h.venue)
            verdict = membership.eligibility(member.active, [f.year for f in member.fees], year)
            why = membership.refusal(verdict, member.name, year, foosball=True)
            if why is not None:
                raise ServiceError.like(why)
            row = checkin(db, table, member.id, now, "staff")
            self.h.alerts.settle(db, alert_kinds.foosball_no_member_key(table), now)
            record_audit(db, c.actor, "foosball.checkin", f"table:{table}", {"member_id": member.id, "checkin_id": row.id}, at=now)
            name = member.name
            view = checkin_view(row, name, self.h.venue)
            after_commit(db).add(lambda: self.h.listeners.notify(CheckinChanged(table=table, member=name)))
        return view

    @handles(CheckOutFoosball)
    def foosball_checkout(self, c: CheckOutFoosball) -> str:
        """End a member's check-in at a foosball table (the card forgotten, going home): their name."""
        table, member_id, actor = c.table, c.member_id, c.actor
        name = self._foosball(table, naming=False)
        now = self.h.clock()
        with self.h.store.session() as db:
            member = db.get(Member, member_id)
            if member is None:
                raise ServiceError(N_("There is no such member."))
            rows = db.scalars(
                select(FoosballCheckin).where(
                    FoosballCheckin.table_id == table, FoosballCheckin.member_id == member_id, FoosballCheckin.ended_at.is_(None)
                )
            ).all()
            if not rows:
                raise ServiceError(N_("%(member)s is not checked in at %(table)s."), member=member.name, table=name)
            for row in rows:
                row.ended_at = now
            record_audit(
                db, actor, "foosball.checkout", f"table:{table}", {"member_id": member_id, "checkin_ids": [r.id for r in rows]}, at=now
            )
            who = member.name
            after_commit(db).add(lambda: self.h.listeners.notify(CheckinChanged(table=table, member=who, action="checkout")))
        return who
