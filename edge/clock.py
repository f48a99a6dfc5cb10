"""Wall-clock timestamps for events, and whether NTP had synced when they were taken.

A Pi has no real-time clock: until NTP syncs, its wall clock may be days off, so every event says
whether its `ts` can be trusted (the central service bills by its own clock anyway).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

# systemd-timesyncd creates this file once the clock has been synchronised.
TIMESYNC_FLAG = Path("/run/systemd/timesync/synchronized")
_RECHECK_S = 30.0


class WallClock:
    def __init__(self, flag: Path = TIMESYNC_FLAG) -> None:
        self._flag = flag
        self._synced = False
        self._checked = -_RECHECK_S

    def now(self) -> tuple[datetime, bool]:
        mono = time.monotonic()
        if not self._synced and mono - self._checked >= _RECHECK_S:
            # Once synced, a clock stays synced for the life of the process; until then, look again now and then.
            self._checked = mono
            self._synced = self._flag.exists()
        return datetime.now(timezone.utc), self._synced
