"""re.search for the tests: a pattern the test knows is in the text, and a clear failure where it is not."""

from __future__ import annotations

import re
from typing import TypeVar, cast

import pytest

T = TypeVar("T")


def found(pattern: str | re.Pattern[str], text: str, flags: int = 0) -> re.Match[str]:
    """The first match of `pattern` in `text`; an AssertionError naming the pattern if there is none
    (where `re.search(...).group(1)` would fail with an AttributeError on None)."""
    m = pattern.search(text) if isinstance(pattern, re.Pattern) else re.search(pattern, text, flags)
    assert m is not None, f"{getattr(pattern, 'pattern', pattern)!r} not found in: {text[:500]!r}"
    return m


def near(expected: float) -> float:
    """pytest.approx(expected) where the code wants a float: a dataclass built with it (a Pulse, a
    Fault) compares its fields with ==, so it equals one whose field is within the tolerance."""
    return cast(float, pytest.approx(expected))


def some(value: T | None) -> T:
    """A value the test knows is there (a read of what it just made, a node's relay); an
    AssertionError where it is None (where `value.field` would fail with an AttributeError)."""
    assert value is not None, "expected a value, got None"
    return value
