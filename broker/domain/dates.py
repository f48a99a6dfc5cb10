"""Every date and time a person gives the hall, read one way: the one parser behind the API's date
types (dashboard.api.dates) and the pages' date fields. Pure: text and the hall's calendar in,
dates and aware UTC times out, or a refusal that says what to write instead.

- A day is written 2026-12-04; a month 2026-12; a time 2026-12-04T20:00 (seconds and a fraction
  may follow), with its offset (2026-12-04T20:00+01:00, or Z) or without one: then it is read on
  the venue's wall clock (Europe/Bratislava at Lavos). A form's time of day is 20:00 (or 20.00,
  2000, 20), on the day its form gives.
- The hall's range: from 1 January ten years back (what a Slovak hall keeps its accounting records
  for: the reports, the bills and the closed days of those years) to 31 December two years ahead
  (as far as bookings and tournaments are planned). Anything outside is refused as written, before
  any arithmetic, so year 1 with +14:00 or 9999-12-31 never reaches a conversion that overflows.
- The venue's daylight-saving nights: a wall-clock time the spring night skips (02:30 on the last
  Sunday of March) does not exist and is refused, naming the time; one the autumn night has twice
  (02:30 on the last Sunday of October) is its first occurrence, still summer time (CEST): the
  earlier of the two, so a booking or a block never starts later than the guest was told. With an
  offset the time is exact either way (02:30+01:00 on the spring night is 03:30 summer time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, tzinfo

from broker.domain.refusals import N_, Name, Refusal

YEARS_BACK = 10
YEARS_AHEAD = 2

NOT_A_DAY = N_("%(value)s is not a date: give a day as 2026-11-30.")
NOT_A_MONTH = N_("%(value)s is not a month: give one as 2026-11.")
NOT_A_TIME = N_(
    "%(value)s is not a date and time: give one as 2026-12-04T20:00 (the hall's clock) or with its offset, 2026-12-04T20:00+01:00."
)
OUTSIDE = N_("%(value)s is outside the dates the hall works with, %(first)s to %(last)s.")
SKIPPED = N_("%(time)s does not exist that night (the clocks go forward); choose another time.")
NOT_A_CLOCK = N_("Write the time as hours and minutes, e.g. 20:00.")

# ASCII digits only: \d would read fullwidth digits (U+FF14 U+FF10 U+FF12 U+FF16) as the year 4026.
_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_MONTH = re.compile(r"(\d{4})-(\d{2})", re.ASCII)
_TIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ]\d{2}:\d{2}(:\d{2}([.,]\d{1,9})?)?([Zz]|[+-]\d{2}(:?\d{2})?)?", re.ASCII)
_CLOCK = re.compile(r"(\d{1,2})(?::?(\d{2}))?", re.ASCII)
_SHOWN = 40  # characters of what was written that a refusal repeats


class DateRefused(Refusal):
    """A date or time the hall cannot take: not one, outside the hall's range, or a wall-clock time
    the venue's clocks skip. Bad input: the API answers 422, a page 400 (or its form again)."""


def _shown(value: str) -> str:
    return value[:_SHOWN]


def _day_name(day: date) -> Name:
    """A day in a refusal: 1. 1. 2016 on a Slovak page, 2016-01-01 in English (the API)."""
    return Name(f"{day.day}. {day.month}. {day.year}", day.isoformat())


def clock_time(value: str) -> time:
    """A time of day typed into a form: '20:00', '20.00', '2000', '20' → 20:00."""
    m = _CLOCK.fullmatch(value.strip().replace(".", ":").replace(" ", ""))
    if m is None or int(m.group(1)) > 23 or int(m.group(2) or 0) > 59:
        raise DateRefused(NOT_A_CLOCK)
    return time(int(m.group(1)), int(m.group(2) or 0))


def wall_clock(day: date, at: time, tz: tzinfo) -> datetime:
    """A wall-clock time at the venue as aware UTC: refused when the spring night skips it; the
    first occurrence when the autumn night has it twice. The one DST rule of every form and API."""
    naive = datetime.combine(day, at)
    aware = naive.replace(tzinfo=tz, fold=0)
    if aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) != naive:
        raise DateRefused(SKIPPED, time=at.strftime("%H:%M"))
    return aware.astimezone(UTC)


@dataclass(frozen=True)
class HallDates:
    """The hall's calendar for reading what people write: its time zone and today's business day."""

    tz: tzinfo
    today: date

    @property
    def first(self) -> date:
        return date(self.today.year - YEARS_BACK, 1, 1)

    @property
    def last(self) -> date:
        return date(self.today.year + YEARS_AHEAD, 12, 31)

    def _outside(self, value: str) -> DateRefused:
        return DateRefused(OUTSIDE, value=_shown(value), first=_day_name(self.first), last=_day_name(self.last))

    def _year(self, digits: str, value: str) -> int:
        year = int(digits)
        if not self.first.year <= year <= self.last.year:
            raise self._outside(value)
        return year

    def within(self, day: date, value: str | None = None) -> date:
        """`day` if it is in the hall's range (`value`: how it was written, for the refusal)."""
        if not self.first <= day <= self.last:
            raise self._outside(value if value is not None else day.isoformat())
        return day

    def day(self, value: str) -> date:
        """2026-12-04 → that day."""
        m = _DAY.fullmatch(value.strip())
        if m is None:
            raise DateRefused(NOT_A_DAY, value=_shown(value))
        year = self._year(m.group(1), value)
        try:
            return date(year, int(m.group(2)), int(m.group(3)))
        except ValueError:  # 2026-02-30
            raise DateRefused(NOT_A_DAY, value=_shown(value)) from None

    def month(self, value: str) -> date:
        """2026-12 → its first day."""
        m = _MONTH.fullmatch(value.strip())
        if m is None or not 1 <= int(m.group(2)) <= 12:
            raise DateRefused(NOT_A_MONTH, value=_shown(value))
        return date(self._year(m.group(1), value), int(m.group(2)), 1)

    def wall_clock(self, day: date, at: time) -> datetime:
        """A day and a time typed into a form (the hall's clock) as aware UTC, in range, DST checked."""
        return wall_clock(self.within(day), at, self.tz)

    def moment(self, value: str) -> datetime:
        """An ISO 8601 date and time as aware UTC: with its offset as written, without one on the
        venue's wall clock; the venue's date of that moment in the hall's range."""
        text = value.strip()
        m = _TIME.fullmatch(text)
        if m is None:
            raise DateRefused(NOT_A_TIME, value=_shown(value))
        self._year(m.group(1), value)  # before any arithmetic: no offset can carry it out of range
        try:
            written = datetime.fromisoformat(text.replace(",", ".").upper().replace(" ", "T"))
        except ValueError:  # 2026-02-30T20:00, 24:00, an offset of 25 hours
            raise DateRefused(NOT_A_TIME, value=_shown(value)) from None
        at = wall_clock(written.date(), written.time(), self.tz) if written.tzinfo is None else written.astimezone(UTC)
        self.within(at.astimezone(self.tz).date(), value)
        return at

    def day_or_moment(self, value: str) -> date | datetime:
        """A day (2026-12-04) or a moment (2026-12-04T20:00…): a window's end that may be either."""
        return self.day(value) if _DAY.fullmatch(value.strip()) else self.moment(value)
