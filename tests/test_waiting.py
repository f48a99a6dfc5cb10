"""tests/support/waiting.py's wait_until: a costly predicate is asked less often, a cheap one as often as told."""

from __future__ import annotations

import time

import pytest

from tests.support.waiting import wait_until


def test_a_predicate_that_takes_time_is_asked_at_most_a_third_of_the_time():
    calls: list[float] = []
    start = time.monotonic()

    def slow() -> bool:  # an HTTP call to a server that is starting, say
        calls.append(time.monotonic())
        time.sleep(0.02)
        return time.monotonic() - start > 0.4

    wait_until(slow, timeout=5, what="the slow predicate")
    asking = len(calls) * 0.02
    assert asking <= (time.monotonic() - start) / 2.5, (len(calls), asking)  # was 16 calls (80 % asking) every 5 ms


def test_a_cheap_predicate_is_looked_at_every_interval_and_a_timeout_names_what():
    flag_at = time.monotonic() + 0.1
    calls = 0

    def flag() -> bool:
        nonlocal calls
        calls += 1
        return time.monotonic() >= flag_at

    wait_until(flag, timeout=5, what="the flag")
    assert time.monotonic() - flag_at < 0.05 and calls >= 10
    with pytest.raises(AssertionError, match=r"timed out after 0\.05 s waiting for nothing"):
        wait_until(lambda: False, timeout=0.05, what="nothing")
