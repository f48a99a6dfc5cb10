"""tests/support/waiting.py's wait_until: a costly predicate is asked less often, a cheap one as often as told.

On a clock of its own (the module's `time`, faked): what is checked is how wait_until spaces its
calls, which a loaded machine would blur on the real clock.
"""

from __future__ import annotations

import pytest

from tests.support import waiting
from tests.support.waiting import HANG_S, wait_until


class FakeTime:
    """monotonic() and sleep() on a clock that moves only when slept on (or by a predicate's cost)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(waiting, "time", fake)
    return fake


def test_a_predicate_that_takes_time_is_asked_at_most_a_third_of_the_time(clock: FakeTime) -> None:
    calls: list[float] = []
    start = clock.now

    def slow() -> bool:  # an HTTP call to a server that is starting, say: 20 ms each
        calls.append(clock.now)
        clock.now += 0.02
        result: bool = clock.now - start > 0.4
        return result

    wait_until(slow, timeout=5, what="the slow predicate")
    asking = len(calls) * 0.02
    assert asking <= (clock.now - start) / 2.5, (len(calls), asking)  # was 16 calls (80 % asking) every 5 ms


def test_a_cheap_predicate_is_looked_at_every_interval_and_a_timeout_names_what(clock: FakeTime) -> None:
    flag_at = clock.now + 0.1
    calls = 0

    def flag() -> bool:
        nonlocal calls
        calls += 1
        result: bool = clock.now >= flag_at
        return result

    wait_until(flag, timeout=5, what="the flag")
    assert clock.now - flag_at <= 0.005 and calls >= 20
    with pytest.raises(AssertionError, match=r"timed out after 0\.05 s waiting for nothing"):
        wait_until(lambda: False, timeout=0.05, what="nothing")


def test_the_default_deadline_only_catches_a_hang(clock: FakeTime) -> None:
    started = clock.now
    with pytest.raises(AssertionError, match=rf"timed out after {HANG_S:g} s waiting for the never"):
        wait_until(lambda: False, what="the never")
    assert clock.now - started >= HANG_S
