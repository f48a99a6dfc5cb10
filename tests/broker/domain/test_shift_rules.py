"""The shifts' pure rules: real minutes over midnight, both DST nights and New Year's Eve; money
attributed to the shift of who took it; the drawer's segments; hours per person and month."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from broker.domain.schedule import business_day
from broker.domain.shifts.rules import (
    Count,
    ShiftRefused,
    ShiftSpan,
    Taken,
    Voided,
    check_span,
    clean_reason,
    drawer_segments,
    month_hours,
    takings_by_shift,
    worked_minutes,
)
from broker.domain.venue import load_venue
from tests.support.hub import VENUE

BA = ZoneInfo("Europe/Bratislava")


def local(y: int, mo: int, d: int, h: int, mi: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=BA).astimezone(UTC)


@pytest.mark.parametrize(
    ("start", "end", "minutes", "day"),
    [
        (local(2026, 12, 1, 20), local(2026, 12, 2, 2, 30), 390, date(2026, 12, 1)),  # over midnight
        (local(2027, 3, 27, 20), local(2027, 3, 28, 6), 9 * 60, date(2027, 3, 27)),  # spring: the clock skips 02:00-03:00
        (local(2027, 10, 30, 20), local(2027, 10, 31, 6), 11 * 60, date(2027, 10, 30)),  # autumn: 02:00-03:00 twice
        (local(2026, 12, 31, 18), local(2027, 1, 1, 3), 9 * 60, date(2026, 12, 31)),  # New Year's Eve: December's
    ],
)
def test_a_shift_counts_the_real_minutes_and_belongs_to_the_day_it_starts_on(
    start: datetime, end: datetime, minutes: int, day: date
) -> None:
    venue = load_venue(VENUE)
    assert worked_minutes(start, end) == minutes
    assert business_day(start, venue) == day
    hours = month_hours([ShiftSpan(1, "jana", business_day(start, venue), start, end)], end)
    assert [(h.staff, h.month, h.minutes) for h in hours] == [("jana", f"{day.year}-{day.month:02d}", minutes)]


def test_hours_per_person_and_month_add_the_shifts_and_a_running_one_counts_up_to_now() -> None:
    d1, d2 = date(2026, 12, 30), date(2026, 12, 31)
    shifts = [
        ShiftSpan(1, "jana", d1, local(2026, 12, 30, 16), local(2026, 12, 30, 22)),
        ShiftSpan(2, "jana", d2, local(2026, 12, 31, 18), local(2027, 1, 1, 3)),
        ShiftSpan(3, "peter", date(2027, 1, 1), local(2027, 1, 1, 16), None),
    ]
    hours = month_hours(shifts, local(2027, 1, 1, 17, 30))
    assert [(h.staff, h.month, h.shifts, h.minutes) for h in hours] == [("jana", "2026-12", 2, 15 * 60), ("peter", "2027-01", 1, 90)]


def test_times_a_manager_may_set() -> None:
    now = local(2026, 12, 2, 12)
    check_span(local(2026, 12, 1, 16), local(2026, 12, 2, 1), now)
    for start, end in [
        (local(2026, 12, 1, 16), local(2026, 12, 1, 16)),  # ends when it starts
        (local(2026, 12, 1, 16), local(2026, 12, 1, 15)),  # before
        (local(2026, 11, 30, 10), local(2026, 12, 1, 11)),  # 25 h
        (local(2026, 12, 1, 16), local(2026, 12, 2, 13)),  # in the future
    ]:
        with pytest.raises(ShiftRefused):
            check_span(start, end, now)
    with pytest.raises(ShiftRefused):
        clean_reason("   ")
    assert clean_reason("  zabudla\n sa odhlásiť ") == "zabudla sa odhlásiť"


def test_money_goes_to_the_shift_of_who_took_it_and_the_rows_add_up() -> None:
    now = local(2026, 12, 2, 1)
    day = date(2026, 12, 1)
    jana = ShiftSpan(1, "jana", day, local(2026, 12, 1, 16), local(2026, 12, 1, 20))
    peter = ShiftSpan(2, "peter", day, local(2026, 12, 1, 19, 30), None)  # overlapping hand-over
    taken = [
        Taken("jana", local(2026, 12, 1, 17), "cash", 500),
        Taken("jana", local(2026, 12, 1, 19, 45), "card", 300),  # both on shift: hers, she took it
        Taken("peter", local(2026, 12, 1, 19, 45), "cash", 200),
        Taken("jana", local(2026, 12, 1, 21), "cash", 100),  # after her shift: outside a shift
        Taken("boss", local(2026, 12, 1, 22), "cash", -500),  # a refund by the manager, no shift
    ]
    voided = [Voided("peter", local(2026, 12, 1, 23), 250)]
    rows = takings_by_shift([jana, peter], taken, voided, now)
    got = [(r.staff, r.shift.id if r.shift else None, r.by_method, r.payments, r.voids_cents) for r in rows]
    assert got == [
        ("jana", 1, {"cash": 500, "card": 300}, 2, 0),
        ("peter", 2, {"cash": 200}, 1, 250),
        ("boss", None, {"cash": -500}, 0, 0),
        ("jana", None, {"cash": 100}, 1, 0),
    ]
    assert sum(r.total_cents for r in rows) == sum(t.amount_cents for t in taken)
    assert rows[1].minutes(now) == 5 * 60 + 30  # running: up to now


def test_the_drawer_in_segments_the_next_bartender_starts_from_the_count_and_the_differences_sum_to_the_days() -> None:
    opened = local(2026, 12, 1, 16)
    cash = [
        Taken("jana", local(2026, 12, 1, 17), "cash", 1000, 2),
        Taken("jana", local(2026, 12, 1, 20), "cash", 500),  # at the very moment of the count: before it
        Taken("peter", local(2026, 12, 1, 22), "cash", 700, -2),
    ]
    counts = [Count(local(2026, 12, 1, 20), "jana", 6400), Count(local(2026, 12, 2, 1), "peter", 7100, closing=True)]
    first, second = drawer_segments(5000, opened, counts, cash)
    assert (first.start_cents, first.cash_cents, first.expected_cents, first.difference_cents) == (5000, 1502, 6502, -102)
    assert (second.start_cents, second.cash_cents, second.expected_cents, second.difference_cents) == (6400, 698, 7098, 2)
    day_expected = 5000 + sum(t.amount_cents + t.rounding_cents for t in cash)
    assert (first.difference_cents or 0) + (second.difference_cents or 0) == 7100 - day_expected
    running = drawer_segments(5000, opened, counts[:1], cash)
    assert running[-1].end is None and running[-1].expected_cents == 6400 + 698
