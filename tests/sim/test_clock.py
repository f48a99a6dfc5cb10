"""The demo's scaled clock: the hub's time runs `speed` times faster from its start."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sim.clock import ScaledClock

START = datetime(2026, 11, 20, 15, 0, tzinfo=UTC)


def test_runs_speed_times_faster_from_its_start() -> None:
    now = [100.0]
    clock = ScaledClock(START, 20, monotonic=lambda: now[0])
    assert clock() == START
    now[0] += 3
    assert clock() == START + timedelta(seconds=60)
    assert clock.real_delay(120) == pytest.approx(3.0)
    assert clock.real_delay(30) < 0


def test_refuses_naive_starts_and_non_positive_speeds() -> None:
    with pytest.raises(ValueError):
        ScaledClock(START.replace(tzinfo=None), 10)
    with pytest.raises(ValueError):
        ScaledClock(START, 0)
