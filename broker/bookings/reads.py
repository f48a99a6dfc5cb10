"""What the pages and the API read about bookings, blocks and the waiting list, as frozen values.

The floor's marks ("Rezervované 20:00 (Novák, 4)"), the start form's warning and the waiting
list come from the hub's book (broker.bookings.book) with no query; the day view, the lists
and the calendar feed read the database (read-only sessions). A phone number is in these values
for staff pages and the staff API only; the calendar feed leaves it out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Annotated

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.bookings.book import BookingBook
from broker.bookings.bookings import Bookings, feed_hash
from broker.core.ports import HallState
from broker.core.store_errors import store_call
from broker.domain import bookings as rules
from broker.domain.bookings import Claim, Span
from broker.domain.json_shape import HIDDEN
from broker.domain.schedule import business_day_bounds, opening_periods
from broker.domain.venue import Bookings as BookingSettings
from broker.domain.venue import TableSpec
from broker.floor.table_service import OutOfServiceBook
from broker.storage.models import Booking, BookingBlock, CalendarFeed, Payment, WaitingParty


@dataclass(frozen=True)
class BookingView:
    """A booking as staff see it (the pages and GET /api/bookings: with the phone number)."""

    id: int
    table: str
    table_name: str  # the venue's name of the table (its id, if the venue no longer has it)
    kind: str
    start: datetime
    end: datetime
    party_size: int
    name: str
    phone: str  # shown in groups ("+421 903 123 456"); "" when none
    note: str
    member_id: int | None
    state: str
    created_at: Annotated[datetime, HIDDEN]
    created_by: Annotated[str, HIDDEN]
    game_id: int | None
    ended_at: Annotated[datetime | None, HIDDEN]
    deposit_cents: int
    deposit_paid_cents: int
    deposit_tab_id: Annotated[int | None, HIDDEN]
    deposit_outcome: str | None
    reason: Annotated[str | None, HIDDEN]

    @property
    def holds(self) -> bool:
        return self.state in rules.ACTIVE and self.ended_at is None

    @property
    def deposit_to_settle(self) -> bool:
        """Paid, and neither kept nor given back yet: the manager's decision."""
        return self.deposit_paid_cents > 0 and self.deposit_outcome is None


@dataclass(frozen=True)
class Availability:
    """When the tables of a kind are free in a window (GET /api/availability: nothing personal)."""

    kind: str
    start: datetime
    end: datetime
    tables: tuple[rules.TableFree, ...]


@dataclass(frozen=True)
class BlockView:
    id: int
    kind: str
    label: str
    start: datetime
    end: datetime
    tables: tuple[str, ...]
    room: str | None


@dataclass(frozen=True)
class Mark:
    """What a table's card says about a booking, a block or an offer on it now."""

    what: str  # "booked", "arrived", "block", "offer"
    at: datetime  # the booking's or block's start; the offer's end
    name: str  # the guest's or party's name, a block's label
    size: int = 0
    booking: int | None = None
    party: int | None = None
    until: datetime | None = None
    block_kind: str | None = None


@dataclass(frozen=True)
class WalkIn:
    """What the start form says before a walk-in game on a table with a booking or block ahead."""

    mark: Mark
    planned_min: int  # a walk-in's usual length (the venue's)
    overrun_min: int  # how far that would run into the booking (0: it ends in time)
    cap_min: int  # the most prepaid minutes offered there
    free: tuple[TableSpec, ...]  # free tables of the same kind for a walk-in's usual length


@dataclass(frozen=True)
class PartyView:
    id: int
    name: str
    size: int
    kind: str
    phone: str
    sms_ok: bool
    note: str
    joined_at: datetime
    state: str
    offered_table: str | None
    offer_until: datetime | None
    misses: int
    wait_min: int | None  # the estimated wait; None when no table of the kind exists


@dataclass(frozen=True)
class DayRow:
    spec: TableSpec
    cells: tuple[rules.Cell, ...]

    @property
    def segments(self) -> list[tuple[rules.Cell, int]]:
        """The row as the day view draws it: a free cell each, a booking, block, game, offer or
        time out of service as one cell as wide as it is."""
        out: list[tuple[rules.Cell, int]] = []
        for c in self.cells:
            if out and c.claim is not None and out[-1][0].claim == c.claim:
                out[-1] = (out[-1][0], out[-1][1] + 1)
            else:
                out.append((c, 1))
        return out


@dataclass(frozen=True)
class DayView:
    day: date
    period: Span | None  # the opening hours of that day (None: closed)
    columns: tuple[datetime, ...]
    rows: tuple[DayRow, ...]
    bookings: tuple[BookingView, ...]  # every booking of the day, cancelled and no-shows too
    blocks: tuple[BlockView, ...]

    def booking(self, booking_id: int | None) -> BookingView | None:
        return next((b for b in self.bookings if b.id == booking_id), None)

    def block(self, block_id: int | None) -> BlockView | None:
        return next((k for k in self.blocks if k.id == block_id), None)


@dataclass(frozen=True)
class Feed:
    username: str
    bookings: tuple[BookingView, ...]


class BookingReads:
    """The bookings' queries and the book's snapshots; none of them writes."""

    def __init__(self, hall: HallState, book: BookingBook, bookings: Bookings, out_of_service: OutOfServiceBook) -> None:
        self._hall = hall
        self._store = hall.store
        self._book = book
        self._bookings = bookings
        self._out_of_service = out_of_service

    @property
    def settings(self) -> BookingSettings:
        return self._hall.venue.bookings

    # -- the floor (no query) -------------------------------------------------------------------

    def marks(self, now: datetime | None = None) -> dict[str, Mark]:
        """Per table: an offer to a waiting party, guests who arrived, a booking from the venue's
        minutes before it starts, a block running or about to (in that order of precedence)."""
        now = now or self._hall.clock()
        soon = timedelta(minutes=self.settings.show_before_min)
        out: dict[str, Mark] = {}
        for k in sorted(self._book.blocks().values(), key=lambda k: k.span):
            if k.span.start - soon <= now < k.span.end:
                for t in k.tables:
                    out.setdefault(t, Mark("block", k.span.start, k.label, until=k.span.end, block_kind=k.kind))
        for b in sorted(self._book.bookings().values(), key=lambda b: b.span):
            if b.state == "arrived" and b.span.end > now:
                out[b.table] = Mark("arrived", b.span.start, b.name, b.size, booking=b.id, until=b.span.end)
            elif b.pending and b.span.start - soon <= now < b.span.end and out.get(b.table, Mark("", now, "")).what != "arrived":
                out[b.table] = Mark("booked", b.span.start, b.name, b.size, booking=b.id, until=b.span.end)
        for p in self._book.waiting():
            if p.offered_table is not None and p.offer_until is not None:
                out[p.offered_table] = Mark("offer", p.offer_until, p.name, p.size, party=p.id)
        return out

    def mark(self, table: str) -> Mark | None:
        return self.marks().get(table)

    def upcoming(self, table: str, now: datetime | None = None) -> list[Mark]:
        """The bookings on `table` not over yet, within a day: the table page's list ("Prišli" on each)."""
        now = now or self._hall.clock()
        horizon = now + timedelta(days=1)
        found = [
            Mark("arrived" if b.state == "arrived" else "booked", b.span.start, b.name, b.size, booking=b.id, until=b.span.end)
            for b in self._book.bookings().values()
            if b.table == table and b.state in ("held", "confirmed", "arrived") and b.span.end > now and b.span.start < horizon
        ]
        return sorted(found, key=lambda m: m.at)

    def offerable(self, now: datetime | None = None) -> list[TableSpec]:
        """Tables staff may offer a waiting party now: bookable, free, in service, not offered already."""
        now = now or self._hall.clock()
        playing = self._hall.snapshot().open
        oos = self._out_of_service.view()
        offered = {p.offered_table for p in self._book.waiting() if p.offered_table}
        span = Span(now, now + timedelta(minutes=self.settings.walk_in_min))
        claims = self._book.claims()
        return [
            t
            for t in self._hall.venue.tables
            if rules.bookable(t)
            and t.id not in playing
            and t.id not in oos
            and t.id not in offered
            and not rules.clashes(t.id, span, claims)
        ]

    def walk_in(self, table: str, now: datetime | None = None) -> WalkIn | None:
        """The start form's warning: the booking or block ahead, how far a walk-in would run into
        it, the prepaid cap, and free tables of the same kind instead."""
        now = now or self._hall.clock()
        claim = self._book.ahead(table, now)
        if claim is None:
            return None
        planned = self.settings.walk_in_min
        if claim.span.start - now > timedelta(minutes=planned) * 2:
            return None  # hours away: nothing to say yet
        spec = self._hall.tables[table]
        span = Span(now, now + timedelta(minutes=planned))
        claims = self._book.claims() + self._bookings.game_claims(now)
        oos = self._out_of_service.view()
        free = tuple(
            t for t in rules.free_tables(self._hall.venue.tables, rules.kind_of(spec), span, claims, exclude=[table]) if t.id not in oos
        )
        mark = self._claim_mark(claim)
        return WalkIn(
            mark, planned, rules.overrun_minutes(now, planned, claim.span.start), rules.minutes_until(now, claim.span.start), free[:3]
        )

    def _claim_mark(self, claim: Claim) -> Mark:
        ref = claim.ref if claim.ref is not None else -1
        if claim.what == "block" and ref in self._book.blocks():
            k = self._book.blocks()[ref]
            return Mark("block", k.span.start, k.label, until=k.span.end, block_kind=k.kind)
        b = self._book.bookings().get(ref)
        return Mark("booked", claim.span.start, b.name if b else "", b.size if b else 0, booking=claim.ref, until=claim.span.end)

    def prepaid_presets(self, table: str, presets: tuple[int, ...]) -> tuple[tuple[int, ...], int | None]:
        """The prepaid choices a start form offers on `table` (none past a booking ahead) and the cap."""
        found = self._bookings.prepaid_cap(table, self._hall.clock())
        if found is None:
            return presets, None
        return tuple(m for m in presets if m <= found[0]), found[0]

    def waiting_count(self) -> int:
        """How many parties wait (an offer out counts): the top bar's figure, from the hub's book (no query)."""
        return len(self._book.waiting())

    def waiting(self, now: datetime | None = None) -> list[PartyView]:
        """The waiting list in the order they came, each with its estimated wait."""
        now = now or self._hall.clock()
        parties = self._book.waiting()
        if not parties:
            return []
        waits = rules.estimated_waits(
            [p.rule() for p in parties if p.offered_table is None], self._tables_now(now), now, self.settings.walk_in_min
        )
        with self._store.reader() as db:
            extra = {
                r.id: (r.phone, r.note)
                for r in db.execute(
                    select(WaitingParty.id, WaitingParty.phone, WaitingParty.note).where(WaitingParty.id.in_([p.id for p in parties]))
                )
            }
        return [
            PartyView(
                p.id,
                p.name,
                p.size,
                p.kind,
                rules.phone_shown(extra.get(p.id, (None, ""))[0]),
                p.sms_ok,
                extra.get(p.id, (None, ""))[1] or "",
                p.joined_at,
                p.state,
                p.offered_table,
                p.offer_until,
                p.misses,
                0 if p.offered_table else waits.get(p.id),
            )
            for p in parties
        ]

    def _tables_now(self, now: datetime) -> list[rules.TableNow]:
        hall = self._hall.snapshot().open
        oos = self._out_of_service.view()
        claims = self._book.claims()
        out = []
        for spec in self._hall.venue.tables:
            if not rules.bookable(spec) or spec.id in oos:
                continue
            g = hall.get(spec.id)
            mine = [c for c in claims if c.table == spec.id]
            free = rules.expected_free(
                now,
                started_at=g.state.started_at if g else None,
                prepaid_until=g.state.prepaid_until if g else None,
                walk_in_min=self.settings.walk_in_min,
                claims=mine,
            )
            out.append(rules.TableNow(spec, free))
        return out

    # -- the database -------------------------------------------------------------------------

    @store_call
    def bookings(self, start: datetime, end: datetime, *, states: tuple[str, ...] | None = None) -> list[BookingView]:
        """Bookings overlapping [start, end), by start time."""
        with self._store.reader() as db:
            q = select(Booking).where(Booking.start_at < end, Booking.end_at > start)
            if states is not None:
                q = q.where(Booking.state.in_(states))
            rows = db.scalars(q.order_by(Booking.start_at, Booking.table_id, Booking.id)).all()
            return _views(db, rows, self._names())

    @store_call
    def booking(self, booking_id: int) -> BookingView | None:
        with self._store.reader() as db:
            row = db.get(Booking, booking_id)
            return _views(db, [row], self._names())[0] if row is not None else None

    @store_call
    def to_call(self, ids: tuple[int, ...]) -> list[BookingView]:
        """The bookings staff must call about (a block took their table), by id."""
        if not ids:
            return []
        with self._store.reader() as db:
            return _views(db, db.scalars(select(Booking).where(Booking.id.in_(ids)).order_by(Booking.start_at)).all(), self._names())

    @store_call
    def blocks(self, start: datetime, end: datetime) -> list[BlockView]:
        with self._store.reader() as db:
            rows = db.scalars(
                select(BookingBlock)
                .where(BookingBlock.removed_at.is_(None), BookingBlock.start_at < end, BookingBlock.end_at > start)
                .order_by(BookingBlock.start_at)
            ).all()
            return [BlockView(k.id, k.kind, k.label, k.start_at, k.end_at, tuple(k.tables), k.room) for k in rows]

    def day(self, day: date) -> DayView:
        """The day view: the bookable tables by the hour of the day's opening period, and the lists.
        A cell is offered ("+") only when the booking rule would take it: what holds a table is the
        writer's own list (`Bookings.claims_during`: bookings, blocks, a game expected to run on, an
        offer to a waiting party, a table out of service), its time the writer's own check (`takes_span`)."""
        venue = self._hall.venue
        now = self._hall.clock()
        start, end = business_day_bounds(day, venue)
        periods = opening_periods(venue, start, end)
        period = next((Span(o, c) for o, c in periods if start <= o < end), None)
        bookings = self.bookings(start, end)
        blocks = self.blocks(start, end)
        step = self.settings.step_min
        rows: tuple[DayRow, ...] = ()
        columns: tuple[datetime, ...] = ()
        if period is not None:
            with self._store.reader() as db:
                claims = self._bookings.claims_during(db, period, now)

            def takes(span: Span) -> bool:
                return self._bookings.takes_span(span, now)

            rows = tuple(DayRow(t, tuple(rules.grid(t.id, period, step, claims, takes))) for t in venue.tables if rules.bookable(t))
            columns = tuple(c.start for c in rows[0].cells) if rows else ()
        return DayView(day, period, columns, rows, tuple(bookings), tuple(blocks))

    def availability(self, kind: str, start: datetime, end: datetime) -> Availability:
        """Free spans of each table of `kind` in [start, end), from now on: nothing personal in it."""
        now = self._hall.clock()
        with self._store.reader() as db:
            claims = self._bookings.claims_during(db, Span(start, end), now)  # the writer's own rule of what holds a table
        return Availability(kind, start, end, tuple(rules.availability(self._hall.venue, kind, Span(start, end), claims, now=now)))

    def _names(self) -> dict[str, str]:
        return {t.id: t.name for t in self._hall.venue.tables}

    @store_call
    def no_shows(self, phone: str | None, member_id: int | None) -> int:
        with self._store.reader() as db:
            return self._bookings.no_shows(db, phone, member_id)

    @store_call
    def feed(self, token: str) -> Feed | None:
        """The bookings a calendar link shows (from 7 days ago to the venue's horizon), or None for a
        token that is unknown or revoked."""
        now = self._hall.clock()
        with self._store.reader() as db:
            row = db.scalar(select(CalendarFeed).where(CalendarFeed.token_hash == feed_hash(token), CalendarFeed.revoked_at.is_(None)))
            if row is None:
                return None
            username = row.username
        found = self.bookings(now - timedelta(days=7), now + timedelta(days=self.settings.max_days_ahead + 1))
        return Feed(username, tuple(found))

    @store_call
    def has_feed(self, username: str) -> bool:
        with self._store.reader() as db:
            return bool(
                db.scalar(
                    select(func.count())
                    .select_from(CalendarFeed)
                    .where(CalendarFeed.username == username, CalendarFeed.revoked_at.is_(None))
                )
            )


def _views(db: Db, rows: Sequence[Booking], names: Mapping[str, str]) -> list[BookingView]:
    tabs = [r.deposit_tab_id for r in rows if r.deposit_tab_id is not None]
    paid: dict[int, int] = {}
    if tabs:
        for tab, cents in db.execute(
            select(Payment.tab_id, func.sum(Payment.amount_cents)).where(Payment.tab_id.in_(tabs)).group_by(Payment.tab_id)
        ):
            paid[tab] = int(cents or 0)
    return [
        BookingView(
            r.id,
            r.table_id,
            names.get(r.table_id, r.table_id),
            r.kind,
            r.start_at,
            r.end_at,
            r.party_size,
            r.name,
            rules.phone_shown(r.phone),
            r.note,
            r.member_id,
            r.state,
            r.created_at,
            r.created_by,
            r.game_id,
            r.ended_at,
            r.deposit_cents,
            paid.get(r.deposit_tab_id, 0) if r.deposit_tab_id is not None else 0,
            r.deposit_tab_id,
            r.deposit_outcome,
            r.reason,
        )
        for r in rows
    ]
