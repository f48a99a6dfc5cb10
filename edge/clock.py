"""Wall-clock timestamps for events, and whether NTP had synced when they were taken.

A Pi has no real-time clock: until NTP syncs, its wall clock may be days off, so every event says
whether its `ts` can be trusted (the hub bills by its own clock anyway).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

# systemd-timesyncd creates this file once the clock has been synchronised.
TIMESYNC_FLAG = Path("/run/systemd/timesync/synchronized")
_RECHECK_S = 30.0


def _system_time() -> datetime:
    return datetime.now(UTC)


class Clock(Protocol):
    """What the agent stamps events with: the wall time and whether it can be trusted."""

    def now(self) -> tuple[datetime, bool]: ...


class WallClock:
    """`wall` and `recheck_s` are seams for tests: a wall clock that jumps, a flag seen at once."""

    def __init__(self, flag: Path = TIMESYNC_FLAG, *, wall: Callable[[], datetime] = _system_time, recheck_s: float = _RECHECK_S) -> None:
        self._flag = flag
        self._wall = wall
        self._recheck_s = recheck_s
        self._synced = False
        self._checked = -recheck_s

    def now(self) -> tuple[datetime, bool]:
        mono = time.monotonic()
        if not self._synced and mono - self._checked >= self._recheck_s:
            # Once synced, a clock stays synced for the life of the process; until then, look again now and then.
            self._checked = mono
            self._synced = self._flag.exists()
        return self._wall(), self._synced
