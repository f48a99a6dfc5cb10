"""What staff do to a table itself rather than to a game on it: out of service, the light by hand,
a foosball check-out.

Out of service (cleaning, repair): no game starts on the table or moves to it, no foosball
check-in, and its light is kept off. The state is a row of `tables_out_of_service` (so it
survives a restart) mirrored in `OutOfServiceBook`, which the writer owns and readers see as
a snapshot, like the open sessions.

The light by hand is treated like the button on the table: switched on while no game wants it,
it raises "light without a game" (cause "dashboard") at once, as the node's report of a button
press would; switched off, it settles that alert. The command goes out after the commit.

Every method here runs on the hub's writer (the hub's public wrappers submit them) and audits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.domain import alert_kinds
from broker.domain.refusals import N_, Refusal
from broker.hall.effects import AfterCommit
from broker.hall.ports import HallState
from broker.storage.audit import record_audit
from broker.storage.models import FoosballCheckin, Member, TableOutOfService

LIGHT_CAUSE = "dashboard"  # the cause the "light without a game" alert names for a light switched here
MAX_REASON = 200


@dataclass(frozen=True)
class OutOfService:
    """Why a table is out of service, since when and who said so."""

    reason: str
    since: datetime
    by: str


class OutOfServiceBook:
    """Tables out of service now; copy-on-write like broker.hall.open_sessions."""

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


class TableOps(Protocol):
    """What these operations need of the hub (it satisfies this itself)."""

    def desired_light(self, table: str) -> bool | None: ...

    def send_light(self, table: str, on: bool, blink_s: int | None = None) -> None: ...

    def notify(self, topic: str, data: dict) -> None: ...


def refuse_out_of_service(book: OutOfServiceBook, table: str, name: str, error: type[Refusal]) -> None:
    """The one refusal every action that would use a table out of service gives (`error`: the hub's ServiceError)."""
    oos = book.get(table)
    if oos is None:
        return
    if oos.reason:
        raise error(N_("%(table)s is out of service (%(reason)s); put it back in service first."), table=name, reason=oos.reason)
    raise error(N_("%(table)s is out of service; put it back in service first."), table=name)


class TableService:
    def __init__(self, hall: HallState, hub: TableOps, book: OutOfServiceBook, error: type[Refusal]) -> None:
        self.h = hall
        self.hub = hub
        self.book = book
        self.error = error  # the hub's ServiceError: pages and the API know it (no import circle)
        # Tables whose light staff switched on here while no game wanted it (the writer's own):
        # the node's "on" report (cause "command") then keeps the alert, as a button's would,
        # even when a late "off" from an earlier command settled it in between.
        self._by_hand: set[str] = set()

    def lit_by_hand(self, table: str) -> bool:
        return table in self._by_hand

    def game_started(self, table: str) -> None:
        """A game wants the light now: it is no longer on by hand."""
        self._by_hand.discard(table)

    def _name(self, table: str) -> str:
        return self.h.tables[table].name

    def set_out_of_service(self, table: str, out: bool, reason: str, actor: str) -> OutOfService | None:
        now = self.h.clock()
        name = self._name(table)
        reason = " ".join(reason.split())[:MAX_REASON]
        current = self.book.get(table)
        if out:
            busy = self.h.sessions.get(table)
            if busy is not None:
                raise self.error(N_("%(table)s has game no. %(session)d running; stop or move it first."), table=name, session=busy.id)
        elif current is None:
            raise self.error(N_("%(table)s is in service already."), table=name)
        after = AfterCommit()
        with self.h.store.session() as db:
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
        self.book.put(table, new)
        if out:
            self._by_hand.discard(table)
            after.add(lambda: self.hub.send_light(table, False))
        after.add(lambda: self.hub.notify("session", {"table": table, "action": "service"}))
        after.run()
        return new

    def switch_light(self, table: str, on: bool, actor: str) -> None:
        now = self.h.clock()
        name = self._name(table)
        if on:
            refuse_out_of_service(self.book, table, name, self.error)
        want = self.hub.desired_light(table)
        session = self.h.sessions.get(table)
        after = AfterCommit()
        with self.h.store.session() as db:
            record_audit(db, actor, "table.light", f"table:{table}", {"on": on, "session_id": session.id if session else None}, at=now)
            if want is not None:  # the cross-check, as for the table's button (broker.hall.ingest_rules)
                if on and not want:
                    self._by_hand.add(table)
                    self.h.alerts.raise_alert(db, alert_kinds.light_without_session(table, LIGHT_CAUSE), after)
                elif not on or want:
                    self.h.alerts.settle(db, alert_kinds.light_without_session_key(table), now)
        if not on:
            self._by_hand.discard(table)
        after.add(lambda: self.hub.send_light(table, on))
        after.add(lambda: self.hub.notify("session", {"table": table, "action": "light"}))
        after.run()

    def foosball_checkout(self, table: str, member_id: int, actor: str) -> str:
        """End a member's check-in at a foosball table (the card forgotten, going home): their name."""
        now = self.h.clock()
        name = self._name(table)
        with self.h.store.session() as db:
            member = db.get(Member, member_id)
            if member is None:
                raise self.error(N_("There is no such member."))
            rows = db.scalars(
                select(FoosballCheckin).where(
                    FoosballCheckin.table_id == table, FoosballCheckin.member_id == member_id, FoosballCheckin.ended_at.is_(None)
                )
            ).all()
            if not rows:
                raise self.error(N_("%(member)s is not checked in at %(table)s."), member=member.name, table=name)
            for c in rows:
                c.ended_at = now
            record_audit(
                db, actor, "foosball.checkout", f"table:{table}", {"member_id": member_id, "checkin_ids": [c.id for c in rows]}, at=now
            )
            who = member.name
        self.hub.notify("checkin", {"table": table, "member": who, "action": "checkout"})
        return who
