"""The bar's stock, its pure rules: one home for each.

Quantities are integers in thousandths of the item's unit ("milli": 1 bottle = 1000, 0,5 l of a
keg counted in litres = 500, 4 cl of Borovička counted in litres = 40), never floats. Purchase
prices are integer cents; a unit's cost is the last delivery's price excl. VAT per whole unit
(cents), and the value a movement moves is its quantity at that cost, rounded half away from zero.

The level of an item is the sum of its movements; a movement is never changed. Low stock: the level
at or under the item's threshold; a negative level is recorded (an alert), never refused: the count
may be wrong, the drink was poured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

MILLI = 1000
# Units an item is counted in (Slovak, English as the pages show them).
Unit = Literal["piece", "litre", "kg"]
UNITS: tuple[str, ...] = get_args(Unit)
UNIT_WORDS = {"piece": ("ks", "pc"), "litre": ("l", "l"), "kg": ("kg", "kg")}
# What a movement is: a sale on a tab and its void (given back), a manager's return of a sold item
# after a payment's reversal, a delivery, a write-off, a stocktake's difference.
MovementKind = Literal["sale", "void", "return", "delivery", "write_off", "stocktake"]
MOVEMENT_KINDS: tuple[str, ...] = get_args(MovementKind)
WriteOffReason = Literal["broken", "expired", "staff_drink", "other"]
WRITE_OFF_REASONS: tuple[str, ...] = get_args(WriteOffReason)
# 100 000 units at once (a delivery of bottles, litres) is a typo; so is a recipe's 100 units a portion.
MAX_QUANTITY_MILLI = 100_000 * MILLI
MAX_PORTION_MILLI = 100 * MILLI
# "posledné 3": the bar's product buttons say how many are left from this many down.
LAST_FEW = 3

# "1", "1,5", "0.25", "12 000", "-2" (a difference): at most three decimals.
_QUANTITY = re.compile(r"(?P<minus>-)?(?P<whole>[0-9]{1,3}(?: [0-9]{3})+|[0-9]+)(?:[.,](?P<part>[0-9]{1,3}))?")


def parse_quantity(text: str, *, low: int = 1, high: int = MAX_QUANTITY_MILLI) -> int | None:
    """'1,5' / '1.5' / '12 000' / '0,04' → thousandths; None unless one number with at most three
    decimals from `low` to `high` thousandths."""
    cleaned = " ".join(text.split())
    m = _QUANTITY.fullmatch(cleaned) if len(cleaned) <= 16 else None
    if m is None:
        return None
    magnitude = int(m["whole"].replace(" ", "")) * MILLI + int((m["part"] or "0").ljust(3, "0"))
    milli = -magnitude if m["minus"] else magnitude
    return milli if low <= milli <= high else None


def quantity_text(milli: int, lang: str = "sk") -> str:
    """1500 → '1,5' (Slovak) / '1.5'; 2000 → '2'; -40 → '-0,04'."""
    sign = "-" if milli < 0 else ""
    whole, part = divmod(abs(milli), MILLI)
    if not part:
        return f"{sign}{whole}"
    return f"{sign}{whole}{',' if lang == 'sk' else '.'}{f'{part:03d}'.rstrip('0')}"


def _div_half_up(n: int, d: int) -> int:
    """n / d rounded half away from zero (d > 0), in integers."""
    q = (2 * abs(n) + d) // (2 * d)
    return q if n >= 0 else -q


def net_of(gross_cents: int, vat_percent: int) -> int:
    """A price incl. VAT → excl. VAT, in cents (rounded half up)."""
    return _div_half_up(gross_cents * 100, 100 + vat_percent)


def gross_of(net_cents: int, vat_percent: int) -> int:
    """A price excl. VAT → incl. VAT, in cents (rounded half up)."""
    return _div_half_up(net_cents * (100 + vat_percent), 100)


def unit_cost(net_cents: int, quantity_milli: int) -> int:
    """The cost of one whole unit (cents excl. VAT) of a delivery of `quantity_milli` for `net_cents`."""
    return _div_half_up(net_cents * MILLI, quantity_milli)


def value_of(quantity_milli: int, unit_cost_cents: int) -> int:
    """What `quantity_milli` is worth at `unit_cost_cents` a unit (signed, rounded half away from zero)."""
    return _div_half_up(quantity_milli * unit_cost_cents, MILLI)


@dataclass(frozen=True)
class Delivery:
    """A delivery's prices as typed: `price_cents` for the whole line, incl. or excl. VAT."""

    price_cents: int
    vat_percent: int
    includes_vat: bool

    @property
    def net_cents(self) -> int:
        return net_of(self.price_cents, self.vat_percent) if self.includes_vat else self.price_cents

    @property
    def gross_cents(self) -> int:
        return self.price_cents if self.includes_vat else gross_of(self.price_cents, self.vat_percent)


def portions_left(levels_and_portions: list[tuple[int, int]]) -> int | None:
    """How many of a product the stock still makes: the fewest over its recipe's lines of
    floor(level / quantity a portion) (negative when a level is). None: no recipe (not tracked)."""
    if not levels_and_portions:
        return None
    return min(level // portion for level, portion in levels_and_portions)


def few_left(left: int | None) -> bool:
    """Whether the bar's button says how many are left ("posledné 3"): tracked and 3 or fewer."""
    return left is not None and left <= LAST_FEW


StockState = Literal["ok", "low", "negative"]


def stock_state(level_milli: int, threshold_milli: int) -> StockState:
    """An item's level against its threshold: negative below zero, low at or under the threshold
    (a threshold of 0 warns only when nothing is left)."""
    if level_milli < 0:
        return "negative"
    if level_milli <= threshold_milli:
        return "low"
    return "ok"


def counted_difference(level_milli: int, counted_milli: int) -> int:
    """A stocktake's movement for an item: what was counted less what the movements say."""
    return counted_milli - level_milli


def margin_cents(revenue_net_cents: int, cost_cents: int) -> int:
    return revenue_net_cents - cost_cents


def margin_percent(revenue_net_cents: int, cost_cents: int) -> int | None:
    """The margin as a whole percent of the revenue excl. VAT (None without revenue)."""
    if revenue_net_cents <= 0:
        return None
    return _div_half_up((revenue_net_cents - cost_cents) * 100, revenue_net_cents)
