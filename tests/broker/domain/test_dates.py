"""The hall's one parser of the dates and times people write (broker.domain.dates): pure, so every
edge is cheap to try: the hall's range, the offsets that carried year 1 and 9999 out of Python's
dates (the 500s of issue 29), the spring night's missing hour and the autumn night's double one."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.domain.dates import YEARS_AHEAD, YEARS_BACK, DateRefused, HallDates, clock_time

TZ = ZoneInfo("Europe/Bratislava")
HALL = HallDates(TZ, date(2026, 12, 4))  # the hall's range: 2016-01-01 .. 2028-12-31


def test_the_range_is_ten_years_back_and_two_ahead_whole_years() -> None:
    assert (HALL.first, HALL.last) == (date(2026 - YEARS_BACK, 1, 1), date(2026 + YEARS_AHEAD, 12, 31))
    assert HALL.day("2016-01-01") == date(2016, 1, 1) and HALL.day("2028-12-31") == date(2028, 12, 31)
    for outside in ("2015-12-31", "2029-01-01", "0001-01-01", "9999-12-31", "9999-12-30", "1970-01-01"):
        with pytest.raises(DateRefused, match="outside the dates the hall works with, 2016-01-01 to 2028-12-31"):
            HALL.day(outside)


@pytest.mark.parametrize(
    "written",
    [
        "0001-01-01T00:00:00+14:00",
        "9999-12-31T23:59:00+00:00",
        "9999-12-31T23:00:00-12:00",
        "0001-01-01T00:00:00",
        "9999-12-31T23:59:59.999999Z",
        "2015-12-31T23:30:00",  # the day before the range on the hall's clock
        "2016-01-01T00:30:00+02:00",  # 2015-12-31 23:30 at the hall: the venue's date decides
        "2028-12-31T23:30:00-01:00",  # 2029-01-01 01:30 at the hall
    ],
)
def test_a_time_outside_the_range_is_refused_before_any_arithmetic_can_overflow(written: Any) -> None:
    with pytest.raises(DateRefused, match="outside the dates"):
        HALL.moment(written)


def test_with_an_offset_a_time_is_exact_without_one_it_is_the_halls_wall_clock() -> None:
    assert HALL.moment("2026-12-04T20:00:00+01:00") == datetime(2026, 12, 4, 19, tzinfo=UTC)
    assert HALL.moment("2026-12-04T20:00") == datetime(2026, 12, 4, 19, tzinfo=UTC)
    assert HALL.moment("2026-07-04 20:00:30.5") == datetime(2026, 7, 4, 18, 0, 30, 500000, tzinfo=UTC)
    assert HALL.moment("2026-12-04t19:00z") == HALL.moment("2026-12-04T19:00:00+00:00") == datetime(2026, 12, 4, 19, tzinfo=UTC)
    assert HALL.moment("2026-12-04T20:00+14:00") == datetime(2026, 12, 4, 6, tzinfo=UTC)


def test_the_spring_nights_missing_hour_is_refused_the_autumn_nights_double_hour_is_its_first() -> None:
    with pytest.raises(DateRefused, match="02:30 does not exist that night"):
        HALL.moment("2027-03-28T02:30:00")
    with pytest.raises(DateRefused, match="does not exist"):
        HALL.wall_clock(date(2027, 3, 28), time(2, 0))
    # With its offset it is a real moment: 02:30 CET that night is 03:30 summer time.
    assert HALL.moment("2027-03-28T02:30:00+01:00") == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)
    # 02:30 on the autumn night is there twice: the first, still summer time (+02:00).
    assert HALL.moment("2026-10-25T02:30") == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert HALL.wall_clock(date(2026, 10, 25), time(2, 30)) == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    "written",
    ["", "2026-12-04T", "2026-12-04T24:00", "2026-02-30T20:00", "2026-12-04T20:00+25:00", "1700000000", "20261204T2000", "tomorrow"],
)
def test_what_is_not_a_date_and_time_is_refused_as_such(written: Any) -> None:
    with pytest.raises(DateRefused, match="is not a date and time"):
        HALL.moment(written)


@pytest.mark.parametrize("written", ["2026-13-01", "2026-02-30", "20261204", "2026-W49-5", "2026-12-04T20:00", "４０２６-01-01", " "])
def test_what_is_not_a_day_is_refused_as_such(written: Any) -> None:
    with pytest.raises(DateRefused, match="is not a date: give a day as"):
        HALL.day(written)


def test_months_days_or_moments_and_times_of_day() -> None:
    assert HALL.month("2026-02") == date(2026, 2, 1)
    for bad in ("2026-13", "2026-1", "2026-00", "26-01"):
        with pytest.raises(DateRefused, match="is not a month"):
            HALL.month(bad)
    with pytest.raises(DateRefused, match="outside"):
        HALL.month("9999-12")
    assert HALL.day_or_moment("2026-12-04") == date(2026, 12, 4)
    assert HALL.day_or_moment("2026-12-04T20:00") == datetime(2026, 12, 4, 19, tzinfo=UTC)
    assert clock_time("20.30") == time(20, 30) and clock_time("2000") == time(20) and clock_time(" 9 ") == time(9)


# Whatever is written, and whatever the hall's today: a day or time in the range (aware UTC), or a
# DateRefused; never another exception (an OverflowError was a 500).
TEXTS = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda d, t, sep, off: f"{d.isoformat()}{sep}{t.isoformat()}{off}",
        st.dates(),
        st.times(),
        st.sampled_from(["T", " ", "t"]),
        st.sampled_from(["", "Z", "+14:00", "-12:00", "+23:59", "-00:30", "+0100"]),
    ),
    st.dates().map(date.isoformat),
)


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, today=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 12, 31)))
def test_every_text_is_a_date_in_the_range_or_a_refusal(text: Any, today: Any) -> None:
    hall = HallDates(TZ, today)
    for read in (hall.day, hall.month, hall.moment, hall.day_or_moment):
        try:
            value = read(text)
        except DateRefused:
            continue
        if isinstance(value, datetime):
            assert value.tzinfo is UTC and hall.first <= value.astimezone(TZ).date() <= hall.last
            assert value + timedelta(days=31) > value  # a window from it can still be worked out
        else:
            assert hall.first <= value <= hall.last
