"""When the hall closes, and which business day a moment belongs to. Pure: times in, times out."""

from __future__ import annotations

from collections.abc import Iterator
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


def closing_time(venue: Venue, at: datetime) -> datetime:
    """The closing time of the period `at` falls in, or of the next one (in at's timezone)."""
    return next(close for _, close in _periods(venue, at) if at < close).astimezone(at.tzinfo)


# --- the business day ---------------------------------------------------------------------
# The hall's evening does not end at midnight: Lavos is open 16:00 - 00:00 and a game may run on
# after closing (the "still playing after closing" alert), while nothing opens before 15:00 (training).
# So a business day runs from 06:00 local time to 06:00 the next morning, and everything that
# happens in the night belongs to the evening before: the bill of a game stopped at 00:40, the
# ball drops at 01:15. 06:00 is wall-clock time in the venue's zone, so a DST night simply makes
# that business day 23 or 25 real hours long (2026-03-28 and 2026-10-24 at Lavos).
DAY_STARTS = time(6)


def business_day(at: datetime, venue: Venue) -> date:
    """The business day (the evening's date) that the moment `at` belongs to."""
    if at.tzinfo is None:
        raise ValueError("naive datetime: pass timezone-aware UTC times")
    local = at.astimezone(venue.tz)
    return local.date() - timedelta(days=1) if local.time() < DAY_STARTS else local.date()


def business_day_bounds(day: date, venue: Venue) -> tuple[datetime, datetime]:
    """[start, end) of the business day `day`, in UTC."""
    start = datetime.combine(day, DAY_STARTS, venue.tz)
    end = datetime.combine(day + timedelta(days=1), DAY_STARTS, venue.tz)
    return start.astimezone(UTC), end.astimezone(UTC)


# The local hours of day in the order a business day runs through them: 6, 7, ... 23, 0, ... 5.
BUSINESS_HOURS: tuple[int, ...] = tuple((DAY_STARTS.hour + n) % 24 for n in range(24))
