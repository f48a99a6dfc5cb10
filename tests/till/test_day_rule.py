"""The business day's cut comes from the venue file ([billing] day_cut, default 06:00) and is the one
rule everything counts by: over midnight, New Year's Eve and both DST nights of 2026 in Bratislava."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import ValidationError

from broker.domain.schedule import business_day, business_day_bounds, business_hours, counting_day
from broker.domain.venue import Billing
from tests.broker.domain.test_tariffs import LAVOS, bratislava

if TYPE_CHECKING:
    from broker.domain.venue import Venue


def with_cut(cut: time) -> Venue:
    return LAVOS.model_copy(update={"billing": LAVOS.billing.model_copy(update={"day_cut": cut})})


def test_the_default_cut_is_six_and_the_venue_file_sets_it() -> None:
    assert Billing().day_cut == time(6) and LAVOS.billing.day_cut == time(6)
    assert Billing.model_validate({"day_cut": "04:30"}).day_cut == time(4, 30)
    for bad in ("4:30", "25:00", "06:00:00", "", 6):
        with pytest.raises(ValidationError):
            Billing.model_validate({"day_cut": bad})


@pytest.mark.parametrize("cut", [time(6), time(4), time(2, 30), time(3), time(0)])
@pytest.mark.parametrize(
    "day",
    [date(2026, 3, 28), date(2026, 3, 29), date(2026, 10, 24), date(2026, 10, 25), date(2026, 12, 31), date(2027, 1, 1)],
)
def test_days_follow_each_other_without_gap_or_overlap_for_any_cut_dst_nights_included(cut: Any, day: Any) -> None:
    venue = with_cut(cut)
    start, end = business_day_bounds(day, venue)
    assert business_day_bounds(day + timedelta(days=1), venue)[0] == end
    assert timedelta(hours=23) <= end - start <= timedelta(hours=25)
    assert business_day(start, venue) == day
    assert business_day(end - timedelta(microseconds=1), venue) == day
    assert business_day(end, venue) == day + timedelta(days=1)
    at = start
    while at < end:  # every quarter hour of the day belongs to it
        assert business_day(at, venue) == day
        at += timedelta(minutes=15)


@pytest.mark.parametrize(
    ("local", "cut", "day"),
    [
        ((2026, 12, 2, 1, 30), time(6), date(2026, 12, 1)),  # the close-out at 01:30: the evening's
        ((2026, 12, 2, 4, 59), time(5), date(2026, 12, 1)),
        ((2026, 12, 2, 5, 0), time(5), date(2026, 12, 2)),
        ((2027, 1, 1, 3, 0), time(6), date(2026, 12, 31)),  # New Year's night is the old year's evening
        ((2027, 1, 1, 3, 0), time(2, 30), date(2027, 1, 1)),
        ((2026, 3, 29, 3, 10), time(6), date(2026, 3, 28)),  # spring: 02:00 became 03:00
        ((2026, 3, 29, 3, 10), time(2, 30), date(2026, 3, 28)),  # a cut in the gap is read as 02:30 CET = 03:30 CEST
        ((2026, 3, 29, 3, 30), time(2, 30), date(2026, 3, 29)),
        ((2026, 10, 25, 2, 30), time(6), date(2026, 10, 24)),  # autumn: 02:00-03:00 comes twice
    ],
)
def test_a_moment_belongs_to_the_evening_before_until_the_cut(local: Any, cut: Any, day: Any) -> None:
    assert business_day(bratislava(*local), with_cut(cut)) == day


def test_both_halves_of_the_doubled_hour_are_the_same_evening_with_a_cut_of_six() -> None:
    first = datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST
    assert business_day(first, LAVOS) == business_day(first + timedelta(hours=1), LAVOS) == date(2026, 10, 24)


def test_hours_run_from_the_cut() -> None:
    assert business_hours(LAVOS)[:2] == (6, 7) and business_hours(LAVOS)[18] == 0
    assert business_hours(with_cut(time(4, 30)))[0] == 4 and sorted(business_hours(with_cut(time(4)))) == list(range(24))


def test_after_a_close_out_things_count_on_the_next_day_the_same_whenever_asked() -> None:
    closed = {date(2026, 12, 1): bratislava(2026, 12, 2, 1, 30)}
    before, after = bratislava(2026, 12, 2, 1, 0), bratislava(2026, 12, 2, 2, 0)
    assert counting_day(before, LAVOS, closed) == date(2026, 12, 1)
    assert counting_day(after, LAVOS, closed) == date(2026, 12, 2)
    # Closed twice in a night (the 2nd closed at 03:00 too): 04:00 goes on to the 3rd.
    closed[date(2026, 12, 2)] = bratislava(2026, 12, 2, 3, 0)
    assert counting_day(bratislava(2026, 12, 2, 4, 0), LAVOS, closed) == date(2026, 12, 3)
    assert counting_day(bratislava(2026, 12, 2, 2, 30), LAVOS, closed) == date(2026, 12, 2)
