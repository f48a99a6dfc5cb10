"""The light the hub last commanded at each table, and when (monotonic seconds).

A node reports its light tens of milliseconds after a command reaches it. In between, what the
node last reported is already out of date, and a view drawn then would show a stopped table
"lit without a game" for a moment. Knowing what was commanded, and how long ago, lets a view tell
"switching off, the report is on its way" from "lit without a game" honestly: only for a short
while (see dashboard.web.floor), after which the node's word counts again.

Written on the writer thread (the hub's after-commit effects), read from any thread: each
entry is one immutable value replaced whole, and readers take a copy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class LightCommand:
    on: bool
    sent_at: float  # time.monotonic() when the hub sent it

    def age_s(self, now: float | None = None) -> float:
        return (time.monotonic() if now is None else now) - self.sent_at


class LightCommands:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, LightCommand] = {}

    def sent(self, table: str, on: bool) -> None:
        with self._lock:
            self._last[table] = LightCommand(on, self._clock())

    def view(self) -> Mapping[str, LightCommand]:
        with self._lock:
            return dict(self._last)
