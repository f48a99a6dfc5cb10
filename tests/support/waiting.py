"""Polling for something another thread or process makes true: the one wait_until of the tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 20.0, what: str = "condition", *, interval: float = 0.005) -> T:
    """The first truthy value of predicate(), polled every `interval` seconds.

    Fails with an AssertionError naming `what` and the timeout. The default is generous, so a
    loaded machine only makes a test slower; a test that asserts promptness passes its own
    timeout."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
    return value
