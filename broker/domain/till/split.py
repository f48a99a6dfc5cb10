"""Splitting a tab's bill into parts to pay (players paying each their own). Pure.

Three ways: `equal` (N equal parts), `items` (each line of the bill to one part) and `amounts`
(staff type each part's amount; they must sum to the bill). Whatever the way, three things hold
to the cent, and the tests check them for any bill (tests/till/test_split_properties.py):

1. the parts' amounts sum to the bill's total;
2. per VAT rate, the parts' gross sums to the bill's gross of that rate;
3. per VAT rate, the parts' VAT sums to the bill's VAT of that rate. The VAT cents are *allocated*
   (largest remainder, broker.domain.till.money.allocate), never recomputed per part: computing 23 %
   of each third and rounding would lose or invent a cent against the bill's own VAT row.

**Odd cents: the first parts get the extra cent.** 10,00 € in three is 3,34 + 3,33 + 3,33. The
same rule decides every tie of the share-out (a rate's cents, a rate's VAT cents): part 1 before
part 2 before part 3.

The stored shape (`Tab.split`, JSON; the payment of part n reads it):

    {"mode": "equal" | "items" | "amounts",
     "total_cents": <the bill's total when split>,
     "parts": [{"n": 1,                      # 1-based, the payment's `part`
                "amount_cents": 334,
                "lines": [<ReceiptLine-shaped dicts: description, description_en, quantity,
                           unit_cents, amount_cents, vat_percent, category>],
                "vat": [{"vat_percent": 23, "gross_cents": 334, "vat_cents": 62}],
                "keys": ["item:12", ...]}]}  # items mode only: the bill lines (MoneyLine.key) of the part

For `equal` and `amounts` a part's lines are its shares of the bill, one line per VAT rate and
category ("Podiel 1/3 z účtu Pool 3 (nápoje)"), so the receipt and the close-out still see the
rate and the category of what was paid; for `items` they are the bill's own lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from broker.domain.billing import format_eur
from broker.domain.refusals import N_, Refusal
from broker.domain.till.money import TABLE_TIME, MoneyLine, allocate, vat_rows

__all__ = ["CATEGORY_NAMES", "MAX_PARTS", "SplitError", "SplitMode", "part_count", "split_amounts", "split_equal", "split_items"]

SplitMode = Literal["equal", "items", "amounts"]
MAX_PARTS = 20  # more players than that do not share one bill

# How a share line names what it is a share of (Slovak for the receipt, English beside it).
CATEGORY_NAMES: Mapping[str, tuple[str, str]] = {
    TABLE_TIME: ("čas na stole", "table time"),
    "drinks": ("nápoje", "drinks"),
    "food": ("jedlo", "food"),
    "pizza_toppings": ("prísady na pizzu", "pizza toppings"),
    "tournament_entry": ("štartovné", "tournament entry"),
    "cue_service": ("servis tága", "cue service"),
    "other": ("ostatné", "other"),
}


class SplitError(Refusal):
    """A split that cannot be made as asked; nothing is stored."""


Bucket = tuple[int, str]  # (VAT rate, category): what a share line is a share of


def _buckets(lines: Sequence[MoneyLine]) -> dict[Bucket, int]:
    gross: dict[Bucket, int] = {}
    for line in lines:
        key = (line.vat_percent, line.category)
        gross[key] = gross.get(key, 0) + line.amount_cents
    return gross


def _first_parts_first(n: int) -> dict[int, int]:
    """Keys for allocate that make ties go to part 1 first (allocate breaks ties to the larger key)."""
    return {-p: 1 for p in range(1, n + 1)}


def _check_bill(lines: Sequence[MoneyLine], parts: int) -> int:
    if not 2 <= parts <= MAX_PARTS:
        raise SplitError(N_("A bill is split into 2 to %(max)d parts."), max=MAX_PARTS)
    total = sum(line.amount_cents for line in lines)
    if total <= 0:
        raise SplitError(N_("There is nothing to split: the bill is %(total)s."), total=format_eur(total))
    if any(g < 0 for g in _buckets(lines).values()):
        raise SplitError(N_("A bill with a negative VAT rate or category (a correction larger than what it corrects) cannot be split."))
    return total


def _row(line: MoneyLine) -> dict[str, Any]:
    return {
        "description": line.description,
        "description_en": line.description_en,
        "quantity": line.quantity,
        "unit_cents": line.unit_cents,
        "amount_cents": line.amount_cents,
        "vat_percent": line.vat_percent,
        "category": line.category,
    }


def _vat_of_parts(lines: Sequence[MoneyLine], gross: list[dict[int, int]]) -> list[list[dict[str, int]]]:
    """Each part's VAT rows: its gross per rate as given, the bill's VAT of that rate allocated by it."""
    bill_vat = {row.vat_percent: row.vat_cents for row in vat_rows(lines)}
    n = len(gross)
    per_part: list[list[dict[str, int]]] = [[] for _ in range(n)]
    for rate in sorted(bill_vat, reverse=True):
        weights = {-(p + 1): gross[p].get(rate, 0) for p in range(n)}
        shares = allocate(bill_vat[rate], weights)
        for p in range(n):
            if rate in gross[p]:
                per_part[p].append({"vat_percent": rate, "gross_cents": gross[p][rate], "vat_cents": shares[-(p + 1)]})
    return per_part


def _shares(lines: Sequence[MoneyLine], amounts: list[int], label: str, label_en: str) -> list[dict[str, Any]]:
    """Parts of the given amounts (summing to the bill), each a share of every rate and category.

    Bucket by bucket, each bucket's cents go to the parts in proportion to what each part still
    has room for (largest remainder, ties to the first parts): a part never gets more than its
    amount, so the last bucket fills every part exactly and no share is negative.
    """
    n = len(amounts)
    room = dict(enumerate(amounts))
    got: list[dict[Bucket, int]] = [{} for _ in range(n)]
    for bucket, gross in sorted(_buckets(lines).items(), key=lambda kv: (-kv[0][0], kv[0][1])):
        shares = allocate(gross, {-(p + 1): room[p] for p in range(n)})
        for p in range(n):
            cents = shares[-(p + 1)]
            if cents:
                got[p][bucket] = cents
                room[p] -= cents
    parts: list[dict[str, Any]] = []
    for p in range(n):
        rows = []
        for (rate, category), cents in got[p].items():
            sk, en = CATEGORY_NAMES.get(category, (category, category))
            rows.append(
                {
                    "description": f"Podiel {p + 1}/{n} z účtu {label} ({sk})",
                    "description_en": f"Share {p + 1}/{n} of the bill {label_en} ({en})",
                    "quantity": 1,
                    "unit_cents": cents,
                    "amount_cents": cents,
                    "vat_percent": rate,
                    "category": category,
                }
            )
        parts.append({"n": p + 1, "amount_cents": amounts[p], "lines": rows})
    rate_gross = [_rate_gross(part["lines"]) for part in parts]
    for part, vat in zip(parts, _vat_of_parts(lines, rate_gross), strict=True):
        part["vat"] = vat
    return parts


def _rate_gross(rows: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    gross: dict[int, int] = {}
    for row in rows:
        gross[row["vat_percent"]] = gross.get(row["vat_percent"], 0) + row["amount_cents"]
    return gross


def split_equal(lines: Sequence[MoneyLine], parts: int, label: str, label_en: str | None = None) -> dict[str, Any]:
    """N equal parts of the bill; the first parts get the odd cents (10,00 € / 3 = 3,34 + 3,33 + 3,33)."""
    total = _check_bill(lines, parts)
    if total < parts:
        raise SplitError(N_("%(total)s cannot be split into %(parts)d parts of at least 0,01 €."), total=format_eur(total), parts=parts)
    amounts = allocate(total, _first_parts_first(parts))
    ordered = [amounts[-(p + 1)] for p in range(parts)]
    return {"mode": "equal", "total_cents": total, "parts": _shares(lines, ordered, label, label_en or label)}


def split_amounts(lines: Sequence[MoneyLine], amounts: Sequence[int], label: str, label_en: str | None = None) -> dict[str, Any]:
    """Parts of the amounts staff typed; they must sum to the bill exactly, each more than 0."""
    total = _check_bill(lines, len(amounts))
    if any(a <= 0 for a in amounts):
        raise SplitError(N_("Every part must be more than 0,00 €."))
    given = sum(amounts)
    if given != total:
        raise SplitError(N_("The parts add up to %(given)s but the bill is %(total)s."), given=format_eur(given), total=format_eur(total))
    return {"mode": "amounts", "total_cents": total, "parts": _shares(lines, list(amounts), label, label_en or label)}


def split_items(lines: Sequence[MoneyLine], assignment: Mapping[str, int]) -> dict[str, Any]:
    """Each line of the bill (by its MoneyLine.key) to a part 1..N; every line to one part, every part a line."""
    keys = [line.key for line in lines]
    if set(assignment) != set(keys):
        raise SplitError(N_("Put every line of the bill in a part (and only the lines of this bill)."))
    used = sorted(set(assignment.values()))
    parts = len(used)
    _check_bill(lines, parts)
    if used != list(range(1, parts + 1)):
        raise SplitError(N_("Number the parts 1, 2, 3 … with no part left empty."))
    out: list[dict[str, Any]] = []
    for n in used:
        mine = [line for line in lines if assignment[line.key] == n]
        amount = sum(line.amount_cents for line in mine)
        if amount <= 0 or any(g < 0 for g in _rate_gross([_row(x) for x in mine]).values()):
            raise SplitError(
                N_("Part %(part)d would be %(amount)s: every part must be more than 0,00 €."), part=n, amount=format_eur(amount)
            )
        out.append({"n": n, "amount_cents": amount, "lines": [_row(x) for x in mine], "keys": [x.key for x in mine]})
    gross = [_rate_gross(part["lines"]) for part in out]
    for part, vat in zip(out, _vat_of_parts(lines, gross), strict=True):
        part["vat"] = vat
    return {"mode": "items", "total_cents": sum(p["amount_cents"] for p in out), "parts": out}


def part_count(split: Mapping[str, Any] | None) -> int:
    return len(split["parts"]) if split else 0
