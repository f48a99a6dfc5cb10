"""bench/bookings.py keeps running: its evening (games, 40 bookings, 10 waiting parties) is made
through the hub's commands as they are today, and the floor it times shows the booking marks and
the waiting list."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.bookings import measure

if TYPE_CHECKING:
    from pathlib import Path


pytestmark = pytest.mark.slow  # a hall seeded through ~60 commands and started: a few seconds


def test_the_bookings_bench_times_the_floor_availability_and_the_day_view(tmp_path: Path) -> None:
    r = measure(tmp_path, 3)
    assert (r["bookings"], r["parties"]) == (40, 10)
    assert r["marks"] == 11 and r["offers"] == 1  # the 20:00 bookings on their cards, one offer on the waiting list
    assert r["waiting_shown"] == 10
    assert all(r[name]["n"] == 3 for name in ("floor", "availability", "day"))
