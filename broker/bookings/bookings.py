"""Table bookings and blocks: their commands and handlers, run by the hub's one writer.

A booking holds one table for [start, end) (broker.domain.bookings has the rules). Before one is
stored the writer checks, in its transaction, that nothing holds the table then: another booking,
a block, a game expected to run on, a table out of service today. On PostgreSQL the database
checks it again (an exclusion constraint, migration 0009), so even a second writer could not
store an overlap; on SQLite the one writer's check is the rule. A refusal names the free tables
of the same kind for that time.

"Prišli" (`GuestsArrived`) starts the game on the booked table through the games' own handler
(`StartGame`, inline on the writer), with the member's card and rate when the booking names a
member; when the table is still being played, the booking is `arrived` and the party is seated
once it frees. A booking nobody came for becomes a no-show after the venue's grace period (the
watchdog's round: `round`), which releases the table for the waiting list
(broker.bookings.waiting_list). After too many no-shows a person's next booking needs a deposit: a
line on a tab of its own, paid at the till like any tab, which the manager keeps or gives back
(`SettleDeposit`: a reversal of its payment), on the Z report as "booking deposits".

Blocks (a tournament, training, a private party in a room, maintenance) are the manager's; a
block over booked tables moves each booking to a free table of its kind, or lists it for staff
to call the guest.

A phone number is personal data: it is stored on the booking for staff, never written to the
log, the audit log, a metric or a push; `round` anonymises bookings older than the venue's
retention.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from hashlib import sha256
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as Db

from broker.accounts import links
from broker.bookings.book import BookingBook, table_changed
from broker.bookings.events import BookingChanged
from broker.core.commands import Command, command, handles
from broker.core.errors import ServiceError
from broker.core.part import Part, Round
from broker.core.ports import HallState
from broker.domain import bookings as rules
from broker.domain.bookings import ACTIVE, BookingRefused, Claim, Span
from broker.domain.euros import euros
from broker.domain.refusals import N_, Name, table_name
from broker.domain.schedule import business_day, business_day_bounds
from broker.domain.venue import Bookings as BookingSettings
from broker.floor.games import StartGame
from broker.floor.table_service import OutOfServiceBook
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import Booking, BookingBlock, CalendarFeed, Member, Payment, Tab, TabItem, WaitingParty
from broker.till.business_days import open_day
from broker.till.payments import ReversePayment

log = logging.getLogger("lavos.hub.bookings")

DEPOSIT_NEEDED = N_("%(name)s did not come %(count)d times: ask for a deposit of %(amount)s.")  # the form then asks for it
DEPOSIT_CATEGORY = "deposit"  # the Z report's category of deposits (dashboard.web.tab_parts)
MAX_FORM_KEY = 64
MAX_BLOCK_DAYS = 14
ANONYMISE_EVERY = timedelta(hours=1)
Execute = Callable[[Command[Any]], Any]


class BookingMissing(BookingRefused):
    """No such booking or block (the hub's NotFound)."""


# -- the commands ------------------------------------------------------------------------------


@command
class BookTable(Command[int]):
    """Book `table` (or the first free table of `kind`) for [start, end) for a party; answers the
    booking's id. Refused for a start already past (guests who are here are a walk-in), a kind the
    table is not, outside the opening hours, over another booking, a block or an offer to a waiting
    party (naming the free tables of the kind), and without a deposit after the venue's number of no-shows."""

    start: datetime
    end: datetime
    party_size: int
    name: str
    table: str | None = None
    kind: str | None = None
    phone: str | None = None
    note: str = ""
    member_id: int | None = None
    deposit_cents: int | None = None
    form_key: str | None = None


@command
class ConfirmBooking(Command[None]):
    """A held booking is confirmed (its deposit, if it has one, is paid)."""

    booking: int


@command
class CancelBooking(Command[None]):
    """Cancel a booking; the table is free again for that time (an unpaid deposit is voided)."""

    booking: int
    reason: str = ""


@command
class MoveBooking(Command[None]):
    """Move a booking to another table for the same time (checked like a new booking)."""

    booking: int
    to_table: str


@command
class GuestsArrived(Command[int | None]):
    """ "Prišli": start the booking's game on its table (or on `to_table`, a free one), with the
    member's card and rate when it names a member; answers the game's number. When the table is
    still played, the booking is marked arrived (answers None) and seated once it frees."""

    booking: int
    to_table: str | None = None
    member_id: int | None = None
    card_uid: str | None = None


@command
class MarkNoShow(Command[None]):
    """Nobody came: the booking is a no-show and its table is released (the watchdog's round does
    it after the venue's grace period; staff may once the booking has started)."""

    booking: int


@command
class SettleDeposit(Command[None]):
    """The manager keeps a booking's paid deposit, or gives it back (its payment reversed)."""

    booking: int
    keep: bool
    reason: str = ""


@command
class AddBlock(Command["BlockAdded"]):
    """Hold tables (a list, or every bookable table of a room) for a tournament, training, a private
    party or maintenance; bookings there are moved to free tables of their kind, or listed to call."""

    kind: str
    start: datetime
    end: datetime
    label: str = ""
    tables: tuple[str, ...] = ()
    room: str | None = None


@command
class RemoveBlock(Command[None]):
    """Remove a block; its tables are bookable again."""

    block: int


@command
class NewCalendarFeed(Command[str]):
    """A new private iCal link for `username` (answers its token, shown once); an older one stops working."""

    username: str


@command
class RevokeCalendarFeed(Command[None]):
    """`username`'s iCal link stops working."""

    username: str


@dataclass(frozen=True)
class BlockAdded:
    """A new block: its id, the bookings moved (id, from, to) and those to call (no table was free)."""

    block: int
    moved: tuple[tuple[int, str, str], ...]
    to_call: tuple[int, ...]


def feed_hash(token: str) -> str:
    return sha256(token.encode()).hexdigest()


# -- the handlers ------------------------------------------------------------------------------


class Bookings(Part):
    as_not_found = (BookingMissing,)
    as_service_error = (BookingRefused,)

    def __init__(self, hall: HallState, book: BookingBook, out_of_service: OutOfServiceBook, execute: Execute) -> None:
        self.h = hall
        self.book = book
        self._oos = out_of_service
        self._execute = execute  # the hub's: StartGame and ReversePayment run inline on the writer
        self._last_anonymised: datetime | None = None

    @property
    def settings(self) -> BookingSettings:
        return self.h.venue.bookings

    # -- what holds a table --------------------------------------------------------------------

    def game_claims(self, now: datetime) -> list[Claim]:
        """The games being played, each holding its table until it is expected to be free."""
        out = []
        for table, g in self.h.games.view().items():
            s = g.state
            free = rules.expected_free(now, started_at=s.started_at, prepaid_until=s.prepaid_until, walk_in_min=self.settings.walk_in_min)
            if free > now:
                out.append(Claim(table, Span(now, free), "game"))
        return out

    def claims_during(self, db: Db, span: Span, now: datetime) -> list[Claim]:
        """What holds any table during `span`, from the database (the truth the writer checks): the
        bookings, blocks and offers to waiting parties stored, the games running, the tables out of service."""
        rows = db.execute(
            select(Booking.id, Booking.table_id, Booking.start_at, Booking.end_at).where(
                Booking.state.in_(ACTIVE), Booking.ended_at.is_(None), Booking.start_at < span.end, Booking.end_at > span.start
            )
        ).all()
        claims = [Claim(r.table_id, Span(r.start_at, r.end_at), "booking", r.id) for r in rows]
        for k in db.scalars(
            select(BookingBlock).where(
                BookingBlock.removed_at.is_(None), BookingBlock.start_at < span.end, BookingBlock.end_at > span.start
            )
        ):
            claims += [Claim(t, Span(k.start_at, k.end_at), "block", k.id) for t in k.tables]
        claims += [c for c in self.game_claims(now) if c.span.overlaps(span)]
        for party, table, offered_at in db.execute(
            select(WaitingParty.id, WaitingParty.offered_table, WaitingParty.offered_at).where(WaitingParty.state == "offered")
        ):
            if table is None or offered_at is None:
                continue
            held = rules.offer_span(offered_at, self.settings.walk_in_min)  # the table is held for the party
            if held.overlaps(span):
                claims.append(Claim(table, held, "offer", party))
        today_ends = business_day_bounds(business_day(now, self.h.venue), self.h.venue)[1]
        if span.start < today_ends:  # a table out of service is out for the rest of today
            claims += [Claim(t, Span(now, today_ends), "service") for t in self._oos.view() if now < today_ends]
        return claims

    def _spec(self, table: str) -> Any:
        spec = self.h.tables.get(table)
        if spec is None:
            raise BookingMissing(N_("There is no table %(table)s."), table=table[:40])
        if not rules.bookable(spec):
            raise BookingRefused(N_("%(table)s is not booked; only billiard tables are."), table=table_name(spec))
        return spec

    def _hhmm(self, at: datetime) -> str:
        return at.astimezone(self.h.venue.tz).strftime("%H:%M")

    def _refuse_clash(self, spec: Any, kind: str, span: Span, clash: Claim, claims: list[Claim], ignore: int | None = None) -> None:
        free = rules.free_tables(self.h.venue.tables, kind, span, claims, exclude=[spec.id], ignore=ignore)
        params: dict[str, object] = {"table": table_name(spec), "start": self._hhmm(clash.span.start), "end": self._hhmm(clash.span.end)}
        what = _CLASH[(clash.what, bool(free))]
        if free:
            params["free"] = rules.names(free)
        raise BookingRefused(what, **params)

    def takes_span(self, span: Span, now: datetime) -> bool:
        """Whether a booking for `span` is taken as to its time (`_check_span`: not past, not too far
        ahead, in the opening hours), whatever holds the table then: the day view's cells."""
        try:
            self._check_span(span, now)
        except BookingRefused:
            return False
        return True

    def _check_span(self, span: Span, now: datetime) -> None:
        if rules.start_passed(span.start, now):  # refused rather than a no-show at once (the rule's docstring)
            raise BookingRefused(
                N_(
                    "%(time)s has passed: guests who are here already are a walk-in; start their game on a free table"
                    " (or put them on the waiting list). A booking starts now or later."
                ),
                time=self._hhmm(span.start),
            )
        if span.start > now + timedelta(days=self.settings.max_days_ahead):
            raise BookingRefused(N_("Bookings are taken up to %(days)d days ahead."), days=self.settings.max_days_ahead)
        if not rules.within_hours(self.h.venue, span):
            raise BookingRefused(
                N_("The hall is open %(hours)s; a booking must lie within the opening hours."), hours=rules.hours_text(self.h.venue, span)
            )

    # -- booking -----------------------------------------------------------------------------

    @handles(BookTable)
    def book_table(self, c: BookTable) -> int:
        try:
            span = Span(c.start, c.end)
        except ValueError:
            raise BookingRefused(N_("A booking ends after it starts.")) from None
        size = rules.check_party(c.party_size, self.settings.max_party)
        phone = rules.normalise_phone(c.phone)
        note = rules.clean_text(c.note, rules.MAX_NOTE)
        key = form_key(c.form_key)
        if c.table is None and c.kind is None:
            raise BookingRefused(N_("Choose a table, or the kind of table."))
        kind = rules.check_kind(c.kind) if c.kind else None
        now = self.h.clock()
        self._check_span(span, now)
        with self.h.store.session() as db:
            if key is not None and (again := db.scalar(select(Booking.id).where(Booking.form_key == key))) is not None:
                return again
            claims = self.claims_during(db, span, now)
            if c.table is not None:
                spec = self._spec(c.table)
                kind = rules.booked_kind(spec, kind)
                if clash := rules.clashes(spec.id, span, claims):  # a table out of service is a claim for today
                    self._refuse_clash(spec, kind, span, clash[0], claims)
            else:
                assert kind is not None
                free = rules.free_tables(self.h.venue.tables, kind, span, claims)
                if not free:
                    raise BookingRefused(
                        N_("No table of that kind is free %(start)s–%(end)s."), start=self._hhmm(span.start), end=self._hhmm(span.end)
                    )
                spec = free[0]
            name, member_id = self._who(db, c.name, c.member_id)
            deposit = self._deposit(db, name, phone, member_id, c.deposit_cents)
            row = Booking(
                table_id=spec.id,
                kind=kind,
                start_at=span.start,
                end_at=span.end,
                party_size=size,
                name=name,
                phone=phone,
                note=note,
                member_id=member_id,
                state="held" if deposit else "confirmed",
                created_at=now,
                created_by=c.actor,
                changed_at=now,
                deposit_cents=deposit,
                form_key=key,
            )
            db.add(row)
            try:
                db.flush()  # PostgreSQL's exclusion constraint answers here
            except IntegrityError:
                raise BookingRefused(
                    N_("%(table)s was just booked for that time by someone else; try again."), table=table_name(spec)
                ) from None
            if deposit:
                row.deposit_tab_id = self._deposit_tab(db, row, c.actor, now)
            record_audit(db, c.actor, "booking.create", f"booking:{row.id}", _doc(row), at=now)
            self._told(db, row)
            booking_id = row.id
        self.book.put_booking(row)
        return booking_id

    def _who(self, db: Db, name: str, member_id: int | None) -> tuple[str, int | None]:
        if member_id is None:
            return rules.check_name(name), None
        member = db.get(Member, member_id)
        if member is None:
            raise BookingMissing(N_("There is no member no. %(member_id)d: search by name to find the right one."), member_id=member_id)
        return rules.check_name(name or member.name), member.id

    def no_shows(self, db: Db, phone: str | None, member_id: int | None) -> int:
        """How many times this person (by phone number or member) did not come."""
        if phone is None and member_id is None:
            return 0
        who = (Booking.phone == phone) if phone is not None else (Booking.member_id == member_id)
        if phone is not None and member_id is not None:
            who = who | (Booking.member_id == member_id)
        return int(db.scalar(select(func.count()).select_from(Booking).where(Booking.state == "no_show", who)) or 0)

    def _deposit(self, db: Db, name: str, phone: str | None, member_id: int | None, given: int | None) -> int:
        if given is not None and (isinstance(given, bool) or not isinstance(given, int) or not 0 <= given <= 100_000):
            raise BookingRefused(N_("A deposit is from 0,00 € to %(max)s."), max=euros(100_000))
        count = self.no_shows(db, phone, member_id)
        needed = rules.deposit_needed(count, self.settings.no_show_limit) and self.settings.deposit_cents > 0
        if needed and not given:
            raise BookingRefused(
                DEPOSIT_NEEDED,
                name=name,
                count=count,
                amount=euros(self.settings.deposit_cents),
            )
        return given or 0

    def _deposit_tab(self, db: Db, row: Booking, actor: str, now: datetime) -> int:
        """The deposit as a tab of its own (paid at the till like any tab; VAT 0: a deposit is not a sale yet)."""
        local = row.start_at.astimezone(self.h.venue.tz)
        tab = Tab(
            label=f"Záloha {row.name} {local:%d.%m. %H:%M}"[:60],
            opened_at=now,
            opened_by=actor,
            business_day=open_day(db, self.h.venue, now),  # after the close-out: the next day's (as every tab)
            holds=DEPOSIT_CATEGORY,  # the deposit only: nothing else goes on it, it merges with no tab (the till)
        )
        db.add(tab)
        db.flush()
        db.add(
            TabItem(
                tab_id=tab.id,
                product_id=None,
                name="Záloha na rezerváciu",
                name_en="Booking deposit",
                category=DEPOSIT_CATEGORY,
                unit_cents=row.deposit_cents,
                vat_percent=0,
                quantity=1,
                added_at=now,
                added_by=actor,
            )
        )
        record_audit(db, actor, "tab.open", f"tab:{tab.id}", {"booking": row.id, "deposit_cents": row.deposit_cents}, at=now)
        return tab.id

    def _told(self, db: Db, row: Booking, *tables: str) -> None:
        """The floor (the booked table's card) and the bookings pages are told after the commit."""
        effects = after_commit(db)
        for table in {row.table_id, *tables}:
            effects.add(table_changed(self.h, table, "booking"))
        booking_id = row.id
        effects.add(lambda: self.h.listeners.notify(BookingChanged(booking=booking_id)))

    def _row(self, db: Db, booking: int, *states: str) -> Booking:
        row = db.get(Booking, booking)
        if row is None:
            raise BookingMissing(N_("There is no such booking."))
        if states and row.state not in states:
            raise BookingRefused(N_("The booking of %(name)s is %(state)s already."), name=row.name, state=_STATE_WORDS[row.state])
        return row

    def _change(self, db: Db, row: Booking, state: str, actor: str, now: datetime, reason: str | None = None) -> None:
        before = row.state
        row.state, row.changed_at = state, now
        if reason is not None:
            row.reason = reason
        record_audit(db, actor, f"booking.{state}", f"booking:{row.id}", {"from": before}, reason=reason, at=now)
        self._told(db, row)

    @handles(ConfirmBooking)
    def confirm(self, c: ConfirmBooking) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            row = self._row(db, c.booking, "held")
            if row.deposit_cents and _paid(db, row.deposit_tab_id) < row.deposit_cents:
                raise BookingRefused(
                    N_("The deposit of %(name)s (%(amount)s) is not paid yet."), name=row.name, amount=euros(row.deposit_cents)
                )
            self._change(db, row, "confirmed", c.actor, now)
        self.book.put_booking(row)

    @handles(CancelBooking)
    def cancel(self, c: CancelBooking) -> None:
        now = self.h.clock()
        reason = rules.clean_text(c.reason, rules.MAX_NOTE) or None
        with self.h.store.session() as db:
            row = self._row(db, c.booking, "held", "confirmed", "arrived")
            if row.deposit_tab_id is not None and _paid(db, row.deposit_tab_id) == 0:
                db.execute(
                    update(TabItem)
                    .where(TabItem.tab_id == row.deposit_tab_id, TabItem.voided_at.is_(None))
                    .values(voided_at=now, voided_by=c.actor, void_reason="rezervácia zrušená")
                )
            self._change(db, row, "cancelled", c.actor, now, reason)
        self.book.put_booking(row)

    @handles(MoveBooking)
    def move(self, c: MoveBooking) -> None:
        now = self.h.clock()
        spec = self._spec(c.to_table)
        with self.h.store.session() as db:
            row = self._row(db, c.booking, "held", "confirmed", "arrived")
            if row.table_id == spec.id:
                raise BookingRefused(N_("The booking is on %(table)s already."), table=table_name(spec))
            span = Span(row.start_at, row.end_at)
            claims = self.claims_during(db, span, now)
            kind = row.kind if rules.fits(row.kind, spec) else rules.kind_of(spec)
            clash = rules.clashes(spec.id, span, claims, ignore=row.id)
            if clash:
                self._refuse_clash(spec, kind, span, clash[0], claims, ignore=row.id)
            before = row.table_id
            row.table_id, row.kind, row.changed_at = spec.id, kind, now
            db.flush()
            record_audit(db, c.actor, "booking.move", f"booking:{row.id}", {"from": before, "to": spec.id}, at=now)
            self._told(db, row, before)
        self.book.put_booking(row)

    @handles(GuestsArrived)
    def arrived(self, c: GuestsArrived) -> int | None:
        now = self.h.clock()
        with self.h.store.reader() as db:
            row = self._row(db, c.booking, "held", "confirmed", "arrived")
            table, member = row.table_id, c.member_id or row.member_id
        if c.to_table is not None and c.to_table != table:
            self.move(MoveBooking(booking=c.booking, to_table=c.to_table, actor=c.actor))
            table = c.to_table
        if self.h.games.get(table) is not None:  # still played: they wait for it, and are no no-show
            with self.h.store.session() as db:
                row = self._row(db, c.booking)
                if row.state != "arrived":
                    self._change(db, row, "arrived", c.actor, now)
            self.book.put_booking(row)
            return None
        game = self._execute(StartGame(table=table, member_id=None if c.card_uid else member, card_uid=c.card_uid, actor=c.actor))
        with self.h.store.session() as db:
            row = self._row(db, c.booking)
            row.game_id = game
            self._change(db, row, "seated", c.actor, now)
            db.flush()
            record_audit(db, c.actor, "booking.game", f"booking:{row.id}", {"game": game, "table": table}, at=now)
        self.book.put_booking(row)
        return int(game)

    @handles(MarkNoShow)
    def no_show(self, c: MarkNoShow) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            row = self._row(db, c.booking, "held", "confirmed")
            if now < row.start_at:
                raise BookingRefused(
                    N_("The booking of %(name)s starts at %(time)s; it is no no-show before then."),
                    name=row.name,
                    time=self._hhmm(row.start_at),
                )
            self._change(db, row, "no_show", c.actor, now)
        self.book.put_booking(row)
        log.info("booking %d on %s: a no-show", row.id, row.table_id)

    @handles(SettleDeposit)
    def settle_deposit(self, c: SettleDeposit) -> None:
        now = self.h.clock()
        reason = rules.clean_text(c.reason, rules.MAX_NOTE)
        with self.h.store.reader() as db:
            row = self._row(db, c.booking)
            if row.deposit_tab_id is None or _paid(db, row.deposit_tab_id) <= 0:
                raise BookingRefused(N_("The booking of %(name)s has no paid deposit."), name=row.name)
            if row.deposit_outcome is not None:
                raise BookingRefused(N_("The deposit of %(name)s is settled already."), name=row.name)
            if row.state in ("held", "confirmed") and c.keep:
                raise BookingRefused(N_("The booking of %(name)s is still to come: keep its deposit once it is over."), name=row.name)
            payments = [
                p.id
                for p in db.scalars(select(Payment).where(Payment.tab_id == row.deposit_tab_id, Payment.reverses_id.is_(None))).all()
                if db.scalar(select(Payment.id).where(Payment.reverses_id == p.id)) is None
            ]
        if not c.keep:
            for payment in payments:  # the till's own reversal: a receipt of the opposite amount
                self._execute(ReversePayment(payment=payment, reason=reason or "záloha vrátená", actor=c.actor))
        with self.h.store.session() as db:
            row = self._row(db, c.booking)
            row.deposit_outcome, row.changed_at = ("kept" if c.keep else "refunded"), now
            record_audit(
                db,
                c.actor,
                f"booking.deposit_{row.deposit_outcome}",
                f"booking:{row.id}",
                {"cents": row.deposit_cents},
                reason=reason or None,
                at=now,
            )
            self._told(db, row)

    # -- blocks ------------------------------------------------------------------------------

    @handles(AddBlock)
    def add_block(self, c: AddBlock) -> BlockAdded:
        if c.kind not in rules.BLOCK_KINDS:
            raise BookingRefused(N_("A block is for a tournament, training, a private party or maintenance."))
        try:
            span = Span(c.start, c.end)
        except ValueError:
            raise BookingRefused(N_("A block ends after it starts.")) from None
        now = self.h.clock()
        if span.end <= now:
            raise BookingRefused(N_("This time is over already; choose a time to come."))
        if span.end - span.start > timedelta(days=MAX_BLOCK_DAYS):
            raise BookingRefused(N_("A block is at most %(days)d days long."), days=MAX_BLOCK_DAYS)
        tables = self._block_tables(c.tables, c.room)
        label = rules.clean_text(c.label, rules.MAX_NAME)
        moved: list[tuple[int, str, str]] = []
        to_call: list[int] = []
        with self.h.store.session() as db:
            block = BookingBlock(
                kind=c.kind,
                label=label,
                start_at=span.start,
                end_at=span.end,
                tables=list(tables),
                room=c.room,
                created_at=now,
                created_by=c.actor,
            )
            db.add(block)
            db.flush()
            claims = self.claims_during(db, span, now)  # the new block among them: nothing moves onto its tables
            hit = db.scalars(
                select(Booking)
                .where(
                    Booking.state.in_(("held", "confirmed", "arrived")),
                    Booking.table_id.in_(tables),
                    Booking.start_at < span.end,
                    Booking.end_at > span.start,
                )
                .order_by(Booking.start_at, Booking.id)
            ).all()
            for row in hit:
                mine = Span(row.start_at, row.end_at)
                free = rules.free_tables(self.h.venue.tables, row.kind, mine, claims, ignore=row.id)
                if free:
                    before, row.table_id, row.changed_at = row.table_id, free[0].id, now
                    claims = [x for x in claims if not (x.what == "booking" and x.ref == row.id)] + [
                        Claim(free[0].id, mine, "booking", row.id)
                    ]
                    moved.append((row.id, before, free[0].id))
                    record_audit(
                        db, c.actor, "booking.move", f"booking:{row.id}", {"from": before, "to": free[0].id, "block": block.id}, at=now
                    )
                    self._told(db, row, before)
                else:
                    to_call.append(row.id)
            record_audit(
                db,
                c.actor,
                "block.add",
                f"block:{block.id}",
                {"kind": c.kind, "label": label, "tables": list(tables), "moved": len(moved), "to_call": len(to_call)},
                at=now,
            )
            effects = after_commit(db)
            for table in tables:
                effects.add(table_changed(self.h, table, "block"))
            effects.add(lambda: self.h.listeners.notify(BookingChanged(block=block.id)))
            db.flush()
        self.book.put_block(block)
        for row in hit:
            self.book.put_booking(row)
        return BlockAdded(block.id, tuple(moved), tuple(to_call))

    def _block_tables(self, tables: tuple[str, ...], room: str | None) -> tuple[str, ...]:
        if room is not None:
            if room not in {r.id for r in self.h.venue.rooms}:
                raise BookingMissing(N_("There is no such room."))
            picked = tuple(t.id for t in self.h.venue.tables if t.room == room and rules.bookable(t))
        else:
            picked = tuple(dict.fromkeys(tables))
            for t in picked:
                self._spec(t)
        if not picked:
            raise BookingRefused(N_("Choose the tables (or the room) the block holds."))
        return picked

    @handles(RemoveBlock)
    def remove_block(self, c: RemoveBlock) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            block = db.get(BookingBlock, c.block)
            if block is None or block.removed_at is not None:
                raise BookingMissing(N_("There is no such block."))
            block.removed_at, block.removed_by = now, c.actor
            record_audit(db, c.actor, "block.remove", f"block:{block.id}", {"kind": block.kind}, at=now)
            effects = after_commit(db)
            for table in block.tables:
                effects.add(table_changed(self.h, table, "block"))
        self.book.put_block(block)

    # -- calendar feeds ------------------------------------------------------------------------

    @handles(NewCalendarFeed)
    def new_feed(self, c: NewCalendarFeed) -> str:
        token = secrets.token_urlsafe(24)
        now = self.h.clock()
        with self.h.store.session() as db:
            self._revoke(db, c.username, now)
            db.add(CalendarFeed(username=c.username, token_hash=feed_hash(token), created_at=now))
            record_audit(db, c.actor, "calendar.new", f"user:{c.username}", at=now)
        return token

    @handles(RevokeCalendarFeed)
    def revoke_feed(self, c: RevokeCalendarFeed) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            if not self._revoke(db, c.username, now):
                raise BookingMissing(N_("There is no calendar link to end."))
            record_audit(db, c.actor, "calendar.revoke", f"user:{c.username}", at=now)

    def _revoke(self, db: Db, username: str, now: datetime) -> int:
        return links.revoke_feeds(db, username, now)  # also what disabling the account or a new role does

    # -- the watchdog's round (on the writer) ------------------------------------------------------

    def rounds(self) -> tuple[Round, ...]:
        return (self.round,)

    def round(self, now: datetime) -> None:
        """No-shows after the grace period; seated bookings whose game stopped free the rest of their
        time; hourly, what ended long ago leaves the book and old bookings are anonymised."""
        grace = self.settings.grace_min
        for entry in list(self.book.bookings().values()):
            if entry.pending and rules.no_show_due(entry.span.start, grace) <= now:
                try:
                    self._execute(MarkNoShow(booking=entry.id, actor="system"))
                except ServiceError as e:  # the hub's form of a refusal: the round goes on with the rest
                    log.warning("booking %d: the no-show was refused: %s", entry.id, e)
            elif entry.state == "seated" and entry.game_id is not None and self.h.games.by_id(entry.game_id) is None:
                self._ended(entry.id, now)
        if self._last_anonymised is None or now - self._last_anonymised >= ANONYMISE_EVERY:
            self._last_anonymised = now
            self.book.prune(now)
            self.anonymise(now)

    def _ended(self, booking: int, now: datetime) -> None:
        """The game started from a booking stopped: the rest of its time is free (for the waiting list too)."""
        with self.h.store.session() as db:
            row = self._row(db, booking)
            row.ended_at = now
            record_audit(db, "system", "booking.ended", f"booking:{row.id}", {"game": row.game_id}, at=now)
            self._told(db, row)
        self.book.put_booking(row)

    def anonymise(self, now: datetime) -> int:
        """Bookings and waiting parties older than the venue's retention lose name, phone and note."""
        cutoff = rules.retention_cutoff(now, self.settings.retention_days)
        with self.h.store.session() as db:
            done = db.execute(
                update(Booking)
                .where(Booking.end_at < cutoff, Booking.anonymised_at.is_(None))
                .values(name=rules.ANONYMOUS, phone=None, note="", anonymised_at=now)
            )
            parties = db.execute(
                update(WaitingParty)
                .where(WaitingParty.joined_at < cutoff, WaitingParty.state.in_(("seated", "left")), WaitingParty.anonymised_at.is_(None))
                .values(name=rules.ANONYMOUS, phone=None, note="", anonymised_at=now)
            )
            n = int(getattr(done, "rowcount", 0) or 0) + int(getattr(parties, "rowcount", 0) or 0)
            if n:
                record_audit(db, "system", "booking.anonymise", "bookings", {"count": n, "before": cutoff.isoformat()}, at=now)
        if n:
            log.info("anonymised %d bookings and waiting parties older than %d days", n, self.settings.retention_days)
        return n

    # -- what the start form and the games ask ---------------------------------------------------

    def prepaid_cap(self, table: str, now: datetime) -> tuple[int, Claim] | None:
        """The most prepaid minutes a game starting on `table` now may buy (and what it would run
        into), or None when nothing is ahead."""
        claim = self.book.ahead(table, now)
        cap = rules.prepaid_cap(now, claim)
        return (cap, claim) if cap is not None and claim is not None else None

    def check_prepaid(self, table: str, minutes: int | None, now: datetime) -> None:
        """A prepaid game is offered only up to the booking or block ahead on its table (StartGame, ExtendGame)."""
        if not minutes:
            return
        found = self.prepaid_cap(table, now)
        if found is None or minutes <= found[0]:
            return
        cap, claim = found
        spec = self.h.tables[table]
        span = Span(now, now + timedelta(minutes=minutes))
        claims = self.book.claims() + self.game_claims(now)
        free = [
            t
            for t in rules.free_tables(self.h.venue.tables, rules.kind_of(spec), span, claims, exclude=[table])
            if t.id not in self._oos.view()
        ]
        params: dict[str, object] = {"table": table_name(spec), "time": self._hhmm(claim.span.start), "minutes": cap}
        if free:
            raise BookingRefused(
                N_("%(table)s is booked at %(time)s: prepaid time there is at most %(minutes)d min; free for longer: %(free)s."),
                free=rules.names(free[:3]),
                **params,
            )
        raise BookingRefused(N_("%(table)s is booked at %(time)s: prepaid time there is at most %(minutes)d min."), **params)


def _paid(db: Db, tab_id: int | None) -> int:
    if tab_id is None:
        return 0
    return int(db.scalar(select(func.coalesce(func.sum(Payment.amount_cents), 0)).where(Payment.tab_id == tab_id)) or 0)


def form_key(key: object) -> str | None:
    """A form's one-time key as stored (None: none sent, so every submit makes a new row)."""
    if key is None or key == "":
        return None
    if not isinstance(key, str) or not 8 <= len(key) <= MAX_FORM_KEY or not key.isascii():
        raise BookingRefused(N_("This form is broken; open it again."))
    return key


def _doc(row: Booking) -> dict[str, Any]:
    """A booking for the audit log: never the name, the phone number or the note (personal data)."""
    return {
        "table": row.table_id,
        "kind": row.kind,
        "start": row.start_at.isoformat(),
        "end": row.end_at.isoformat(),
        "party_size": row.party_size,
        "member_id": row.member_id,
        "phone": row.phone is not None,
        "deposit_cents": row.deposit_cents,
        "state": row.state,
    }


# Why a table cannot be booked then: (what holds it, whether another table of the kind is free).
_CLASH = {
    ("booking", True): N_("%(table)s is booked %(start)s–%(end)s; free for that time: %(free)s."),
    ("booking", False): N_("%(table)s is booked %(start)s–%(end)s, and no other table of that kind is free for that time."),
    ("block", True): N_("%(table)s is held %(start)s–%(end)s (a block); free for that time: %(free)s."),
    ("block", False): N_("%(table)s is held %(start)s–%(end)s (a block), and no other table of that kind is free for that time."),
    ("game", True): N_("%(table)s is being played until about %(end)s; free for that time: %(free)s."),
    ("game", False): N_("%(table)s is being played until about %(end)s, and no other table of that kind is free for that time."),
    ("offer", True): N_("%(table)s is offered to a waiting party until about %(end)s; free for that time: %(free)s."),
    ("offer", False): N_(
        "%(table)s is offered to a waiting party until about %(end)s, and no other table of that kind is free for that time."
    ),
    ("service", True): N_("%(table)s is out of service today; free for that time: %(free)s."),
    ("service", False): N_("%(table)s is out of service today, and no other table of that kind is free for that time."),
}

# The states as a refusal names them (Slovak on a Slovak page).
_STATE_WORDS = {
    "held": Name("podržaná (čaká na zálohu)", "held (waiting for its deposit)"),
    "confirmed": Name("potvrdená", "confirmed"),
    "arrived": Name("hostia prišli", "arrived"),
    "seated": Name("usadení (hra beží)", "seated"),
    "no_show": Name("neprišli", "a no-show"),
    "cancelled": Name("zrušená", "cancelled"),
}
