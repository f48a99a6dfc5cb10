"""A clock for the hub that runs `speed` times faster than the real one.

The hub reads it for everything time-driven (billing, prepaid time, idle and check-in
windows), so a sped-up demo bills, expires and alerts as a real evening would, just sooner.
It is built on the monotonic clock, so a wall-clock jump (NTP) does not bend the evening.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta


class ScaledClock:
    def __init__(self, start: datetime, speed: float, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        if speed <= 0:
            raise ValueError(f"speed must be positive, not {speed}")
        self.start = start
        self.speed = speed
        self._monotonic = monotonic
        self._origin = monotonic()

    def __call__(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed())

    def elapsed(self) -> float:
        """Simulated seconds since the start."""
        return (self._monotonic() - self._origin) * self.speed

    def real_delay(self, sim_at: float) -> float:
        """Real seconds from now until simulated second `sim_at` (negative: already past)."""
        return (sim_at - self.elapsed()) / self.speed
