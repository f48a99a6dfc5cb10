"""The waiting list: walk-in parties waiting for a table of a kind, offered one as it frees.

Its commands have their handlers here, run by the hub's writer. The watchdog's round (`round`)
does what time does: an offer nobody took within the venue's minutes passes to the next party
(the party that let it lapse keeps its place, is offered that table again when nobody else waits
for it, and leaves the list after the venue's number of missed offers; a table staff said the party
does not want, "Nechcú", is not offered to it again); an offer whose table was taken meanwhile (a walk-in's game, a block, the table
out of service) is withdrawn, the party waiting again in its place (and `TakeOffer` checks it
too, so nobody is seated on a table taken under the offer); an offer holds its table
(`rules.offer_span`) like a booking, so no booking is taken over it;
and a table that is free (no game, in service, nothing booked or blocked on it for a walk-in's
usual length) is offered to the first party, in the order they came, whose kind it is. "Berú"
(`TakeOffer`) starts the game on the offered table through the games' own handler, inline.

An offer is said on the floor ("Pool 4 voľný → Kováč, 2") and, through the push notifications
(broker.notify.notifications), to the staff's devices and, when the party agreed and left a
number, by SMS to that number only; the number never reaches the log or a staff push.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.bookings.book import BookingBook, table_changed
from broker.bookings.bookings import BookingMissing, form_key
from broker.bookings.events import WaitingListChanged
from broker.core.commands import Command, command, handles
from broker.core.errors import ServiceError
from broker.core.part import Part, Round
from broker.core.ports import HallState
from broker.domain import bookings as rules
from broker.domain.bookings import BookingRefused
from broker.domain.refusals import N_, table_name
from broker.domain.venue import Bookings as BookingSettings
from broker.floor.games import StartGame
from broker.floor.table_service import OutOfServiceBook
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import WaitingParty

log = logging.getLogger("lavos.hub.waiting")

Execute = Callable[[Command[Any]], Any]


@dataclass(frozen=True)
class OfferMade:
    """What is said when a table is offered (no phone number: the SMS is looked up by party)."""

    party: int
    name: str
    size: int
    table: str
    table_name: str
    until: datetime
    sms: bool  # the party agreed to an SMS and left a number


@command
class JoinWaitingList(Command[int]):
    """A walk-in party waits for a table of `kind` (name, size; a phone number and consent to an SMS
    are optional); answers its id. A repeated `form_key` answers the party the first submit added."""

    name: str
    party_size: int
    kind: str = "pool"
    phone: str | None = None
    sms_ok: bool = False
    note: str = ""
    form_key: str | None = None


@command
class OfferTable(Command[None]):
    """Offer a free table to a waiting party (the watchdog's round does it for the first fitting one)."""

    party: int
    table: str


@command
class TakeOffer(Command[int]):
    """The party takes the table offered: its game starts there (a member's card and rate if given); answers the game's number.
    Refused, the offer withdrawn, when the table was taken meanwhile (a game, a block, out of service)."""

    party: int
    member_id: int | None = None
    card_uid: str | None = None


@command
class DeclineOffer(Command[None]):
    """The offer passes to the next party; `expired` when nobody took it in time (a missed offer)."""

    party: int
    expired: bool = False


@command
class LeaveWaitingList(Command[None]):
    """The party no longer waits (they left, or found a table themselves)."""

    party: int


class WaitingList(Part):
    def __init__(self, hall: HallState, book: BookingBook, out_of_service: OutOfServiceBook, execute: Execute) -> None:
        self.h = hall
        self.book = book
        self._oos = out_of_service
        self._execute = execute
        self.announce: Callable[[OfferMade], None] | None = None  # the push notifications (the hub sets it)

    @property
    def settings(self) -> BookingSettings:
        return self.h.venue.bookings

    def _row(self, db: Db, party: int, *states: str) -> WaitingParty:
        row = db.get(WaitingParty, party)
        if row is None:
            raise BookingMissing(N_("There is no such party on the waiting list."))
        if states and row.state not in states:
            if row.state == "waiting":
                raise BookingRefused(N_("%(name)s holds no offer; offer them a table first."), name=row.name)
            raise BookingRefused(N_("%(name)s is no longer on the waiting list."), name=row.name)
        return row

    def _told(self, db: Db, *tables: str | None) -> None:
        effects = after_commit(db)
        for table in {t for t in tables if t}:
            effects.add(table_changed(self.h, table, "offer"))
        effects.add(lambda: self.h.listeners.notify(WaitingListChanged()))

    # -- the commands -------------------------------------------------------------------------

    @handles(JoinWaitingList)
    def join(self, c: JoinWaitingList) -> int:
        name = rules.check_name(c.name)
        size = rules.check_party(c.party_size, self.settings.max_party)
        kind = rules.check_kind(c.kind)
        phone = rules.normalise_phone(c.phone)
        if c.sms_ok and phone is None:
            raise BookingRefused(N_("An SMS needs the guest's phone number."))
        key = form_key(c.form_key)
        now = self.h.clock()
        with self.h.store.session() as db:
            if key is not None and (again := db.scalar(select(WaitingParty.id).where(WaitingParty.form_key == key))) is not None:
                return again
            row = WaitingParty(
                name=name,
                party_size=size,
                phone=phone,
                sms_ok=bool(c.sms_ok and phone),
                kind=kind,
                note=rules.clean_text(c.note, rules.MAX_NOTE),
                state="waiting",
                joined_at=now,
                joined_by=c.actor,
                misses=0,
                form_key=key,
            )
            db.add(row)
            db.flush()
            record_audit(db, c.actor, "waiting.join", f"party:{row.id}", {"size": size, "kind": kind, "phone": phone is not None}, at=now)
            self._told(db)
            party = row.id
        self.book.put_party(row)
        return party

    def _free_now(self, table: str, since: datetime) -> bool:
        """Can a walk-in party play `table` now, for a walk-in's usual length from `since` (now, for a
        new offer; an offer's own time, for one made already: what it holds, rules.offer_span)?"""
        spec = self.h.tables.get(table)
        if spec is None or not rules.bookable(spec) or self.h.games.get(table) is not None or table in self._oos.view():
            return False
        return not rules.clashes(table, rules.offer_span(since, self.settings.walk_in_min), self.book.claims())

    def _stands(self, table: str, offered_at: datetime | None, now: datetime) -> bool:
        """Does an offer of `table` still stand: nothing has taken the table meanwhile (a game, a
        block, the table out of service; a booking is refused over an offer, Bookings.claims_during)?"""
        return self._free_now(table, offered_at or now)

    @handles(OfferTable)
    def offer(self, c: OfferTable) -> None:
        spec = self.h.tables.get(c.table)
        if spec is None:
            raise BookingMissing(N_("There is no table %(table)s."), table=c.table[:40])
        now = self.h.clock()
        if not self._free_now(c.table, now):
            raise BookingRefused(N_("%(table)s is not free for a walk-in now."), table=table_name(spec))
        if any(p.offered_table == c.table and p.id != c.party for p in self.book.waiting()):
            raise BookingRefused(N_("%(table)s is offered to another party already."), table=table_name(spec))
        until = now + timedelta(minutes=self.settings.offer_min)
        with self.h.store.session() as db:
            row = self._row(db, c.party, "waiting", "offered")
            if not rules.fits(row.kind, spec):
                raise BookingRefused(N_("%(name)s waits for another kind of table."), name=row.name)
            before = row.offered_table
            row.state, row.offered_table, row.offered_at, row.offer_until = "offered", c.table, now, until
            record_audit(db, c.actor, "waiting.offer", f"party:{row.id}", {"table": c.table, "until": until.isoformat()}, at=now)
            self._told(db, c.table, before)
            made = OfferMade(row.id, row.name, row.party_size, c.table, spec.name, until, bool(row.sms_ok and row.phone))
            if self.announce is not None:
                announce = self.announce
                after_commit(db).add(lambda: announce(made))
        self.book.put_party(row)
        log.info("waiting party %d offered %s", made.party, c.table)

    @handles(TakeOffer)
    def take(self, c: TakeOffer) -> int:
        now = self.h.clock()
        with self.h.store.reader() as db:
            row = self._row(db, c.party, "offered")
            table, offered_at, name = row.offered_table, row.offered_at, row.name
        assert table is not None
        if not self._stands(table, offered_at, now):  # the round had not seen it yet: withdrawn now
            self._withdraw(c.party, now)
            spec = self.h.tables.get(table)
            raise BookingRefused(
                N_("%(table)s was taken meanwhile; the offer is withdrawn and %(name)s waits again in their place."),
                table=table_name(spec) if spec else table,
                name=name,
            )
        game = int(self._execute(StartGame(table=table, member_id=c.member_id, card_uid=c.card_uid, actor=c.actor)))
        with self.h.store.session() as db:
            row = self._row(db, c.party)
            row.state, row.game_id, row.left_at = "seated", game, now
            row.offered_table = row.offered_at = row.offer_until = None
            record_audit(db, c.actor, "waiting.seated", f"party:{row.id}", {"table": table, "game": game}, at=now)
            self._told(db, table)
        self.book.put_party(row)
        return game

    @handles(DeclineOffer)
    def decline(self, c: DeclineOffer) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            row = self._row(db, c.party, "offered")
            table = row.offered_table
            row.state = "waiting"
            if c.expired:  # nobody answered: offered again when no other party waits for it (rules.next_party)
                row.lapsed_table = table
            else:  # staff: they do not want it
                row.passed_table = table
            row.offered_table = row.offered_at = row.offer_until = None
            if c.expired:
                row.misses += 1
                if row.misses >= self.settings.offer_misses:
                    row.state, row.left_at, row.left_reason = "left", now, "missed"
            record_audit(
                db, c.actor, "waiting.pass", f"party:{row.id}", {"table": table, "expired": c.expired, "misses": row.misses}, at=now
            )
            self._told(db, table)
        self.book.put_party(row)

    @handles(LeaveWaitingList)
    def leave(self, c: LeaveWaitingList) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            row = self._row(db, c.party, "waiting", "offered")
            table = row.offered_table
            row.state, row.left_at, row.left_reason = "left", now, "left"
            row.offered_table = row.offered_at = row.offer_until = None
            record_audit(db, c.actor, "waiting.leave", f"party:{row.id}", {}, at=now)
            self._told(db, table)
        self.book.put_party(row)

    def _withdraw(self, party: int, now: datetime) -> None:
        """The offered table was taken meanwhile: the party is waiting again, in its place, no miss."""
        with self.h.store.session() as db:
            row = self._row(db, party, "offered")
            table = row.offered_table
            row.state = "waiting"
            row.offered_table = row.offered_at = row.offer_until = None
            record_audit(db, "system", "waiting.withdrawn", f"party:{row.id}", {"table": table}, at=now)
            self._told(db, table)
        self.book.put_party(row)

    # -- the watchdog's round (on the writer) ------------------------------------------------------

    def rounds(self) -> tuple[Round, ...]:
        return (self.round,)

    def round(self, now: datetime) -> None:
        """Expired offers pass on, offers of tables taken meanwhile are withdrawn, free tables are offered."""
        parties = self.book.waiting()
        if not parties:
            return
        for p in parties:
            if p.offered_table is None:
                continue
            if p.offer_until is not None and p.offer_until <= now:
                self._system(DeclineOffer(party=p.id, expired=True, actor="system"))
            elif not self._stands(p.offered_table, p.offered_at, now):
                self._withdraw(p.id, now)
        offered = {p.offered_table for p in self.book.waiting() if p.offered_table}
        waiting = [p.rule() for p in self.book.waiting() if p.offered_table is None]
        for spec in self.h.venue.tables:  # each free table to the party the rule names (rules.next_party)
            if not waiting:
                break
            if spec.id in offered or not self._free_now(spec.id, now):
                continue
            party = rules.next_party(waiting, spec)
            if party is not None:
                waiting.remove(party)
                self._system(OfferTable(party=party.id, table=spec.id, actor="system"))

    def _system(self, cmd: Command[None]) -> None:
        """A command of the round's own; a refusal is logged and the round goes on with the rest."""
        try:
            self._execute(cmd)
        except ServiceError as e:
            log.warning("waiting list: %s refused: %s", type(cmd).__name__, e)
