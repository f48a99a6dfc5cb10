"""When the hall closes. Pure: times in, times out."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

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
