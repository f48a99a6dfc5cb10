"""broker.domain.euros.parse_euros: the one reader of amounts people type (issue 18, item 7)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.domain.euros import MAX_AMOUNT_CENTS, euros, parse_euros


@pytest.mark.parametrize(
    "text,cents",
    [("12,50", 1250), ("12.50", 1250), ("12,5 €", 1250), ("1 234,50", 123450), ("7", 700), ("100 000,00 €", MAX_AMOUNT_CENTS)],
)
def test_what_a_bartender_types_is_read_as_cents(text, cents):
    assert parse_euros(text) == cents


@pytest.mark.parametrize(
    "text",
    # an exponent, other scripts' digits, a sign or a point alone, a third decimal, a thousands point, words, nothing, over the cap
    ["1e3", "1E2", "２０", "+5", ".5", "5.", "10,001", "1.234,50", "ten", "", " ", "NaN", "Infinity", "100 000,01", "0x10"],
)
def test_anything_else_is_not_an_amount(text):
    assert parse_euros(text) is None


def test_bounds_are_the_callers_and_the_cap_is_everyones():
    assert parse_euros("0") is None and parse_euros("0", low=0) == 0
    assert parse_euros("0", low=0, zero=False) is None
    assert parse_euros("-2,50") is None and parse_euros("-2,50", low=-500) == -250
    assert parse_euros("50", high=4_000) is None
    assert parse_euros("200 000", high=10**9) is None  # a caller cannot lift the 100 000 € cap


@given(st.integers(min_value=1, max_value=MAX_AMOUNT_CENTS))
def test_every_amount_shown_reads_back_as_itself(cents):
    assert parse_euros(euros(cents)) == cents
