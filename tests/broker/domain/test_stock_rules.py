"""The stock's pure rules (broker.domain.stock.rules): quantities in thousandths, VAT in integer
cents, portions left, low stock; properties over Hypothesis' examples."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from broker.domain.stock import rules


def test_quantities_are_read_as_bartenders_type_them() -> None:
    assert rules.parse_quantity("1") == 1000
    assert rules.parse_quantity("1,5") == 1500
    assert rules.parse_quantity("0.04") == 40
    assert rules.parse_quantity("12 000") == 12_000_000
    assert rules.parse_quantity(" 2 ") == 2000
    assert rules.parse_quantity("0", low=0) == 0
    for bad in ("", "0", "-1", "1,2345", "1e3", "abc", "1,5 l", "1.000,5", "٣"):
        assert rules.parse_quantity(bad) is None, bad
    assert rules.parse_quantity("-2", low=-5000) == -2000


@given(st.integers(min_value=-(10**9), max_value=10**9), st.sampled_from(["sk", "en"]))
def test_a_quantity_shown_reads_back_as_itself(milli: int, lang: str) -> None:
    assert rules.parse_quantity(rules.quantity_text(milli, lang), low=-(10**9), high=10**9) == milli


def test_quantity_text() -> None:
    assert rules.quantity_text(1500) == "1,5"
    assert rules.quantity_text(1500, "en") == "1.5"
    assert rules.quantity_text(2000) == "2"
    assert rules.quantity_text(-40) == "-0,04"


def test_vat_both_ways_in_integer_cents() -> None:
    assert rules.net_of(1230, 23) == 1000
    assert rules.gross_of(1000, 23) == 1230
    assert rules.Delivery(2460, 23, True).net_cents == 2000
    assert rules.Delivery(2000, 23, False).gross_cents == 2460
    assert rules.net_of(1, 23) == 1  # 0,81 cent rounds half up to 1


@given(st.integers(min_value=0, max_value=10**7), st.sampled_from([0, 5, 19, 23]))
def test_net_and_gross_are_within_a_cent_of_each_other(net: int, vat: int) -> None:
    assert abs(rules.net_of(rules.gross_of(net, vat), vat) - net) <= 1


def test_unit_cost_and_value() -> None:
    assert rules.unit_cost(1800, 24_000) == 75  # 24 bottles for 18,00 €: 0,75 € a bottle
    assert rules.value_of(-3000, 75) == -225
    assert rules.value_of(40, 1286) == 51  # 4 cl of a 12,86 €/l bottle: 0,5144 € → 0,51 €
    assert rules.value_of(-40, 1286) == -51  # half away from zero, both signs alike


@given(st.integers(min_value=-(10**6), max_value=10**6), st.integers(min_value=0, max_value=10**5))
def test_a_value_and_its_opposite_cancel(milli: int, cost: int) -> None:
    assert rules.value_of(milli, cost) == -rules.value_of(-milli, cost)


def test_portions_left_is_the_scarcest_line() -> None:
    assert rules.portions_left([]) is None
    assert rules.portions_left([(3000, 1000)]) == 3
    assert rules.portions_left([(10_000, 1000), (250, 100)]) == 2  # a pizza: plenty of bases, ham for 2
    assert rules.portions_left([(-1000, 1000)]) == -1
    assert rules.few_left(3) and rules.few_left(0) and rules.few_left(-2)
    assert not rules.few_left(4) and not rules.few_left(None)


def test_stock_state() -> None:
    assert rules.stock_state(5000, 3000) == "ok"
    assert rules.stock_state(3000, 3000) == "low"
    assert rules.stock_state(0, 0) == "low"
    assert rules.stock_state(-1, 3000) == "negative"


def test_margin() -> None:
    assert rules.margin_cents(1000, 400) == 600
    assert rules.margin_percent(1000, 400) == 60
    assert rules.margin_percent(0, 400) is None
