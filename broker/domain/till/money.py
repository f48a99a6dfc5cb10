"""A tab's bill as money: its lines with their VAT rates, the VAT per rate, what is paid and owed.

Pure: lines and payments in, totals out. A tab collects the bill of its game (table time, at the venue's
VAT rate: broker.domain.floor.game_ops), the items put on it from the product list (each at its product's
rate and in its category: drinks, a game's extras…) and the tabs merged into it. VAT is computed per rate
on the gross sum of that rate's lines, as a Slovak receipt prints it (base and VAT per rate), so
a receipt's VAT rows are exactly what the close-out adds up.

Integer cents throughout; nothing here rounds except `billing.vat_share` (half-up).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol, TypeVar

from broker.domain.billing import vat_share
from broker.domain.json_shape import HIDDEN, derived

__all__ = ["TABLE_TIME", "MoneyLine", "TabBill", "TabStatus", "VatRow", "allocate", "share_out", "tab_bill", "vat_rows"]

TABLE_TIME = "table_time"  # the category of a game's lines (time, minimum, corrections)
K = TypeVar("K", bound=Hashable)
TabStatus = Literal["open", "partly_paid", "paid"]


@dataclass(frozen=True)
class MoneyLine:
    """One line of a tab's bill, whatever it came from.

    `key` says where: "session:<game id>:<n>" for the n-th line of a game's bill (the stored key keeps its first spelling),
    "item:<tab item id>" for an item from the product list. A voided item is not a line.
    """

    key: str
    description: str  # Slovak, as the receipt prints it
    description_en: str
    quantity: int
    unit_cents: int | None
    amount_cents: int
    vat_percent: int
    category: str
    tab_id: Annotated[int, HIDDEN]  # the tab it was put on (a merged tab's lines keep their own)


@dataclass(frozen=True)
class VatRow:
    vat_percent: int
    gross_cents: int
    vat_cents: int

    @derived
    def net_cents(self) -> int:
        return self.gross_cents - self.vat_cents


class Priced(Protocol):
    @property
    def vat_percent(self) -> int: ...

    @property
    def amount_cents(self) -> int: ...


def vat_rows(lines: Iterable[Priced]) -> tuple[VatRow, ...]:
    """Gross and VAT per rate, highest rate first; a rate whose lines sum to zero still shows."""
    gross: dict[int, int] = {}
    for line in lines:
        gross[line.vat_percent] = gross.get(line.vat_percent, 0) + line.amount_cents
    # A negative sum (a reversal's lines, a correction larger than the rest) rounds symmetrically,
    # so a reversal's VAT is exactly its original's, negated.
    return tuple(VatRow(rate, g, vat_share(g, rate) if g >= 0 else -vat_share(-g, rate)) for rate, g in sorted(gross.items(), reverse=True))


@dataclass(frozen=True)
class TabBill:
    lines: tuple[MoneyLine, ...]
    paid_cents: int  # the sum of the tab's payments, reversals included (they are negative)
    closed: bool  # no game on it is still running: the total can no longer grow by itself

    @property
    def total_cents(self) -> int:
        return sum(line.amount_cents for line in self.lines)

    @property
    def vat(self) -> tuple[VatRow, ...]:
        return vat_rows(self.lines)

    @property
    def owed_cents(self) -> int:
        return self.total_cents - self.paid_cents

    @property
    def status(self) -> TabStatus:
        if self.paid_cents <= 0:
            return "paid" if self.closed and self.total_cents == 0 and self.lines else "open"
        return "paid" if self.closed and self.owed_cents <= 0 else "partly_paid"


def tab_bill(lines: Iterable[MoneyLine], paid_cents: int, *, closed: bool) -> TabBill:
    return TabBill(tuple(lines), paid_cents, closed)


def allocate(amount_cents: int, weights: dict[int, int]) -> dict[int, int]:
    """Share `amount_cents` out in proportion to `weights` (e.g. gross per VAT rate), exactly.

    Largest remainder: each key gets the floor of its exact share, and the cents left over go
    one each to the keys with the largest remainders, ties to the larger key first (the higher
    VAT rate). The shares always sum to `amount_cents`; a key of weight 0 gets 0 unless all are 0
    (then everything goes to the largest key). Works for negative amounts (a reversal) by symmetry.
    """
    return share_out(amount_cents, weights, first=lambda k: -k)


def share_out(amount_cents: int, weights: Mapping[K, int], *, first: Callable[[K], Any]) -> dict[K, int]:
    """`allocate` for any keys: a tie (and an amount over weights all 0) goes to the key `first` ranks first."""
    if not weights:
        raise ValueError("nothing to allocate to")
    if amount_cents < 0:
        return {k: -v for k, v in share_out(-amount_cents, weights, first=first).items()}
    total = sum(weights.values())
    if total == 0:
        top = min(weights, key=first)
        return {k: (amount_cents if k == top else 0) for k in weights}
    shares = {k: amount_cents * w // total for k, w in weights.items()}
    left = amount_cents - sum(shares.values())
    order = sorted(weights, key=lambda k: (-((amount_cents * weights[k]) % total), first(k)))
    for k in order[:left]:
        shares[k] += 1
    return shares
