"""Amounts as people type them, and the till's fixed lists: one home for each rule.

Every form that takes money (a payment and what the guest gave, the drawer's float and count, a
product's price, a fee, a bill's correction, split amounts) reads the text with `parse_euros`,
each with its own bounds, and no amount anywhere may pass MAX_AMOUNT_CENTS. Money never passes
through a float.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

# 100 000 €: no amount a bar takes, counts or corrects at once is larger; extra zeros are a typo.
MAX_AMOUNT_CENTS = 10_000_000
# Slovak VAT rates since 2025; 0 for what is outside VAT (e.g. a deposit).
VatPercent = Literal[23, 19, 5, 0]
VAT_RATES: tuple[int, ...] = get_args(VatPercent)
ProductCategory = Literal["drinks", "food", "pizza_toppings", "tournament_entry", "cue_service", "other"]
PRODUCT_CATEGORIES: tuple[str, ...] = get_args(ProductCategory)

_MAX_TEXT = 20  # "100 000,00 €" and then some: longer is not an amount
# What a bartender types, and nothing that could mean two amounts. Plain ASCII digits (no exponent
# "1e3", no other scripts' digits, no "+"); the euros either plain ("1234") or in groups of three
# after a space ("1 234": "12 50" is no amount, it may be 12,50 € or 1 250 €); then at most cents
# after a decimal comma or point. A point is a decimal point only so: one or two digits follow it
# ("0.10", "12.5", "1234.56"). "1.234" (three digits) may be a thousands point, as Slovaks write
# 1.234 €, or a third decimal: refused, like "1.234,56" and "1,234.56" (a point and a comma). "€"
# may stand before or after the number, once; a minus only in front.
_AMOUNT = re.compile(r"(?P<minus>-)?(?P<before>€ ?)?(?P<whole>[0-9]{1,3}(?: [0-9]{3})+|[0-9]+)(?:[.,](?P<part>[0-9]{1,2}))?(?P<after> ?€)?")


def euros(cents: int) -> str:
    """'12,50 €' (no-break space), as a refusal shows an amount in either language."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole},{part:02d}\u00a0€"


def parse_euros(text: str, *, low: int = 1, high: int = MAX_AMOUNT_CENTS, zero: bool = True) -> int | None:
    """'12,50', '12.50', '12,5 €', '1 234,50', '€12.50', '-2,50' → cents; None unless it is one
    amount of euros with at most two decimals (see _AMOUNT), from `low` to `high` cents (and not 0
    when `zero` is False). The form that refuses says the format: "e.g. 12,50"."""
    cleaned = " ".join(text.split())  # any run of spaces (no-break ones too) is one space
    m = _AMOUNT.fullmatch(cleaned) if len(cleaned) <= _MAX_TEXT else None
    if m is None or (m["before"] and m["after"]):
        return None
    magnitude = int(m["whole"].replace(" ", "")) * 100 + int((m["part"] or "0").ljust(2, "0"))
    cents = -magnitude if m["minus"] else magnitude
    if not low <= cents <= min(high, MAX_AMOUNT_CENTS) or cents < -MAX_AMOUNT_CENTS or (cents == 0 and not zero):
        return None
    return cents


def whole_cents(value: object, *, low: int = 1, high: int = MAX_AMOUNT_CENTS) -> int | None:
    """An amount already in cents (the API, a command): an int from `low` to `high`, never a bool."""
    # bool is an int in Python: True must not pay one cent.
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if low <= value <= min(high, MAX_AMOUNT_CENTS) else None
