"""Table bookings and the waiting list: the rules, pure (times in, answers out; no I/O).

A booking holds one table for a span of time, [start, end), half-open: 20:00–22:00 and
22:00–23:00 on one table do not overlap, so back-to-back bookings are both accepted. Times are
aware UTC inside; staff type local wall-clock times (Europe/Bratislava) and `local_span` turns
them into UTC, so a booking across a DST night is as long as the clock on the wall says.

The states of a booking:

    held ──▶ confirmed ──▶ arrived ──▶ seated (a game started from it)
      │          │            │
      └──────────┴────────────┴──▶ cancelled;   held / confirmed ──▶ no_show (after the grace period)

`held`: entered but waiting for its deposit; `arrived`: the guests came but their table is still
busy. Held, confirmed, arrived and seated hold the table for their time; a no-show or a
cancelled booking frees it. A block (a tournament, training, a private party, maintenance) holds
its tables like a booking.

The waiting list: parties in the order they joined; a table that frees is offered to the first
party whose kind of table it is; the estimated wait comes from when each table is expected to be
free (a prepaid game's end, an open game's usual length, the bookings on it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Literal

from broker.domain.dates import clock_time, wall_clock
from broker.domain.refusals import N_, Name, Refusal
from broker.domain.schedule import opening_periods
from broker.domain.venue import TableSpec, Venue
from devices.kinds import Kind

BookingState = Literal["held", "confirmed", "arrived", "seated", "no_show", "cancelled"]
STATES: tuple[BookingState, ...] = ("held", "confirmed", "arrived", "seated", "no_show", "cancelled")
# What holds the table for its time (the database's exclusion constraint names these too).
ACTIVE: tuple[BookingState, ...] = ("held", "confirmed", "arrived", "seated")
# Not come yet: these become no-shows after the grace period.
PENDING: tuple[BookingState, ...] = ("held", "confirmed")
NEXT: dict[str, frozenset[str]] = {
    "held": frozenset({"confirmed", "arrived", "seated", "no_show", "cancelled"}),
    "confirmed": frozenset({"arrived", "seated", "no_show", "cancelled"}),
    "arrived": frozenset({"seated", "cancelled"}),
    "seated": frozenset(),
    "no_show": frozenset(),
    "cancelled": frozenset(),
}

BLOCK_KINDS = ("tournament", "training", "private", "maintenance")
# What a guest asks for: any pool table, a 9-ft or an 8-ft one, the carom table.
TABLE_KINDS = ("pool", "pool9", "pool8", "carom")
WAITING_STATES = ("waiting", "offered", "seated", "left")
ANONYMOUS = "—"  # the name of a booking or a party after the retention period

MAX_NAME = 80
MAX_NOTE = 200


class BookingRefused(Refusal):
    """A booking, a block or a waiting-list change refused; nothing was changed."""


# --- tables and kinds ------------------------------------------------------------------------


def bookable(spec: TableSpec) -> bool:
    """Billiard tables are booked (they are billed by time); foosball and darts are not."""
    return spec.kind.billed


def kind_of(spec: TableSpec) -> str:
    """The most exact kind a table is: pool9, pool8 (by its size in feet), pool, or carom."""
    if spec.kind is Kind.CAROM:
        return "carom"
    if spec.size_ft == 9:
        return "pool9"
    if spec.size_ft == 8:
        return "pool8"
    return "pool"


def fits(kind: str, spec: TableSpec) -> bool:
    """Is `spec` a table of the kind asked for ("pool" takes any pool table)?"""
    if not bookable(spec):
        return False
    if kind == "pool":
        return spec.kind is Kind.POOL
    return kind_of(spec) == kind


def check_kind(kind: str) -> str:
    if kind not in TABLE_KINDS:
        raise BookingRefused(N_("Choose the kind of table: any pool table, a 9-ft or an 8-ft pool table, or the carom table."))
    return kind


# The kinds as a refusal names them (the booking form's words).
KIND_WORDS = {
    "pool": Name("ľubovoľný pool", "any pool table"),
    "pool9": Name("pool 9 stôp", "a 9-ft pool table"),
    "pool8": Name("pool 8 stôp", "an 8-ft pool table"),
    "carom": Name("karambol", "the carom table"),
}


def booked_kind(spec: TableSpec, kind: str | None) -> str:
    """The kind a booking of `spec` keeps: the one asked for when the table is of it ("any pool
    table" on a 9-ft one stays "any pool table", so a block may move it to an 8-ft one), the
    table's own when none is asked; a kind the table is not is refused, never stored (a block
    would move the booking by it, onto a table of another game)."""
    if kind is None:
        return kind_of(spec)
    kind = check_kind(kind)
    if not fits(kind, spec):
        raise BookingRefused(
            N_("%(table)s is %(its)s, not %(kind)s: leave the kind out, or choose a table of that kind."),
            table=Name(spec.name, spec.name_en),
            its=KIND_WORDS[kind_of(spec)],
            kind=KIND_WORDS[kind],
        )
    return kind


# --- spans of time ---------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Span:
    """[start, end): aware times, start before end."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None:
            raise ValueError("naive datetime: pass timezone-aware times")
        if not self.start < self.end:
            raise ValueError(f"a span ends after it starts ({self.start.isoformat()} – {self.end.isoformat()})")

    @property
    def minutes(self) -> int:
        return int((self.end - self.start).total_seconds() // 60)

    def overlaps(self, other: Span) -> bool:
        """Half-open: one that ends when the other starts does not overlap it."""
        return self.start < other.end and other.start < self.end

    def contains(self, at: datetime) -> bool:
        return self.start <= at < self.end


def overlaps(a: Span, b: Span) -> bool:
    return a.overlaps(b)


def local_time(day: date, at: time, tz: tzinfo) -> datetime:
    """A wall-clock time at the venue as aware UTC: the hall's one DST rule (broker.domain.dates):
    a time the spring night skips (02:30) is refused; one the autumn night has twice is its first occurrence."""
    return wall_clock(day, at, tz)


def local_span(day: date, start: time, end: time, tz: tzinfo) -> Span:
    """From `start` on `day` to `end` (the next day when it is not after `start`), each read on the
    venue's wall clock: 23:00–04:00 on the autumn night is 6 hours, on the spring night 4."""
    end_day = day if end > start else day + timedelta(days=1)
    return Span(local_time(day, start, tz), local_time(end_day, end, tz))


def span_for(day: date, start: time, minutes: int, tz: tzinfo) -> Span:
    """From `start` on `day` for `minutes` of real time (a length chosen in the form)."""
    begin = local_time(day, start, tz)
    return Span(begin, begin + timedelta(minutes=minutes))


def parse_hhmm(text: str) -> time:
    """'20:00', '20.00', '2000', '20' → 20:00; refused otherwise (broker.domain.dates.clock_time)."""
    return clock_time(text)


# --- opening hours -----------------------------------------------------------------------------


def within_hours(venue: Venue, span: Span) -> bool:
    """Does the span lie within one of the venue's opening periods?"""
    return any(opens <= span.start and span.end <= closes for opens, closes in opening_periods(venue, span.start, span.end))


def hours_text(venue: Venue, span: Span) -> str:
    """The opening hours around a span, e.g. "16:00–00:00", for a refusal."""
    periods = opening_periods(venue, span.start - timedelta(hours=12), span.end)
    if not periods:
        return "—"
    opens, closes = min(periods, key=lambda p: abs((p[0] - span.start).total_seconds()))
    tz = venue.tz
    return f"{opens.astimezone(tz):%H:%M}–{closes.astimezone(tz):%H:%M}"


# --- what holds a table ------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """Something that holds a table for a span: a booking, a block, a game expected to run on, the
    table offered to a waiting party (`offer_span`), or the table out of service (for the rest of
    the day)."""

    table: str
    span: Span
    what: Literal["booking", "block", "game", "service", "offer"] = "booking"
    ref: int | None = None  # the booking's or the block's id (an offer's: the party's)


def clashes(table: str, span: Span, claims: Iterable[Claim], *, ignore: int | None = None) -> list[Claim]:
    """What already holds `table` for part of `span` (a booking `ignore` excepted: its own move)."""
    own = (lambda c: c.what == "booking" and c.ref == ignore) if ignore is not None else (lambda c: False)
    return sorted((c for c in claims if c.table == table and c.span.overlaps(span) and not own(c)), key=lambda c: c.span)


def free_tables(
    tables: Sequence[TableSpec], kind: str, span: Span, claims: Sequence[Claim], *, exclude: Iterable[str] = (), ignore: int | None = None
) -> list[TableSpec]:
    """Tables of `kind` that nothing holds during `span`, in the venue's order."""
    skip = set(exclude)
    return [t for t in tables if t.id not in skip and fits(kind, t) and not clashes(t.id, span, claims, ignore=ignore)]


def names(specs: Iterable[TableSpec]) -> Name:
    """Tables as a refusal lists them: "Pool 5, Pool 6" (the English names where they differ)."""
    specs = list(specs)
    return Name(", ".join(t.name for t in specs), ", ".join(t.name_en or t.name for t in specs))


def next_claim(table: str, now: datetime, claims: Iterable[Claim]) -> Claim | None:
    """The first booking or block on `table` that has not ended by `now` (a game's own excepted)."""
    ahead = [c for c in claims if c.table == table and c.what in ("booking", "block") and c.span.end > now]
    return min(ahead, key=lambda c: c.span, default=None)


def minutes_until(now: datetime, at: datetime) -> int:
    """Whole minutes from `now` to `at` (0 when it is due), rounded down: time a game may still run."""
    return max(0, int((at - now).total_seconds() // 60))


def overrun_minutes(now: datetime, planned_min: int, claim_start: datetime) -> int:
    """How long a game starting now and running `planned_min` would run into a booking that
    starts at `claim_start` (0: it ends in time); rounded up, so 30 s late is "1 min"."""
    late = (now + timedelta(minutes=planned_min) - claim_start).total_seconds()
    return max(0, math.ceil(late / 60))


def prepaid_cap(now: datetime, claim: Claim | None) -> int | None:
    """The most prepaid minutes a game starting now may buy on a table with `claim` ahead: up to
    the booking, never into it (None: no limit)."""
    if claim is None:
        return None
    return minutes_until(now, claim.span.start)


# --- when a booking may start, no-shows, deposits, retention ----------------------------------------


def start_passed(start: datetime, now: datetime) -> bool:
    """Has a booking's start passed? The minute that is running is still now (staff type minutes).

    A booking is for guests still to come. One whose start has passed would be due as a no-show at
    once (its grace counts from its start) and count against the guest's number; guests who are
    here already are a walk-in, whose game is started on the table (the start form warns of a
    booking ahead there)."""
    return start < now.replace(second=0, microsecond=0)


def no_show_due(start: datetime, grace_min: int) -> datetime:
    """When a booking nobody came for becomes a no-show."""
    return start + timedelta(minutes=grace_min)


def deposit_needed(no_shows: int, limit: int) -> bool:
    """After `limit` no-shows (0: never) a person's booking needs a deposit."""
    return limit > 0 and no_shows >= limit


def retention_cutoff(now: datetime, days: int) -> datetime:
    """Bookings and parties that ended before this are anonymised."""
    return now - timedelta(days=days)


# --- what staff type: names, phones, party sizes -------------------------------------------------


def clean_text(text: str | None, limit: int) -> str:
    return " ".join((text or "").split())[:limit]


def check_name(name: str) -> str:
    cleaned = clean_text(name, MAX_NAME)
    if len(cleaned) < 2:
        raise BookingRefused(N_("Write the guest's name (at least 2 letters)."))
    return cleaned


def check_party(size: object, max_party: int) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= max_party:
        raise BookingRefused(N_("A party is 1 to %(max)d people."), max=max_party)
    return size


_PHONE_CHARS = re.compile(r"[\s\-/().]")


def normalise_phone(text: str | None) -> str | None:
    """A phone number as stored (+421903123456), None when none is given. A Slovak number may be
    written nationally (0903 123 456); any other country with its + or 00 prefix."""
    raw = _PHONE_CHARS.sub("", text or "")
    if not raw:
        return None
    if raw.startswith("00"):
        raw = "+" + raw[2:]
    elif raw.startswith("0"):
        raw = "+421" + raw[1:]
    if not re.fullmatch(r"\+[1-9][0-9]{7,14}", raw):
        raise BookingRefused(N_("This is not a phone number; write it like 0903 123 456 or +421 903 123 456."))
    return raw


def phone_shown(phone: str | None) -> str:
    """+421903123456 → "+421 903 123 456" (other countries as stored)."""
    if not phone:
        return ""
    if phone.startswith("+421") and len(phone) == 13:
        d = phone[4:]
        return f"+421 {d[:3]} {d[3:6]} {d[6:]}"
    return phone


# --- the day view and availability ---------------------------------------------------------------


def free_spans(period: Span, taken: Iterable[Span], *, at_least: timedelta = timedelta(0)) -> list[Span]:
    """The parts of `period` nothing in `taken` covers, at least `at_least` long, in order."""
    out: list[Span] = []
    cursor = period.start
    for t in sorted(taken):
        if t.end <= cursor or t.start >= period.end:
            continue
        if t.start > cursor:
            out.append(Span(cursor, t.start))
        cursor = max(cursor, t.end)
    if cursor < period.end:
        out.append(Span(cursor, period.end))
    return [s for s in out if s.end - s.start >= at_least and s.end - s.start > timedelta(0)]


@dataclass(frozen=True)
class TableFree:
    table: str
    name: str  # the venue's name of the table
    free: tuple[Span, ...]


def availability(
    venue: Venue,
    kind: str,
    window: Span,
    claims: Sequence[Claim],
    *,
    now: datetime | None = None,
    at_least: timedelta = timedelta(minutes=30),
) -> list[TableFree]:
    """When each table of `kind` is free within `window` and the opening hours (from `now` on, if
    given), in spans of at least `at_least`: what a public booking page would offer."""
    periods = [Span(max(o, window.start), min(c, window.end)) for o, c in opening_periods(venue, window.start, window.end)]
    if now is not None:
        periods = [Span(max(p.start, now), p.end) for p in periods if p.end > now]
    out = []
    for spec in venue.tables:
        if not fits(kind, spec):
            continue
        taken = [c.span for c in claims if c.table == spec.id]
        free = [s for p in periods for s in free_spans(p, taken, at_least=at_least)]
        out.append(TableFree(spec.id, spec.name, tuple(free)))
    return out


@dataclass(frozen=True)
class Cell:
    start: datetime
    claim: Claim | None  # what holds the table then (None: nothing)
    bookable: bool = True  # a booking of the cell would be taken: nothing holds it, and the booking rule takes its time


def grid(
    table: str, period: Span, step_min: int, claims: Sequence[Claim], takes: Callable[[Span], bool] = lambda _span: True
) -> list[Cell]:
    """The day view's row for one table: a cell every `step_min` minutes of the period. `claims`:
    what holds the tables (the writer's own list: bookings, blocks, games expected to run on, offers
    to waiting parties, tables out of service); `takes`: whether the booking rule takes a booking of
    that time at all (not past, not too far ahead), so a cell offered is one a booking gets."""
    mine = [c for c in claims if c.table == table]
    cells = []
    at = period.start
    step = timedelta(minutes=step_min)
    while at < period.end:
        cell = Span(at, min(at + step, period.end))
        claim = next((c for c in mine if c.span.overlaps(cell)), None)
        cells.append(Cell(at, claim, claim is None and takes(cell)))
        at += step
    return cells


# --- the waiting list ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Party:
    """A walk-in party waiting, as the rules see it."""

    id: int
    kind: str
    size: int
    joined_at: datetime
    offered_table: str | None = None
    passed_table: str | None = None  # the table staff said this party does not want ("Nechcú"): not offered to it again
    lapsed_table: str | None = None  # the table whose offer to this party lapsed, nobody answering

    def may_get(self, spec: TableSpec) -> bool:
        """Whether `spec` may be offered to this party at all (its kind, and not a table it declined)."""
        return self.passed_table != spec.id and fits(self.kind, spec)


def next_party(parties: Sequence[Party], spec: TableSpec) -> Party | None:
    """Who is offered the free table `spec`: the first party in the order they joined whose kind of
    table it is, who holds no offer and did not decline it ("Nechcú"). A party whose offer of it
    lapsed (nobody answered within the offer's minutes) comes after every other party for it, and
    is offered it again when nobody else waits for it: what a bartender does with a table that is
    still free (each lapse is a miss; after the venue's number of misses the party leaves the list)."""
    ready = [p for p in sorted(parties, key=lambda p: (p.joined_at, p.id)) if p.offered_table is None and p.may_get(spec)]
    return next((p for p in ready if p.lapsed_table != spec.id), None) or next(iter(ready), None)


def offer_span(offered_at: datetime, walk_in_min: int) -> Span:
    """What an offer to a waiting party holds: its table for a walk-in's usual game from when it
    was offered (what was checked free then). No booking is taken over it; a block, a game or the
    table out of service withdraws the offer (the party waits again in its place)."""
    return Span(offered_at, offered_at + timedelta(minutes=walk_in_min))


@dataclass(frozen=True)
class TableNow:
    """A table as the wait estimate sees it: when it is expected to be free."""

    spec: TableSpec
    free_at: datetime


def expected_free(
    now: datetime,
    *,
    started_at: datetime | None,
    prepaid_until: datetime | None,
    walk_in_min: int,
    claims: Sequence[Claim] = (),
) -> datetime:
    """When a table is expected to be free for a walk-in: now if nobody plays; a prepaid game's
    end; an open game's usual length from its start (at least 5 more minutes). A booking or a
    block that would start before a walk-in could finish pushes it past its end."""
    if started_at is None:
        free = now
    elif prepaid_until is not None:
        free = max(prepaid_until, now)
    else:
        free = max(started_at + timedelta(minutes=walk_in_min), now + timedelta(minutes=5))
    game = timedelta(minutes=walk_in_min)
    for c in sorted(claims, key=lambda c: c.span):
        if c.what in ("booking", "block") and c.span.start < free + game and c.span.end > free:
            free = c.span.end
    return free


def estimated_waits(parties: Sequence[Party], tables: Sequence[TableNow], now: datetime, walk_in_min: int) -> dict[int, int]:
    """Minutes each waiting party may expect to wait (party id → minutes): in the order they
    joined, each takes the fitting table expected to be free first (not one it declined: it is not
    offered that), and plays it for a walk-in's usual length before it frees again. A party no table
    fits is left out."""
    free = {t.spec.id: t.free_at for t in tables}
    specs = {t.spec.id: t.spec for t in tables}
    out: dict[int, int] = {}
    for p in sorted(parties, key=lambda p: (p.joined_at, p.id)):
        fitting = [tid for tid, spec in specs.items() if p.may_get(spec)]  # as next_party offers them
        if not fitting:
            continue
        best = min(fitting, key=lambda tid: free[tid])
        out[p.id] = math.ceil(max(0.0, (free[best] - now).total_seconds()) / 60)
        free[best] = max(free[best], now) + timedelta(minutes=walk_in_min)
    return out
