"""One-tap payment buttons (templates/_quick_pay.html) for the pay page and the tab page.

What the guest owes is paid with one tap: a button per payment method ("Hotovosť", "Karta") for
the exact amount (in cash, rounded as the venue rounds cash: broker.domain.cash_rounding), and for
cash a button per note the guest may hand over (the change on it). Each
button is a form of its own posting what the full payment form posts (dashboard.web.pages_payments),
plus `expect`: the amount the page showed, which the hub checks on its writer
(broker.domain.till.payment_rules.check_payment), so a bill that moved since the page was drawn is never
paid at a stale amount. All the buttons of one bill (or one split part) share one one-time key:
a second tap, on the same button or another, finds the payment already made.

Offered only for a bill whose games are over (a running game's bill grows every minute: its
payment is the full form's, an amount typed on purpose).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

NOTES = (500, 1000, 2000, 5000, 10000)  # the notes a guest hands over: 5, 10, 20, 50, 100 €
NOTES_SHOWN = 4


def new_request_id() -> str:
    return secrets.token_urlsafe(18)


def plain_euros(cents: int) -> str:
    """12,50: what an amount field is filled with (no sign: the field says €)."""
    return f"{cents // 100},{cents % 100:02d}" if cents > 0 else ""


def notes_for(due_cents: int) -> tuple[int, ...]:
    """The notes worth offering for `due_cents`: the smallest few above it (an exact note is "Hotovosť")."""
    return tuple(n for n in NOTES if n > due_cents)[:NOTES_SHOWN]


@dataclass(frozen=True)
class QuickPay:
    """The buttons for one amount due: a whole tab's (part None) or a split part's."""

    tab_id: int
    due_cents: int  # what counts against the bill (posted as the amount, and as what the page showed)
    cash_cents: int  # the same in cash (rounded to 0,05 € where the venue rounds cash)
    part: int | None
    request_id: str
    notes: tuple[int, ...]

    @property
    def amount(self) -> str:
        return plain_euros(self.due_cents)

    @staticmethod
    def plain(cents: int) -> str:
        return plain_euros(cents)


def quick_pay(tab_id: int, due_cents: int, part: int | None = None, *, cash_cents: int | None = None) -> QuickPay:
    """The buttons for `due_cents`; `cash_cents`: what that is in cash (default: the same)."""
    cash = due_cents if cash_cents is None else cash_cents
    return QuickPay(tab_id, due_cents, cash, part, new_request_id(), notes_for(cash))
