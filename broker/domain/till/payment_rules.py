"""What a payment may be: the amount against what is owed, cash tendered and its change, what the
payment freezes as its receipt lines. Pure: numbers in, a checked payment (or a refusal) out.

Rules (issue 12), each in one place here:
- An amount is a positive whole number of cents, at most MAX_AMOUNT_CENTS.
- It is never above what is owed (the tab's, or the split part's remaining): money beyond the
  bill only ever goes back as change, and change exists only for cash.
- Cash: the amount counts against the bill; what is handed over for it is the amount rounded as
  the venue rounds cash (broker.domain.cash_rounding: 17,33 € is 17,35 € in cash, the +0,02 € the
  payment's rounding, outside the bill and its VAT). Typing that rounded amount (17,35 €) pays the
  17,33 € owed. Tendered ≥ the cash due, change = tendered - the cash due. Any other method takes
  no tendered amount and is never rounded.
- Nothing is owed (a paid tab or part) → refused, whatever the method; a paid split part is
  refused as that part ("Časť 1 … je už zaplatená"), never moved on to the next part.
- A one-tap payment names the amount the page showed as owed (`expected_owed_cents`): when the
  bill moved meanwhile (a drink put on it from another tablet, an item voided), it is refused
  with the new amount, so the guest is never charged what they were not told, nor less.
- What a payment paid for is frozen when it is taken (`frozen_lines`): the whole bill (or the whole
  part) when the payment pays all of it at once; otherwise one line per VAT rate, "Čiastočná
  úhrada", the amount shared out over the rates in proportion to what is still unpaid at each
  rate (broker.domain.till.money.allocate: largest remainder, odd cents to the larger remainder, ties to
  the higher rate). Because the weights are what is still unpaid per rate, the last payment takes
  exactly the rest at each rate: the receipts of one tab add up to its bill per VAT rate, to the cent.
  Each such line also freezes what it paid for by category (table time, drinks, food…): its amount
  over what its rate still owes per category (broker.domain.till.revenue.paid_for), so the last payment
  also takes exactly the rest of each category, and the day's categories are what was sold.
  A rate already paid beyond what it owes (an item voided after a part payment) gets a correcting
  negative line back to zero, and the amount it frees is shared over the rates still owed. A rate
  that owes exactly what its receipts paid, but for other categories (the voided item's share paid
  at the rate of what is left), gets a category move (broker.domain.till.receipt.CATEGORY_MOVE): 0,00 €,
  not on the receipt, only in what the payment paid for.
- A void must leave a paid tab's receipts right (`settled_exactly`): once the tab would owe nothing
  more, no later receipt could correct them, so such a void waits for the payment's reversal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from broker.domain.cash_rounding import NO_ROUNDING, cash_due
from broker.domain.euros import euros, whole_cents
from broker.domain.refusals import N_, Refusal
from broker.domain.till.money import allocate
from broker.domain.till.receipt import CATEGORY_MOVE, ReceiptLine, line_from_json
from broker.domain.till.revenue import by_category, paid_for, unpaid

__all__ = [
    "PARTIAL",
    "PaymentRefused",
    "Tender",
    "check_payment",
    "frozen_lines",
    "negated",
    "settled_exactly",
]

PARTIAL = "partial_payment"  # the category of a part payment's lines (one per rate; its `categories` say what it paid for)


class PaymentRefused(Refusal):
    """A payment or reversal the till refuses; the message says what to do instead."""


@dataclass(frozen=True)
class Tender:
    amount_cents: int  # what counts against the bill
    tendered_cents: int | None  # cash handed over (None: not cash)
    change_cents: int  # cash given back
    rounding_cents: int = 0  # cash only: handed over beyond the amount (negative: less); not revenue, no VAT

    @property
    def due_cents(self) -> int:
        """What the guest pays: the amount, and for cash its rounding."""
        return self.amount_cents + self.rounding_cents


def check_payment(
    amount_cents: object,
    owed_cents: int,
    *,
    cash: bool,
    tendered_cents: object,
    what: object,
    rounding: int = NO_ROUNDING,
    part: int | None = None,
    tab: object = None,
    expected_owed_cents: object = None,
) -> Tender:
    """The payment `amount_cents` against `owed_cents` (of `what`, a name for the refusal), or a
    refusal; cash rounded to `rounding` cents (the venue's [till] cash_rounding). A split part's
    payment names the part (`part`) and its tab (`tab`); `expected_owed_cents` is what the page
    showed as owed (None: not checked)."""
    if owed_cents <= 0:
        if part is not None:
            raise PaymentRefused(
                N_("Part %(part)d of %(tab)s is paid already; choose a part still to pay."), part=part, tab=tab if tab is not None else what
            )
        raise PaymentRefused(N_("%(what)s is paid already; there is nothing left to pay."), what=what)
    if expected_owed_cents is not None and expected_owed_cents != owed_cents:
        raise PaymentRefused(
            N_("The bill changed meanwhile: %(what)s now owes %(owed)s, not %(shown)s. Check it with the guest and pay again."),
            what=what,
            owed=euros(owed_cents),
            shown=euros(whole_cents(expected_owed_cents) or 0),
        )
    amount = whole_cents(amount_cents)
    if amount is None:
        raise PaymentRefused(N_("Give the amount in whole cents above zero, e.g. 12,50 €."))
    if cash and amount == cash_due(owed_cents, rounding):
        amount = owed_cents  # the cash to pay, as the page shows it: it pays what is owed, exactly
    if amount > owed_cents:
        raise PaymentRefused(
            N_(
                "%(amount)s is more than the %(owed)s %(what)s owes; for cash, type what the customer gave in Received and the change is worked out."
            ),
            amount=euros(amount),
            owed=euros(owed_cents),
            what=what,
        )
    if not cash:
        if tendered_cents is not None:
            raise PaymentRefused(N_("Only cash takes a received amount and gives change."))
        return Tender(amount, None, 0)
    due = cash_due(amount, rounding)
    if tendered_cents is None:
        return Tender(amount, due, 0, due - amount)  # exact money
    tendered = whole_cents(tendered_cents)
    if tendered is None:
        raise PaymentRefused(N_("Give the received cash in whole cents above zero, e.g. 20,00 €."))
    if tendered < due:
        raise PaymentRefused(N_("Received %(tendered)s is less than the %(amount)s to pay."), tendered=euros(tendered), amount=euros(due))
    return Tender(amount, tendered, tendered - due, due - amount)


def frozen_lines(
    amount_cents: int,
    lines: Iterable[ReceiptLine],
    paid_before: Iterable[ReceiptLine],
    *,
    label: str,
    label_en: str,
) -> list[ReceiptLine]:
    """The lines a payment of `amount_cents` freezes, for a bill (or part) of `lines` on which the
    lines `paid_before` (earlier payments' frozen lines and category moves, reversals included) are
    already paid.

    All of it in one payment: the bill's own lines. Otherwise one "part payment" line per VAT rate
    (see the module's rule), named with `label` (Slovak) / `label_en`, and the category moves.
    """
    lines = list(lines)
    before = [_said(x, lines) for x in paid_before]
    total = sum(x.amount_cents for x in lines)
    if not any(x.amount_cents for x in before) and amount_cents == total and lines:
        return lines
    left: dict[int, dict[str, int]] = {}  # rate -> category -> what is still unpaid there
    for (rate, category), cents in unpaid(lines, before).items():
        left.setdefault(rate, {})[category] = cents
    owes = {rate: sum(cats.values()) for rate, cats in left.items()}
    # A rate paid beyond its bill (an item voided after a part payment) is corrected back to what
    # it owes, and what that frees goes to the rates still owed: receipts add up per rate, always.
    over = {rate: cents for rate, cents in owes.items() if cents < 0}
    owed = {rate: cents for rate, cents in owes.items() if cents > 0} or {0: 0}
    shares = allocate(amount_cents - sum(over.values()), owed)
    paid = [
        _part_line(rate, share, left.get(rate, {}), f"Čiastočná úhrada účtu {label}", f"Part payment of the bill {label_en}")
        for rate, share in shares.items()
    ]
    corrections = [
        _part_line(rate, cents, left[rate], f"Oprava DPH po storne, účet {label}", f"VAT correction after a void, bill {label_en}")
        for rate, cents in over.items()
    ]
    moves = [
        ReceiptLine(
            f"Oprava kategórií po storne, účet {label}",
            f"Categories corrected after a void, bill {label_en}",
            0,
            None,
            0,
            rate,
            CATEGORY_MOVE,
            paid_for(0, left[rate]),
        )
        for rate, cents in owes.items()
        if cents == 0 and any(left[rate].values())
    ]
    lines_paid = sorted((x for x in paid + corrections if x.amount_cents), key=lambda x: (-x.vat_percent, x.amount_cents < 0))
    return lines_paid + moves


def settled_exactly(lines: Iterable[ReceiptLine], paid: Iterable[ReceiptLine]) -> bool:
    """Whether receipts that paid `paid` (lines and category moves, reversals included) paid exactly
    what the bill of `lines` holds, rate by rate and category by category."""
    lines = list(lines)
    return not any(unpaid(lines, [_said(x, lines) for x in paid]).values())


def _said(line: ReceiptLine, bill: list[ReceiptLine]) -> ReceiptLine:
    """A part payment's line frozen before lines said what they paid for: shared over the bill as it
    is now (as the close-out reads it, broker.till.takings)."""
    if line.category == PARTIAL and not line.categories and line.amount_cents:
        return replace(line, categories=by_category(line.amount_cents, line.vat_percent, bill))
    return line


def _part_line(rate: int, cents: int, left: dict[str, int], description: str, description_en: str) -> ReceiptLine:
    """One rate's share of a part payment, with what it paid for by category (the Z report's)."""
    return ReceiptLine(
        description=description,
        description_en=description_en,
        quantity=1,
        unit_cents=cents,
        amount_cents=cents,
        vat_percent=rate,
        category=PARTIAL,
        categories=paid_for(cents, left) if cents else (),
    )


def negated(lines: Iterable[ReceiptLine]) -> list[ReceiptLine]:
    """A reversal's lines: the original's given back (quantity and amount negative, the unit price kept)."""
    return [
        ReceiptLine(
            x.description,
            x.description_en,
            -x.quantity,
            x.unit_cents,
            -x.amount_cents,
            x.vat_percent,
            x.category,
            tuple((c, -cents) for c, cents in x.categories),
        )
        for x in lines
    ]


def part_lines(doc: Mapping[str, object]) -> list[ReceiptLine]:
    """A split part's lines (m1's Tab.split JSON: {"lines": [ReceiptLine-shaped dicts], ...})."""
    rows = doc.get("lines") or []
    assert isinstance(rows, list)
    return [line_from_json(row) for row in rows]
