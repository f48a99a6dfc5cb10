"""A receipt: what one payment paid for, as the customer, the inspector and eKasa see it. Pure.

A payment freezes its lines when it is taken (`Payment.lines`, in the shape of `lines_json`), so
the printed receipt, a reprint next week, the eKasa registration and the close-out read the same
lines and VAT rows and cannot drift apart. Integer cents; a reversal's receipt has negative amounts.

Beside its lines a payment may freeze category moves (`CATEGORY_MOVE`): lines of 0,00 € whose
`categories` move money already paid at one VAT rate from a category to another (an item voided
after a part payment, at a rate that then owes exactly what its receipts paid). They are no part
of the receipt (not printed, not sent to eKasa: `lines_from_json` leaves them out), only of what
the payment paid for (`lines_from_json(doc, moves=True)`: the close-out's categories).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from broker.domain.json_shape import HIDDEN, derived, every_field_sent
from broker.domain.till.money import MoneyLine, VatRow, vat_rows
from broker.domain.vouchers import CREDIT_SALE

__all__ = ["CATEGORY_MOVE", "Issuer", "Receipt", "ReceiptLine", "line_from_json", "lines_from_json", "lines_json", "vat_from_json"]

CATEGORY_MOVE = "category_move"  # a 0,00 € line moving what a rate paid between categories: not on the receipt


@dataclass(frozen=True)
class ReceiptLine:
    description: str  # Slovak
    description_en: str
    quantity: int
    unit_cents: int | None
    amount_cents: int
    vat_percent: int
    category: str
    # A part payment's line (category "partial_payment", one per VAT rate) paid for a share of what
    # the bill holds at its rate: that share by category, summing to amount_cents (broker.domain.till.revenue).
    # Frozen with the payment for the revenue's categories; the receipt's JSON never had it.
    categories: Annotated[tuple[tuple[str, int], ...], HIDDEN] = ()


@dataclass(frozen=True)
class Issuer:
    """Who issues the receipt (the venue file's [operator], names filled in from [venue])."""

    name: str
    address: str
    ico: str
    dic: str
    ic_dph: str


@every_field_sent
@dataclass(frozen=True)
class Receipt:
    payment_id: int
    number: int  # the receipt number, one sequence for the venue
    issued_at: datetime  # aware UTC
    staff: str
    issuer: Issuer
    lines: tuple[ReceiptLine, ...]
    vat: tuple[VatRow, ...]
    total_cents: int  # = the payment's amount: the lines' sum, what counts against the bill
    method: str  # the payment method's id (venue [till])
    method_name: str  # Slovak
    method_name_en: Annotated[str, HIDDEN]
    tendered_cents: int | None
    change_cents: int
    tab_id: Annotated[int, HIDDEN]
    table_name: str | None  # None: a walk-in tab
    reverses_number: int | None = None  # a reversal: the receipt number it reverses
    fiscal_state: str = "none"  # broker.storage.models.FISCAL_STATES; "none": not a fiscal receipt
    fiscal_id: str | None = None
    reason: str | None = None  # a reversal: why
    part: Annotated[int | None, HIDDEN] = None  # the split part it paid
    paragon_no: Annotated[str | None, HIDDEN] = None  # a hand-written paragón that stands for it (eKasa was down)
    table_name_en: Annotated[str | None, HIDDEN] = None
    # Cash rounding (broker.domain.cash_rounding): a line of its own after the total, outside the VAT
    # base; what the guest paid is the total and the rounding.
    rounding_cents: Annotated[int, Field(description="Cash rounding, its own line outside the VAT base")] = 0

    @derived
    def paid_cents(self) -> int:
        """What changed hands: the total, and for cash its rounding (17,33 € + 0,02 € = 17,35 €)."""
        return self.total_cents + self.rounding_cents

    @derived
    def fiscal(self) -> bool:
        """Whether this is a fiscal receipt (registered in eKasa); otherwise it must say it is not."""
        return self.fiscal_state == "registered"

    @derived
    def missing_issuer(self) -> tuple[str, ...]:
        """What the receipt should name and the venue file leaves empty ("ico", "dic"; IČ DPH only for a VAT payer)."""
        return tuple(f for f in ("name", "address", "ico", "dic") if not getattr(self.issuer, f))


def lines_json(lines: Iterable[MoneyLine | ReceiptLine]) -> dict[str, object]:
    """The frozen shape of `Payment.lines`: {"lines": [...], "vat": [...]}, VAT per rate from the lines;
    category moves (CATEGORY_MOVE) under "moves", out of the receipt's lines and VAT."""
    given = list(lines)
    lines = [x for x in given if x.category != CATEGORY_MOVE]
    moves = [x for x in given if x.category == CATEGORY_MOVE]
    vat = vat_rows(x for x in lines if x.category != CREDIT_SALE)  # credit sold: outside VAT (broker.domain.vouchers)
    return {
        "lines": _rows(lines),
        "vat": [{"vat_percent": v.vat_percent, "gross_cents": v.gross_cents, "vat_cents": v.vat_cents} for v in vat],
        **({"moves": _rows(moves)} if moves else {}),
    }


def _rows(lines: Iterable[MoneyLine | ReceiptLine]) -> list[dict[str, object]]:
    return [
        {
            "description": x.description,
            "description_en": x.description_en,
            "quantity": x.quantity,
            "unit_cents": x.unit_cents,
            "amount_cents": x.amount_cents,
            "vat_percent": x.vat_percent,
            "category": x.category,
            **({"categories": [[c, cents] for c, cents in x.categories]} if isinstance(x, ReceiptLine) and x.categories else {}),
        }
        for x in lines
    ]


_FIELDS = ("description", "description_en", "quantity", "unit_cents", "amount_cents", "vat_percent", "category")


def line_from_json(row: Mapping[str, Any]) -> ReceiptLine:
    """One line of `lines_json`'s shape (keys it may grow are ignored)."""
    shares = tuple((str(c), int(cents)) for c, cents in row.get("categories") or ())
    fields: dict[str, Any] = {k: row.get(k) for k in _FIELDS}  # JSON: its shape checked by its writer, lines_json
    return ReceiptLine(**fields, categories=shares)


def lines_from_json(doc: Mapping[str, Any], *, moves: bool = False) -> tuple[ReceiptLine, ...]:
    """The receipt's lines; with `moves`, its category moves after them (what the payment paid for)."""
    rows = [*doc.get("lines", ()), *(doc.get("moves", ()) if moves else ())]
    return tuple(line_from_json(row) for row in rows if isinstance(row, Mapping))


def vat_from_json(doc: Mapping[str, Any]) -> tuple[VatRow, ...]:
    return tuple(VatRow(**row) for row in doc.get("vat", ()))
