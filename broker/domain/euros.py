"""Amounts as people type them, and the till's fixed lists: one home for each rule.

Every form that takes money (a payment and what the guest gave, the drawer's float and count, a
product's price, a fee, a bill's correction, split amounts) reads the text with `parse_euros`,
each with its own bounds, and no amount anywhere may pass MAX_AMOUNT_CENTS. Money never passes
through a float.
"""

from __future__ import annotations

import re
from decimal import Decimal

# 100 000 €: no amount a bar takes, counts or corrects at once is larger; extra zeros are a typo.
MAX_AMOUNT_CENTS = 10_000_000
# Slovak VAT rates since 2025; 0 for what is outside VAT (e.g. a deposit).
VAT_RATES = (23, 19, 5, 0)
PRODUCT_CATEGORIES = ("drinks", "food", "pizza_toppings", "tournament_entry", "cue_service", "other")

_MAX_TEXT = 20  # "100 000,00 €" and then some: longer is not an amount
# Plain ASCII digits and at most cents: no exponent ("1e3"), no other scripts' digits (full-width ones), no "+".
_AMOUNT = re.compile(r"-?[0-9]+(?:\.[0-9]{1,2})?")


def euros(cents: int) -> str:
    """'12,50 €' (no-break space), as a refusal shows an amount in either language."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole},{part:02d}\u00a0€"


def parse_euros(text: str, *, low: int = 1, high: int = MAX_AMOUNT_CENTS, zero: bool = True) -> int | None:
    """'12,50', '12.50', '12,5 €', '1 234,50', '-2,50' → cents; None unless it is an amount of euros
    with at most two decimals, from `low` to `high` cents (and not 0 when `zero` is False)."""
    cleaned = text.strip().replace(" ", "").replace("\u00a0", "").replace("€", "").replace(",", ".")
    if len(cleaned) > _MAX_TEXT or not _AMOUNT.fullmatch(cleaned):
        return None
    cents = int(Decimal(cleaned) * 100)
    if not low <= cents <= min(high, MAX_AMOUNT_CENTS) or cents < -MAX_AMOUNT_CENTS or (cents == 0 and not zero):
        return None
    return cents


def whole_cents(value: object, *, low: int = 1, high: int = MAX_AMOUNT_CENTS) -> int | None:
    """An amount already in cents (the API, a command): an int from `low` to `high`, never a bool."""
    # bool is an int in Python: True must not pay one cent.
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if low <= value <= min(high, MAX_AMOUNT_CENTS) else None
