"""Cash rounding: what a guest hands over for an amount paid in cash. Pure; the one place of the rule.

Slovak law since 1 July 2022 (zákon 18/1996 Z. z. o cenách, § 3 ods. 4): a price paid in cash is
rounded to 5 cents, a remainder below half of 5 cents down, half or more up, so the last digit
1-2 goes down, 3-4 up, 6-7 down, 8-9 up; a price of 1 or 2 cents in cash is 5 cents (never
nothing). What is paid otherwise (card, vouchers) is not rounded; in a mixed payment only the cash
part is. VAT is counted on the price before rounding: the rounding is outside the VAT base.

The venue turns it on with `[till] cash_rounding = 5`; 1 is no rounding (every amount is itself).
The till keeps the bill exact: a cash payment counts its amount against the bill (17,33 €) and
records the rounding beside it (+0,02 €: the drawer holds 17,35 €), so the tab's cents per VAT rate
never change, and the Z report's expected cash adds the rounding as a line of its own.

Integer cents throughout; a negative amount (a reversal) rounds as its positive, negated.
"""

from __future__ import annotations

__all__ = ["NO_ROUNDING", "STEPS", "cash_due", "rounding_of"]

NO_ROUNDING = 1
# 1: none. 5: to 0,05 € (Slovakia; other euro countries that round cash round to 5 cents too).
STEPS = (NO_ROUNDING, 5)


def cash_due(cents: int, step: int) -> int:
    """The cash handed over for `cents` when the venue rounds cash to `step` cents."""
    if step not in STEPS:
        raise ValueError(f"cash rounding step {step!r} is not one of {STEPS}")
    if step == NO_ROUNDING or cents == 0:
        return cents
    if cents < 0:
        return -cash_due(-cents, step)
    rest = cents % step
    rounded = cents - rest + (step if 2 * rest >= step else 0)
    return rounded or step  # 1 or 2 cents in cash are 5 cents, not nothing


def rounding_of(cents: int, step: int) -> int:
    """The rounding of a cash amount: what is handed over beyond it (negative: less than it)."""
    return cash_due(cents, step) - cents
