"""Money arithmetic: per started unit, half-up to the cent, VAT share — checked against Fraction."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from fractions import Fraction
from math import floor
from pathlib import Path
from typing import Any, cast, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker.domain.billing import (
    BillLine,
    LineKind,
    billed_seconds,
    div_half_up,
    format_eur,
    make_bill,
    minimum_line,
    time_amount_cents,
    vat_share,
)


def half_up(x: Fraction) -> int:
    return floor(x + Fraction(1, 2))


@pytest.mark.parametrize(
    "actual, unit, billed",
    [(0, 60, 0), (0.000001, 60, 60), (60, 60, 60), (61, 60, 120), (5400, 60, 5400), (301, 300, 600), (899.5, 900, 900)],
)
def test_billed_per_started_unit(actual: Any, unit: Any, billed: Any) -> None:
    assert billed_seconds(actual, unit) == billed


def test_timedelta_is_counted_in_exact_microseconds() -> None:
    assert billed_seconds(timedelta(minutes=90), 60) == 5400
    assert billed_seconds(timedelta(minutes=90, microseconds=1), 60) == 5460


def test_issue_amounts() -> None:
    assert time_amount_cents(600, 90 * 60) == 900
    assert time_amount_cents(400, 95 * 60) == 633  # 633.33
    assert time_amount_cents(400, 40 * 60) == 267  # 266.67
    assert time_amount_cents(600, 30) == 5  # exactly 5.0
    assert time_amount_cents(90, 60) == 2  # 1.5 rounds up


def test_vat_share_of_a_gross_price() -> None:
    assert vat_share(900, 23) == 168  # 168.29
    assert vat_share(0, 23) == 0
    assert vat_share(1000, 0) == 0
    bill = make_bill([BillLine(kind="time", description="x", description_en="x", reason="standard", amount_cents=900)], 23)
    assert (bill.total_cents, bill.vat_cents, bill.net_cents) == (900, 168, 732)


@settings(deadline=None)
@given(st.integers(0, 10**7), st.integers(0, 10**6))
def test_time_amount_is_exact_half_up(rate: Any, seconds: Any) -> None:
    assert time_amount_cents(rate, seconds) == half_up(Fraction(rate * seconds, 3600))


@settings(deadline=None)
@given(st.integers(0, 10**9), st.integers(0, 100))
def test_vat_share_is_exact_half_up(total: Any, percent: Any) -> None:
    assert vat_share(total, percent) == half_up(Fraction(total * percent, 100 + percent))


@settings(deadline=None)
@given(st.fractions(min_value=0, max_value=10**6), st.sampled_from([60, 300, 900]))
def test_billed_seconds_is_the_smallest_unit_multiple_covering_the_time(actual: Any, unit: Any) -> None:
    billed = billed_seconds(actual, unit)
    assert billed % unit == 0
    assert actual <= billed < actual + unit if actual else billed == 0


def test_garbage_refused() -> None:
    bad: Callable[[], object]
    for bad in (
        lambda: billed_seconds(-1, 60),
        lambda: billed_seconds(10, 0),
        lambda: billed_seconds(cast(Any, "60"), 60),  # text on purpose: refused
        lambda: billed_seconds(True, 60),
        lambda: div_half_up(-1, 2),
        lambda: div_half_up(1, 0),
    ):
        with pytest.raises(ValueError):
            bad()


def _line(kind: LineKind, cents: int) -> BillLine:
    return BillLine(kind=kind, description=kind, description_en=kind, reason=kind, amount_cents=cents)


def test_minimum_tops_up_table_time_only_when_time_was_played() -> None:
    topped_up = minimum_line([_line("time", 150)], 300)
    assert topped_up is not None and topped_up.amount_cents == 150
    assert minimum_line([_line("time", 300)], 300) is None
    assert minimum_line([], 300) is None


def test_negative_sum_is_clamped_with_a_visible_line() -> None:
    bill = make_bill([_line("time", 200), _line("correction", -500)], 23)
    assert bill.total_cents == 0 and bill.vat_cents == 0
    assert bill.lines[-1].reason == "floor_zero" and bill.lines[-1].amount_cents == 300
    assert sum(line.amount_cents for line in bill.lines) == bill.total_cents


def test_format_eur() -> None:
    assert format_eur(467) == "4,67 €"
    assert format_eur(-5, "en") == "-€0.05"


# How the README names each kind of a game's own bill line (broker.domain.billing.LineKind).
README_WORDS = {"time": "table time", "minimum": "table time", "correction": "corrections"}


def test_the_readme_says_what_a_games_bill_holds() -> None:
    """Issue 29, item 31: the README said "The log and the game's bill hold table time only", but a
    manager's correction is a line of the game's bill (the API, docs/architecture.md and the code)."""
    readme = " ".join((Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8").split())
    found = re.search(r"The log and the game's bill hold ([^:]+):", readme)
    assert found, "the README no longer says what a game's bill holds"
    said = found.group(1)
    assert [k for k in get_args(LineKind) if README_WORDS[k] not in said] == [], said
