"""Polling for something another thread or process makes true: the one wait_until of the tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import IO, TypeVar

T = TypeVar("T")
# The longest wait_until sleeps after a slow call.
MAX_BACKOFF_S = 0.25
# A deadline that only catches a hang. A test waits for what must happen, however long a loaded
# machine makes it take; how fast it happens is a bench's figure (bench/, the README's
# Performance section), never a test's deadline (tests/test_no_speed_asserts.py holds that).
HANG_S = 60.0


def wait_until(predicate: Callable[[], T | None], timeout: float = HANG_S, what: str = "condition", *, interval: float = 0.005) -> T:
    """The first truthy value of predicate(), polled every `interval` seconds.

    Fails with an AssertionError naming `what` and the timeout. The default only catches a hang,
    so a loaded machine makes a test slower, never failing; a shorter timeout is for a wait
    whose end is bounded by design (a process that must have exited), not a claim of speed.

    Between two calls it sleeps `interval`, or twice what the call took if that is longer (up to
    a quarter of a second): a predicate that asks a server (an HTTP call, a query) then spends at
    most a third of a core on asking, where every 5 ms it took most of one from the server it
    waits for; a cheap one (a flag, a pin) is still looked at every `interval`; and a call slowed
    by a loaded machine delays the answer by at most MAX_BACKOFF_S more."""
    deadline = time.monotonic() + timeout
    while True:
        asked = time.monotonic()
        if value := predicate():
            return value
        now = time.monotonic()
        if now > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(max(interval, min(2 * (now - asked), MAX_BACKOFF_S)))


class Output:
    """What a process writes to a pipe, read by a thread of its own as it comes, so a test can
    wait for a line (wait_until(lambda: "started" in out.text)) without blocking on readline."""

    def __init__(self, pipe: IO[str]) -> None:
        self._lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self._lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self._lines)

    def rest(self, timeout: float = 10.0) -> str:
        """All of it, once the pipe has closed (the process ended)."""
        self._thread.join(timeout)
        return self.text
