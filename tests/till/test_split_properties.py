"""Properties of the split (broker.domain.till.split) and of money.allocate: exact to the cent, for any bill.

For every mode: the parts sum to the bill, per VAT rate the parts' gross sums to the bill's gross
of that rate, and the parts' VAT per rate sums to the bill's VAT of that rate.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from broker.domain.till.money import TABLE_TIME, MoneyLine, allocate, vat_rows
from broker.domain.till.split import MAX_PARTS, SplitError, split_amounts, split_equal, split_items

RATES = (23, 19, 5, 0)
CATEGORIES = (TABLE_TIME, "drinks", "food", "other")


@st.composite
def bills(draw: Any) -> list[MoneyLine]:
    n = draw(st.integers(1, 12))
    return [
        MoneyLine(
            key=f"item:{i}",
            description=f"Položka {i}",
            description_en=f"Item {i}",
            quantity=1,
            unit_cents=None,
            amount_cents=draw(st.integers(1, 20_000)),
            vat_percent=draw(st.sampled_from(RATES)),
            category=draw(st.sampled_from(CATEGORIES)),
            tab_id=1,
        )
        for i in range(n)
    ]


def _exact(lines: list[MoneyLine], split: dict[str, Any]) -> None:
    parts = split["parts"]
    assert [p["n"] for p in parts] == list(range(1, len(parts) + 1))
    assert sum(p["amount_cents"] for p in parts) == sum(x.amount_cents for x in lines) == split["total_cents"]
    for p in parts:
        assert p["amount_cents"] == sum(row["amount_cents"] for row in p["lines"]) == sum(v["gross_cents"] for v in p["vat"])
        assert all(row["amount_cents"] >= 0 for row in p["lines"]) and all(v["vat_cents"] >= 0 for v in p["vat"])
    for row in vat_rows(lines):
        assert sum(v["gross_cents"] for p in parts for v in p["vat"] if v["vat_percent"] == row.vat_percent) == row.gross_cents
        assert sum(v["vat_cents"] for p in parts for v in p["vat"] if v["vat_percent"] == row.vat_percent) == row.vat_cents
        # and the share lines per rate say the same gross as the VAT rows
        assert sum(r["amount_cents"] for p in parts for r in p["lines"] if r["vat_percent"] == row.vat_percent) == row.gross_cents


@settings(deadline=None)
@given(bills(), st.integers(2, MAX_PARTS))
def test_equal_parts_are_exact_and_differ_by_at_most_a_cent_the_first_getting_it(lines: Any, n: Any) -> None:
    assume(sum(x.amount_cents for x in lines) >= n)
    split = split_equal(lines, n, "Pool 3")
    _exact(lines, split)
    amounts = [p["amount_cents"] for p in split["parts"]]
    assert max(amounts) - min(amounts) <= 1 and amounts == sorted(amounts, reverse=True)


@settings(deadline=None)
@given(bills(), st.data())
def test_amount_parts_are_exact(lines: Any, data: Any) -> None:
    total = sum(x.amount_cents for x in lines)
    assume(total >= 2)
    n = data.draw(st.integers(2, min(MAX_PARTS, total)))
    cuts = sorted(data.draw(st.lists(st.integers(1, total - 1), min_size=n - 1, max_size=n - 1, unique=True)))
    amounts = [b - a for a, b in zip([0, *cuts], [*cuts, total])]
    split = split_amounts(lines, amounts, "Pool 3")
    _exact(lines, split)
    assert [p["amount_cents"] for p in split["parts"]] == amounts


@settings(deadline=None)
@given(bills(), st.data())
def test_item_parts_are_exact_and_keep_the_lines(lines: Any, data: Any) -> None:
    assume(len(lines) >= 2)
    n = data.draw(st.integers(2, min(len(lines), MAX_PARTS)))
    # every part gets at least one line: the first n lines go one each, the rest anywhere
    assignment = {x.key: i + 1 for i, x in enumerate(lines[:n])}
    assignment |= {x.key: data.draw(st.integers(1, n)) for x in lines[n:]}
    split = split_items(lines, assignment)
    _exact(lines, split)
    for p in split["parts"]:
        assert p["keys"] == [x.key for x in lines if assignment[x.key] == p["n"]]


@settings(deadline=None)
@given(st.integers(-(10**7), 10**7), st.dictionaries(st.integers(-30, 30), st.integers(0, 10**6), min_size=1, max_size=10))
def test_allocate_sums_exactly_and_each_share_is_within_a_cent_of_exact(amount: Any, weights: Any) -> None:
    shares = allocate(amount, weights)
    assert set(shares) == set(weights) and sum(shares.values()) == amount
    total = sum(weights.values())
    if total:
        for k, w in weights.items():
            assert abs(shares[k] - amount * w / total) < 1


def _line(key: str, cents: int, rate: int = 23, category: str = "drinks") -> MoneyLine:
    return MoneyLine(key, key, key, 1, cents, cents, rate, category, 1)


def test_ten_euros_in_three_is_334_333_333_and_the_vat_is_allocated_not_recomputed() -> None:
    split = split_equal([_line("a", 1000)], 3, "Pool 3")
    assert [p["amount_cents"] for p in split["parts"]] == [334, 333, 333]
    # 23 % of 10,00 € is 1,87 €; recomputing per part would give 0,62 + 0,62 + 0,62 = 1,86 €
    assert [p["vat"][0]["vat_cents"] for p in split["parts"]] == [63, 62, 62]
    assert split["parts"][0]["lines"][0]["description"] == "Podiel 1/3 z účtu Pool 3 (nápoje)"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: split_equal([_line("a", 100)], 1, "x"), "2 to"),
        (lambda: split_equal([_line("a", 100)], MAX_PARTS + 1, "x"), "2 to"),
        (lambda: split_equal([_line("a", 2)], 3, "x"), "at least 0,01"),
        (lambda: split_equal([_line("a", 0)], 2, "x"), "nothing to split"),
        (lambda: split_amounts([_line("a", 1000)], [500, 400], "x"), "add up to 9,00 € but the bill is 10,00 €"),
        (lambda: split_amounts([_line("a", 1000)], [1100, -100], "x"), "more than 0,00"),
        (lambda: split_items([_line("a", 100), _line("b", 100)], {"a": 1}), "every line"),
        (lambda: split_items([_line("a", 100), _line("b", 100)], {"a": 1, "b": 1, "c": 2}), "every line"),
        (lambda: split_items([_line("a", 100), _line("b", 100)], {"a": 1, "b": 3}), "Number the parts"),
        (lambda: split_items([_line("a", 100), _line("b", -50, category="drinks"), _line("c", 100)], {"a": 1, "b": 2, "c": 1}), "Part 2"),
    ],
)
def test_a_split_that_cannot_be_made_is_refused(call: Any, message: Any) -> None:
    with pytest.raises(SplitError, match=message):
        call()
