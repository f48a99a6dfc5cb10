"""When the hall closes, and which business day a moment belongs to. Pure: times in, times out."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime, time, timedelta

from broker.domain.venue import WEEKDAYS, Venue


def _periods(venue: Venue, at: datetime) -> Iterator[tuple[datetime, datetime]]:
    """Opening periods (open, close) in local time from yesterday's on, in order.

    A close at or before the open time means after midnight (Lavos: 16:00 - 00:00), so the
    period that started yesterday evening may still be running at 00:30.
    """
    if at.tzinfo is None:
        raise ValueError("naive datetime: pass timezone-aware UTC times")
    tz = venue.tz
    today = at.astimezone(tz).date()
    for offset in (-1, 0, 1):
        day = today + timedelta(days=offset)
        hours = venue.hours_on(WEEKDAYS[day.weekday()])
        close_day = day + timedelta(days=1) if hours.close <= hours.open else day
        yield datetime.combine(day, hours.open, tz), datetime.combine(close_day, hours.close, tz)


def opening_periods(venue: Venue, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The opening periods (open, close) that overlap [start, end), in UTC and in order: what a
    booking must lie within, and what the day view and the availability API show."""
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("naive datetime: pass timezone-aware UTC times")
    tz = venue.tz
    out: list[tuple[datetime, datetime]] = []
    day = start.astimezone(tz).date() - timedelta(days=1)
    last = end.astimezone(tz).date()
    while day <= last:
        hours = venue.hours_on(WEEKDAYS[day.weekday()])
        close_day = day + timedelta(days=1) if hours.close <= hours.open else day
        opens = datetime.combine(day, hours.open, tz).astimezone(UTC)
        closes = datetime.combine(close_day, hours.close, tz).astimezone(UTC)
        if opens < end and start < closes:
            out.append((opens, closes))
        day += timedelta(days=1)
    return out


def closing_time(venue: Venue, at: datetime) -> datetime:
    """The closing time of the period `at` falls in, or of the next one (in at's timezone)."""
    return next(close for _, close in _periods(venue, at) if at < close).astimezone(at.tzinfo)


# --- the business day ---------------------------------------------------------------------
# The hall's evening does not end at midnight: Lavos is open 16:00 - 00:00 and a game may run on
# after closing (the "still playing after closing" alert), while nothing opens before 15:00 (training).
# So a business day runs from the venue's cut ([billing] day_cut, default 06:00 local time) to the
# cut the next morning, and everything that happens in the night belongs to the evening before: the
# bill of a game stopped at 00:40, the ball drops at 01:15, the close-out at 01:30. The cut is
# wall-clock time in the venue's zone, so a DST night simply makes that business day 23 or 25 real
# hours long (2026-03-28 and 2026-10-24 at Lavos). This is the one rule: the close-out, the reports,
# the bills list and the tabs all ask these functions.
DAY_STARTS = time(6)  # the default cut (broker.domain.venue.Billing.day_cut)


def day_cut(venue: Venue) -> time:
    return venue.billing.day_cut


def _day_start(day: date, venue: Venue) -> datetime:
    """The cut that starts `day`, in UTC. A cut inside a DST gap (02:30 on the spring night) is read
    with the offset before the change (02:30 CET = 03:30 CEST), the same way every time, so days never
    overlap or leave a gap."""
    return datetime.combine(day, day_cut(venue), venue.tz).astimezone(UTC)


def business_day(at: datetime, venue: Venue) -> date:
    """The business day (the evening's date) that the moment `at` belongs to."""
    if at.tzinfo is None:
        raise ValueError("naive datetime: pass timezone-aware UTC times")
    day = at.astimezone(venue.tz).date()
    # Defined by the bounds themselves, so business_day and business_day_bounds can never disagree.
    return day - timedelta(days=1) if at < _day_start(day, venue) else day


def business_day_bounds(day: date, venue: Venue) -> tuple[datetime, datetime]:
    """[start, end) of the business day `day`, in UTC."""
    return _day_start(day, venue), _day_start(day + timedelta(days=1), venue)


def first_open_day(day: date, is_closed: Callable[[date], bool]) -> date:
    """`day`, or the first day after it that is not closed: the one rule of where money lands
    once a day's close-out is done (a late payment, a reversal, the day staff work on)."""
    while is_closed(day):
        day += timedelta(days=1)
    return day


def counting_day(at: datetime, venue: Venue, closed: Mapping[date, datetime]) -> date:
    """The day whose close-out counts something done at `at`: its business day, or, when that day
    had already been closed by then (`closed`: day -> closed_at), the next day still open then.

    So a void at 02:00 after the close-out at 01:30 goes to the next day's Z report, never back
    into the closed one, and the rule gives the same answer whenever it is asked."""
    return first_open_day(business_day(at, venue), lambda d: (shut := closed.get(d)) is not None and shut <= at)


def business_hours(venue: Venue) -> tuple[int, ...]:
    """The local hours of day in the order a business day runs through them (cut 06:00: 6, 7, ... 23, 0, ... 5)."""
    first = day_cut(venue).hour
    return tuple((first + n) % 24 for n in range(24))


# The hours of a business day with the default cut (older callers; business_hours(venue) follows the venue).
BUSINESS_HOURS: tuple[int, ...] = tuple((DAY_STARTS.hour + n) % 24 for n in range(24))
