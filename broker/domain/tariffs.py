"""Which rate applies to a table at a moment, and where inside an interval it changes.

Rules are in the venue's local time (opening hours, time bands, training hours, the calendar
year of the membership fee); instants are aware UTC. Converting each local boundary to UTC
through the venue's zone is what makes a band 16:00-18:00 land right on both sides of a DST
change, and lets a band over the short night in March last five real hours, not six.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta

from broker.domain.venue import WEEKDAYS, Tariff, TimeBand, Venue


def as_utc(at: object, what: str = "time") -> datetime:
    """An aware datetime in UTC; a naive one is refused, since its zone would be a guess."""
    if not isinstance(at, datetime):
        raise ValueError(f"{what} must be a datetime, got {type(at).__name__}")
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"{what} {at.isoformat()} has no timezone; pass an aware datetime (UTC)")
    return at.astimezone(UTC)


def local(at: datetime, venue: Venue) -> datetime:
    return as_utc(at).astimezone(venue.tz)


def calendar_year(at: datetime, venue: Venue) -> int:
    """The fee year at this instant: 31 Dec 23:30 UTC is already next year in Bratislava."""
    return local(at, venue).year


@dataclass(frozen=True)
class MemberSnapshot:
    """A member as known when the card was shown, so a replay never asks the registry again.

    The card is valid at an instant when the fee of that instant's calendar year (the venue's
    local year) is paid: the club's rule is "valid only while the current year is paid, due by
    1 January", so it is judged at every moment, not once when the card was shown. A game
    never outlives two years, so the snapshot carries the two fee years it can meet: `year` (when
    the card was shown, paid: `fee_paid`) and the next one (`next_year_paid`). Any later year is
    unknown and counts as unpaid. Without `year` (ops stored before the fee year was recorded)
    `fee_paid` holds for the whole game.
    """

    member_id: int
    name: str
    fee_paid: bool
    year: int | None = None
    next_year_paid: bool = False

    def paid_for(self, year: int) -> bool:
        if self.year is None:
            return self.fee_paid
        return {self.year: self.fee_paid, self.year + 1: self.next_year_paid}.get(year, False)

    def card_valid(self, at: datetime, venue: Venue) -> bool:
        return self.paid_for(calendar_year(at, venue))

    def year_ends(self, venue: Venue) -> list[datetime]:
        """The New Year's midnights where the card's validity may change."""
        if self.year is None:
            return []
        return [_at_local(date(y, 1, 1), time(0), venue) for y in (self.year + 1, self.year + 2)]

    def to_dict(self) -> dict[str, object]:
        return {
            "member_id": self.member_id,
            "name": self.name,
            "fee_paid": self.fee_paid,
            "year": self.year,
            "next_year_paid": self.next_year_paid,
        }


@dataclass(frozen=True)
class RateContext:
    """What the rate depends on besides the clock; it changes only through game operations."""

    table: str
    tariff: str | None = None  # a requested special tariff (training); None = standard or club card
    tariff_until: datetime | None = None  # when the requested tariff's hours end
    member: MemberSnapshot | None = None


@dataclass(frozen=True)
class Rate:
    tariff_id: str
    rate_cents_per_hour: int
    # basis: why this tariff ("standard", "club_card", "card_unpaid", "card_table_not_eligible",
    # "<tariff>", "<tariff>_hours_ended"); reason: basis, or "band:<name>" when a band sets the rate.
    basis: str
    reason: str
    band: str | None = None


@dataclass(frozen=True)
class Segment:
    """A stretch of played (not paused) time on one table at one rate."""

    start: datetime
    end: datetime
    table: str
    tariff_id: str
    rate_cents_per_hour: int
    reason: str
    basis: str
    band: str | None = None

    @property
    def key(self) -> tuple[str, str, int, str, str]:
        """Segments with equal keys, one after another, are one bill line."""
        return (self.table, self.tariff_id, self.rate_cents_per_hour, self.reason, self.basis)

    @property
    def duration(self) -> timedelta:
        return self.end - self.start


def _at_local(day: date, t: time, venue: Venue) -> datetime:
    # fold=0: a wall time that happens twice (October) means its first occurrence, one that
    # never happens (March) means the instant it would have been before the clocks moved.
    return datetime.combine(day, t, tzinfo=venue.tz).astimezone(UTC)


def _window(day: date, start: time, end: time, venue: Venue) -> tuple[datetime, datetime]:
    """[start, end) opening on `day`; an end at or before the start is on the next day."""
    end_day = day + timedelta(days=1) if end <= start else day
    return _at_local(day, start, venue), _at_local(end_day, end, venue)


def _days_around(a: datetime, b: datetime, venue: Venue) -> Iterator[date]:
    # From the day before: a window that opened yesterday may run past midnight into [a, b).
    day = local(a, venue).date() - timedelta(days=1)
    last = local(b, venue).date()
    while day <= last:
        yield day
        day += timedelta(days=1)


def _band_windows(band: TimeBand, a: datetime, b: datetime, venue: Venue) -> Iterator[tuple[datetime, datetime]]:
    for day in _days_around(a, b, venue):
        if WEEKDAYS[day.weekday()] in band.days:
            yield _window(day, band.start, band.end, venue)


def tariff_window(tariff: Tariff, at: datetime, venue: Venue) -> tuple[datetime, datetime] | None:
    """The allowed-hours window of `tariff` containing `at`; None when `at` is outside its hours."""
    if tariff.hours is None:
        return None
    at = as_utc(at)
    for day in _days_around(at, at, venue):
        start, end = _window(day, tariff.hours.open, tariff.hours.close, venue)
        if start <= at < end:
            return start, end
    return None


def _venue_tariff(venue: Venue, tariff_id: str) -> Tariff:
    try:
        return venue.tariff(tariff_id)
    except KeyError as e:
        raise ValueError(e.args[0]) from None


def _tariff_choice(venue: Venue, ctx: RateContext, at: datetime) -> tuple[str, str]:
    """(tariff id, basis) before time bands."""
    if ctx.tariff is not None and (ctx.tariff_until is None or at < ctx.tariff_until):
        return ctx.tariff, ctx.tariff
    billing = venue.billing
    member = ctx.member
    if member is not None and venue.table(ctx.table).club_card and member.card_valid(at, venue):
        return billing.member_tariff, "club_card"
    if ctx.tariff is not None:
        basis = f"{ctx.tariff}_hours_ended"
    elif member is None:
        basis = "standard"
    elif not venue.table(ctx.table).club_card:
        basis = "card_table_not_eligible"
    else:
        basis = "card_unpaid"
    return billing.default_tariff, basis


def rate_at(venue: Venue, ctx: RateContext, at: datetime) -> Rate:
    at = as_utc(at)
    tariff_id, basis = _tariff_choice(venue, ctx, at)
    tariff = _venue_tariff(venue, tariff_id)
    # The first listed band wins where bands of one tariff overlap: the file's order decides.
    for band in venue.bands:
        if band.tariff == tariff_id and any(s <= at < e for s, e in _band_windows(band, at, at, venue)):
            return Rate(tariff_id, band.rate_cents_per_hour, basis, f"band:{band.name}", band.name)
    return Rate(tariff_id, tariff.rate_cents_per_hour, basis, basis)


def boundaries(venue: Venue, ctx: RateContext, a: datetime, b: datetime) -> list[datetime]:
    """Every instant strictly inside (a, b) where the rate may change, sorted."""
    cuts: set[datetime] = set()
    for band in venue.bands:
        for s, e in _band_windows(band, a, b, venue):
            cuts.update((s, e))
    if ctx.tariff_until is not None:
        cuts.add(ctx.tariff_until)
    if ctx.member is not None:
        cuts.update(ctx.member.year_ends(venue))
    return sorted(c for c in cuts if a < c < b)


def split(venue: Venue, ctx: RateContext, a: datetime, b: datetime) -> list[Segment]:
    """[a, b) on ctx.table cut into segments of constant rate; adjacent equal ones merged."""
    a, b = as_utc(a, "interval start"), as_utc(b, "interval end")
    if b < a:
        raise ValueError(f"interval ends ({b.isoformat()}) before it starts ({a.isoformat()})")
    points = [a, *boundaries(venue, ctx, a, b), b]
    segments: list[Segment] = []
    for start, end in itertools.pairwise(points):
        if start == end:
            continue
        r = rate_at(venue, ctx, start)
        seg = Segment(start, end, ctx.table, r.tariff_id, r.rate_cents_per_hour, r.reason, r.basis, r.band)
        if segments and segments[-1].key == seg.key and segments[-1].end == start:
            seg = replace(seg, start=segments.pop().start)
        segments.append(seg)
    return segments
