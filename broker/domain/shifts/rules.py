"""Shifts: who worked when, what each took and voided, and the drawer counted between them. Pure.

- A shift's length is the real time elapsed, `worked_minutes`: the difference of two UTC instants,
  so a shift over midnight, over New Year's Eve or over either DST night counts what the bartender
  really worked (20:00-06:00 local is 9 h on the spring night, 11 h on the autumn one).
- A shift belongs to the business day it starts on (the till's rule, broker.domain.schedule): the
  hours of a month are those of the shifts whose day is in it (the New Year's Eve shift is
  December's).
- Money is attributed by the actor the till already records: a payment (or a reversal) to the
  shift of the person who took it that was running at that moment; a void likewise. What someone
  took outside any shift of theirs stays theirs, as a row "outside a shift", so the shift report's
  rows always add up to the Z report's takings.
- The drawer: the day starts from its float; a count at a shift change closes a segment (expected:
  its start plus the cash taken in it and its rounding; the difference counted less expected) and
  the next segment starts from what was counted. The close-out's count ends the last segment, so
  the day's variance (Z report) is the sum of the segments' differences, to the cent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from broker.domain.refusals import N_, Refusal

MAX_SHIFT = timedelta(hours=24)  # a longer one is a forgotten clock-out: the manager corrects it
REASON_MAX = 300


class ShiftRefused(Refusal):
    """A shift cannot be started, ended or corrected as asked; the message says what to do."""


class ShiftMissing(Refusal):
    """No such shift (or it was corrected since: its correction is the shift now)."""


def worked_minutes(start: datetime, end: datetime) -> int:
    """Whole minutes really elapsed from `start` to `end` (aware times; DST changes count as they are)."""
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("naive datetime: pass timezone-aware times")
    return max(0, int((end - start).total_seconds()) // 60)


def check_span(start: datetime, end: datetime | None, now: datetime) -> None:
    """A shift's times as a manager may set them: not in the future, an end after the start, at most 24 h."""
    if start > now or (end is not None and end > now):
        raise ShiftRefused(N_("A shift cannot start or end in the future."))
    if end is not None and end <= start:
        raise ShiftRefused(N_("A shift must end after it starts."))
    if end is not None and end - start > MAX_SHIFT:
        raise ShiftRefused(N_("A shift cannot be longer than 24 hours."))


def clean_reason(text: str) -> str:
    """A correction's reason: required, one line, at most REASON_MAX characters."""
    reason = " ".join(text.split())
    if not reason:
        raise ShiftRefused(N_("Say why the shift is corrected (e.g. forgot to clock out)."))
    if len(reason) > REASON_MAX:
        raise ShiftRefused(N_("The reason is too long (at most %(max)d characters)."), max=REASON_MAX)
    return reason


# --- shifts and the money taken in them ---------------------------------------------------------


@dataclass(frozen=True)
class ShiftSpan:
    """A shift as it stands (its latest correction): `end` None while it runs."""

    id: int
    staff: str
    day: date
    start: datetime
    end: datetime | None


@dataclass(frozen=True)
class Taken:
    """A payment or a reversal (negative) as the shifts read it: who, when, how much, how."""

    staff: str
    at: datetime
    method: str
    amount_cents: int
    rounding_cents: int = 0


@dataclass(frozen=True)
class Voided:
    """An item voided on a tab: who, when, how much it took off the bill."""

    staff: str
    at: datetime
    amount_cents: int


@dataclass
class ShiftTakings:
    """What a person took and voided in one shift (`shift` None: outside any shift of theirs)."""

    staff: str
    shift: ShiftSpan | None
    by_method: dict[str, int] = field(default_factory=dict)
    payments: int = 0
    voids: int = 0
    voids_cents: int = 0

    @property
    def total_cents(self) -> int:
        return sum(self.by_method.values())

    def minutes(self, now: datetime) -> int:
        if self.shift is None:
            return 0
        return worked_minutes(self.shift.start, self.shift.end or now)


def shift_at(shifts: Iterable[ShiftSpan], staff: str, at: datetime, now: datetime) -> ShiftSpan | None:
    """The shift of `staff` running at `at` (a running one up to `now`)."""
    for s in shifts:
        if s.staff == staff and s.start <= at < (s.end or now + timedelta(microseconds=1)):
            return s
    return None


def takings_by_shift(shifts: Sequence[ShiftSpan], taken: Iterable[Taken], voided: Iterable[Voided], now: datetime) -> list[ShiftTakings]:
    """One row per shift (in order of start) and one per person who took or voided something outside
    a shift of theirs; the rows' totals add up to the money `taken` (the Z report's takings)."""
    rows: dict[tuple[str, int | None], ShiftTakings] = {(s.staff, s.id): ShiftTakings(s.staff, s) for s in shifts}

    def row(staff: str, at: datetime) -> ShiftTakings:
        s = shift_at(shifts, staff, at, now)
        key = (staff, s.id if s is not None else None)
        return rows.setdefault(key, ShiftTakings(staff, s))

    for t in taken:
        r = row(t.staff, t.at)
        r.by_method[t.method] = r.by_method.get(t.method, 0) + t.amount_cents
        r.payments += 1 if t.amount_cents >= 0 else 0
    for v in voided:
        r = row(v.staff, v.at)
        r.voids += 1
        r.voids_cents += v.amount_cents
    far = datetime.max.replace(tzinfo=now.tzinfo)
    return sorted(rows.values(), key=lambda r: (r.shift is None, r.shift.start if r.shift else far, r.staff))


@dataclass(frozen=True)
class MonthHours:
    """A person's hours in a month (the shifts whose business day is in it)."""

    staff: str
    month: str  # "2026-12"
    shifts: int
    minutes: int


def month_hours(shifts: Iterable[ShiftSpan], now: datetime) -> list[MonthHours]:
    """Minutes worked per person and month (by the shift's business day; a running shift up to `now`)."""
    acc: dict[tuple[str, str], list[int]] = {}
    for s in shifts:
        a = acc.setdefault((s.staff, f"{s.day.year:04d}-{s.day.month:02d}"), [0, 0])
        a[0] += 1
        a[1] += worked_minutes(s.start, s.end or now)
    return [MonthHours(staff, month, n, m) for (staff, month), (n, m) in sorted(acc.items(), key=lambda kv: (kv[0][1], kv[0][0]))]


# --- the drawer ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Count:
    """A count of the drawer: at a shift change (`closing` False) or the close-out's."""

    at: datetime
    by: str
    counted_cents: int
    closing: bool = False


@dataclass(frozen=True)
class Segment:
    """The drawer from one count (or the float) to the next: what it should hold and what it held."""

    start_at: datetime | None
    start_cents: int  # the float, or the previous count
    cash_cents: int  # cash taken less cash given back in it, with its rounding
    end: Count | None  # None: still running

    @property
    def expected_cents(self) -> int:
        return self.start_cents + self.cash_cents

    @property
    def difference_cents(self) -> int | None:
        """Counted less expected: negative means cash is missing."""
        return None if self.end is None else self.end.counted_cents - self.expected_cents


def drawer_segments(float_cents: int, opened_at: datetime | None, counts: Sequence[Count], cash: Iterable[Taken]) -> list[Segment]:
    """The day's drawer in segments between its counts (in order of time); a payment at the very
    moment of a count is in the segment that count closes. The last is open unless the close-out's count ends it."""
    ordered = sorted(counts, key=lambda c: c.at)
    moves = sorted(cash, key=lambda t: t.at)
    out: list[Segment] = []
    start_at, start = opened_at, float_cents
    i = 0
    for c in ordered:
        taken = 0
        while i < len(moves) and moves[i].at <= c.at:
            taken += moves[i].amount_cents + moves[i].rounding_cents
            i += 1
        out.append(Segment(start_at, start, taken, c))
        start_at, start = c.at, c.counted_cents
        if c.closing:
            return out
    rest = sum(t.amount_cents + t.rounding_cents for t in moves[i:])
    out.append(Segment(start_at, start, rest, None))
    return out
