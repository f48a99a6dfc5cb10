"""The bookings, blocks and waiting parties that matter now, as the hub's owned state.

Like the open games (broker.core.open_games) and the tables out of service, this is derived from
the database at start and changed only by the writer, after each commit; readers (the floor's
"Rezervované 20:00 (Novák, 4)", the watchdog's no-shows and offers, the start form's warning)
see a snapshot swapped in whole, with no query and no lock. The database stays the record: the
writer's checks before a booking is stored query it, never this.

What is kept: bookings that hold a table (held, confirmed, arrived, seated and not ended) and
blocks, both until a few hours after they end; parties waiting or holding an offer. No phone
number is kept here (only whether there is one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.events import SessionChanged
from broker.core.ports import HallState
from broker.domain.bookings import ACTIVE, PENDING, Claim, Party, Span
from broker.storage.models import Booking, BookingBlock, WaitingParty

KEEP_AFTER_END = timedelta(hours=6)  # a booking or block that ended is dropped from the book this long after


@dataclass(frozen=True)
class BookingEntry:
    id: int
    table: str
    kind: str
    span: Span
    state: str
    name: str
    size: int
    member_id: int | None
    game_id: int | None
    deposit_cents: int

    @property
    def pending(self) -> bool:
        return self.state in PENDING

    def claim(self) -> Claim:
        return Claim(self.table, self.span, "booking", self.id)


@dataclass(frozen=True)
class BlockEntry:
    id: int
    kind: str
    label: str
    span: Span
    tables: tuple[str, ...]
    room: str | None

    def claims(self) -> list[Claim]:
        return [Claim(t, self.span, "block", self.id) for t in self.tables]


@dataclass(frozen=True)
class PartyEntry:
    id: int
    name: str
    size: int
    kind: str
    joined_at: datetime
    state: str
    offered_table: str | None
    offered_at: datetime | None
    offer_until: datetime | None
    passed_table: str | None
    misses: int
    sms_ok: bool
    has_phone: bool
    lapsed_table: str | None = None

    def rule(self) -> Party:
        return Party(self.id, self.kind, self.size, self.joined_at, self.offered_table, self.passed_table, self.lapsed_table)


def booking_entry(row: Booking) -> BookingEntry:
    return BookingEntry(
        row.id,
        row.table_id,
        row.kind,
        Span(row.start_at, row.end_at),
        row.state,
        row.name,
        row.party_size,
        row.member_id,
        row.game_id,
        row.deposit_cents,
    )


def block_entry(row: BookingBlock) -> BlockEntry:
    return BlockEntry(row.id, row.kind, row.label, Span(row.start_at, row.end_at), tuple(row.tables), row.room)


def party_entry(row: WaitingParty) -> PartyEntry:
    return PartyEntry(
        row.id,
        row.name,
        row.party_size,
        row.kind,
        row.joined_at,
        row.state,
        row.offered_table,
        row.offered_at,
        row.offer_until,
        row.passed_table,
        row.misses,
        bool(row.sms_ok),
        bool(row.phone),
        row.lapsed_table,
    )


def table_changed(hall: HallState, table: str, action: str) -> Callable[[], None]:
    """An effect: the table's card on the floor re-draws (a booking, a block or an offer on it changed)."""
    return lambda: hall.listeners.notify(SessionChanged(table=table, action=action))


def holds(row: Booking) -> bool:
    """Does this booking hold its table (the database's exclusion constraint says the same)?"""
    return row.state in ACTIVE and row.ended_at is None


class BookingBook:
    """Copy-on-write snapshots: each change swaps in a new mapping (the writer only)."""

    def __init__(self) -> None:
        self._bookings: Mapping[int, BookingEntry] = MappingProxyType({})
        self._blocks: Mapping[int, BlockEntry] = MappingProxyType({})
        self._parties: Mapping[int, PartyEntry] = MappingProxyType({})

    # -- readers (any thread) -------------------------------------------------------------------

    def bookings(self) -> Mapping[int, BookingEntry]:
        return self._bookings

    def blocks(self) -> Mapping[int, BlockEntry]:
        return self._blocks

    def parties(self) -> Mapping[int, PartyEntry]:
        return self._parties

    def claims(self) -> list[Claim]:
        """Every booking and block that holds a table."""
        return [b.claim() for b in self._bookings.values()] + [c for k in self._blocks.values() for c in k.claims()]

    def ahead(self, table: str, now: datetime) -> Claim | None:
        """The first booking not come yet, or block, on `table` that has not ended by `now`: what a
        walk-in game there would run into (a seated or arrived booking is being looked after)."""
        claims = [b.claim() for b in self._bookings.values() if b.table == table and b.pending and b.span.end > now]
        claims += [c for k in self._blocks.values() for c in k.claims() if c.table == table and c.span.end > now]
        return min(claims, key=lambda c: c.span, default=None)

    def waiting(self) -> list[PartyEntry]:
        """The parties waiting or holding an offer, in the order they joined."""
        return sorted(self._parties.values(), key=lambda p: (p.joined_at, p.id))

    # -- the writer -------------------------------------------------------------------------------

    def load(self, db: Db, now: datetime) -> None:
        since = now - KEEP_AFTER_END
        rows = db.scalars(select(Booking).where(Booking.state.in_(ACTIVE), Booking.ended_at.is_(None), Booking.end_at > since)).all()
        blocks = db.scalars(select(BookingBlock).where(BookingBlock.removed_at.is_(None), BookingBlock.end_at > since)).all()
        parties = db.scalars(select(WaitingParty).where(WaitingParty.state.in_(("waiting", "offered")))).all()
        self._bookings = MappingProxyType({r.id: booking_entry(r) for r in rows})
        self._blocks = MappingProxyType({r.id: block_entry(r) for r in blocks})
        self._parties = MappingProxyType({r.id: party_entry(r) for r in parties})

    def put_booking(self, row: Booking) -> None:
        """The committed row: kept while it holds its table, dropped once it does not."""
        new = dict(self._bookings)
        if holds(row):
            new[row.id] = booking_entry(row)
        else:
            new.pop(row.id, None)
        self._bookings = MappingProxyType(new)

    def put_block(self, row: BookingBlock) -> None:
        new = dict(self._blocks)
        if row.removed_at is None:
            new[row.id] = block_entry(row)
        else:
            new.pop(row.id, None)
        self._blocks = MappingProxyType(new)

    def put_party(self, row: WaitingParty) -> None:
        new = dict(self._parties)
        if row.state in ("waiting", "offered"):
            new[row.id] = party_entry(row)
        else:
            new.pop(row.id, None)
        self._parties = MappingProxyType(new)

    def prune(self, now: datetime) -> None:
        """Drop what ended a while ago (an arrived party never seated, a block past)."""
        since = now - KEEP_AFTER_END
        self._bookings = MappingProxyType({k: b for k, b in self._bookings.items() if b.span.end > since})
        self._blocks = MappingProxyType({k: b for k, b in self._blocks.items() if b.span.end > since})
