"""The business day (broker.domain.schedule): 06:00 to 06:00 local time, so the night belongs to the
evening before, over midnight, New Year's Eve and both DST nights of 2026 in Bratislava."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from broker.domain.schedule import BUSINESS_HOURS, business_day, business_day_bounds
from tests.broker.domain.test_tariffs import LAVOS, bratislava


@pytest.mark.parametrize(
    ("local", "day"),
    [
        ((2026, 11, 10, 23, 59), date(2026, 11, 10)),
        ((2026, 11, 11, 0, 0), date(2026, 11, 10)),  # midnight: still the evening of the 10th
        ((2026, 11, 11, 0, 40), date(2026, 11, 10)),
        ((2026, 11, 11, 5, 59), date(2026, 11, 10)),
        ((2026, 11, 11, 6, 0), date(2026, 11, 11)),
        ((2026, 11, 11, 15, 0), date(2026, 11, 11)),  # training starts before opening
        ((2026, 12, 31, 23, 30), date(2026, 12, 31)),  # New Year's Eve ...
        ((2027, 1, 1, 1, 15), date(2026, 12, 31)),  # ... still the old year's evening after midnight
        ((2027, 1, 1, 6, 0), date(2027, 1, 1)),
        ((2026, 3, 29, 1, 59), date(2026, 3, 28)),  # DST starts: 02:00 becomes 03:00
        ((2026, 3, 29, 3, 0), date(2026, 3, 28)),
        ((2026, 3, 29, 6, 0), date(2026, 3, 29)),
        ((2026, 10, 25, 2, 30), date(2026, 10, 24)),  # DST ends: 02:00-03:00 comes twice
        ((2026, 10, 25, 5, 59), date(2026, 10, 24)),
        ((2026, 10, 25, 6, 0), date(2026, 10, 25)),
    ],
)
def test_a_moment_belongs_to_the_evening_before_until_six(local: Any, day: Any) -> None:
    assert business_day(bratislava(*local), LAVOS) == day


def test_both_halves_of_the_doubled_hour_are_the_same_evening() -> None:
    first = datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST
    second = first + timedelta(hours=1)  # 02:30 CET, an hour later
    assert business_day(first, LAVOS) == business_day(second, LAVOS) == date(2026, 10, 24)


@pytest.mark.parametrize(
    ("day", "hours"),
    [(date(2026, 11, 10), 24), (date(2026, 3, 28), 23), (date(2026, 3, 29), 24), (date(2026, 10, 24), 25), (date(2026, 12, 31), 24)],
)
def test_bounds_run_from_six_to_six_and_a_dst_night_changes_the_length(day: Any, hours: Any) -> None:
    start, end = business_day_bounds(day, LAVOS)
    assert start == bratislava(day.year, day.month, day.day, 6, 0)
    assert (end - start) == timedelta(hours=hours)
    assert business_day(start, LAVOS) == day and business_day(end - timedelta(microseconds=1), LAVOS) == day
    assert business_day(end, LAVOS) == day + timedelta(days=1)
    nxt, _ = business_day_bounds(day + timedelta(days=1), LAVOS)
    assert nxt == end  # consecutive days leave no gap and no overlap


def test_hours_in_business_order_and_naive_times_refused() -> None:
    assert BUSINESS_HOURS[0] == 6 and BUSINESS_HOURS[17] == 23 and BUSINESS_HOURS[18] == 0 and sorted(BUSINESS_HOURS) == list(range(24))
    with pytest.raises(ValueError, match="naive"):
        business_day(datetime(2026, 11, 10, 23, 0), LAVOS)
