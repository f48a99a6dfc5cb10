"""Payments and receipts: money taken for a tab (cash with change, card, the club's other methods),
reversed by a manager with a reason, never deleted; the receipt numbered and printed.

The commands PayTab and ReversePayment have their handlers here, run by the hub's writer.
Each payment, in one transaction: the rules of broker.domain.till.payment_rules against what the tab
(or its split part) owes now (broker.till.tabs.bill_of_tab), the next receipt number (one
sequence: the writer is the only one numbering), the business day it counts on (CloseOut.day_for),
its frozen lines, the eKasa hook (Fiscal.payment_recorded), Tab.settled_at, the audit entry. After
the commit: the live push (the floor and the bills list show the tab's new state).

A form's one-time key (`request_id`, unique in the table) makes a double tap or a resent form
find the payment it already made: the same answer again, never a second payment.

A cash payment keeps its amount against the bill exact and its cash rounding beside it
(`rounding_cents`, broker.domain.cash_rounding), so the tab is paid to the cent per VAT rate while
the drawer's count includes the rounding.

Nothing about money is updated: a reversal is a new row of the opposite amount (and rounding)
naming the original (`reverses_id`, unique: once). Only `settled_at` (a cache of "paid in full") and the
fiscal state columns ever change on these rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.events import SessionChanged
from broker.core.ports import HallState
from broker.domain.refusals import N_, Name
from broker.domain.till import payment_rules as rules
from broker.domain.till.money import TabBill
from broker.domain.till.receipt import ReceiptLine, lines_from_json, lines_json
from broker.domain.venue import PaymentMethod
from broker.domain.vouchers import CREDIT_SALE, PACKAGE_SALE, WALLET_METHODS
from broker.storage.after_commit import Effects, after_commit
from broker.storage.audit import record_audit
from broker.storage.models import Payment, Tab
from broker.till.closeout import CloseOut
from broker.till.events import TabPaid
from broker.till.fiscal import Fiscal
from broker.till.tabs import Tabs, bill_of_tab, name_of

MAX_REASON = 200
MIN_REASON = 3
MAX_REQUEST_ID = 64


def is_wallet_payment(method: str, lines: Iterable[ReceiptLine]) -> bool:
    """A payment from a member's credit or package, or one selling either (broker.wallet owns its reversal)."""
    return method in {m for m, _, _ in WALLET_METHODS} or any(x.category in (CREDIT_SALE, PACKAGE_SALE) for x in lines)


class PaymentNotFound(rules.PaymentRefused):
    """No such tab, part or payment (the facade makes it the hub's NotFound)."""


@dataclass(frozen=True)
class Taken:
    """What a payment and a reversal answer: the payment, and whether it had been made already (a resent form)."""

    payment_id: int
    repeated: bool


@command
class PayTab(Command[Taken]):
    """Take `amount_cents` for a tab (or its split part `part`) by `method`; cash may say what was
    `tendered_cents`. A resent form (the same `request_id`) gets the same payment back; with
    `expect_owed_cents` (a one-tap button) it is refused when the tab (or part) owes another amount now."""

    tab: int
    method: str
    amount_cents: object
    tendered_cents: object = None
    part: int | None = None
    request_id: str | None = None
    expect_owed_cents: int | None = None  # what the page showed as owed: a one-tap payment is refused if the bill moved


@command
class ReversePayment(Command[Taken]):
    """Give a payment back with a reason (a manager's: the dashboard's access table); a new receipt
    of the opposite amount, once per payment."""

    payment: int
    reason: str
    request_id: str | None = None


def _paid_on(db: Db, tab_id: int, part: int | None = None) -> list[Payment]:
    q = select(Payment).where(Payment.tab_id == tab_id)
    if part is not None:
        q = q.where(Payment.part == part)
    return list(db.scalars(q.order_by(Payment.id)).all())


def _part(tab: Tab, part: int, name: Name) -> dict[str, Any]:
    parts = (tab.split or {}).get("parts") or []
    for p in parts:
        if p.get("n") == part:
            return dict(p)
    if not parts:
        raise PaymentNotFound(N_("%(what)s is not split into parts; pay the whole bill."), what=name)
    raise PaymentNotFound(N_("%(what)s has no part %(part)d."), what=name, part=part)


class Payments:
    def __init__(self, hall: HallState, tabs: Tabs, days: CloseOut, fiscal: Fiscal) -> None:
        self.h = hall
        self._tabs = tabs
        self._days = days  # which business day a payment counts on: days.day_for(db, at)
        self._fiscal = fiscal  # every payment (and reversal) goes to fiscal.payment_recorded(db, payment, after)

    # -- on the writer ----------------------------------------------------------------------

    def _method(self, method: str) -> PaymentMethod:
        m = self.h.venue.till.method(method) if isinstance(method, str) else None
        if m is None:
            raise rules.PaymentRefused(
                N_("%(method)s is not a payment method of this hall; choose one of the buttons."), method=str(method)[:40]
            )
        return m

    def _repeat(self, db: Db, request_id: str | None, *, tab_id: int | None = None, reverses: int | None = None) -> Taken | None:
        """The row a resent form already made, or None. A form's key belongs to what it was made for:
        a payment's key to a payment on that tab, a reversal's to the reversal of that payment. A key
        already used for anything else is a stale or copied form, refused, so it neither answers with
        another row nor goes unused."""
        if request_id is None:
            return None
        if not isinstance(request_id, str) or not 8 <= len(request_id) <= MAX_REQUEST_ID:
            raise rules.PaymentRefused(N_("This form is broken; open the payment page again."))
        done = db.scalar(select(Payment).where(Payment.request_id == request_id))
        if done is None:
            return None
        if reverses is not None:
            if done.reverses_id != reverses:
                raise rules.PaymentRefused(N_("This form was already used for another payment; open the receipt again."))
        elif done.reverses_id is not None or done.tab_id != tab_id:
            raise rules.PaymentRefused(N_("This form was already used for another bill; open the payment page again."))
        return Taken(done.id, True)

    @handles(PayTab)
    def pay(self, c: PayTab) -> Taken:
        """Refused with a reason (broker.domain.till.payment_rules) when the amount, the method or the tab does not allow it."""
        tab_id, method, amount, staff, tendered, part, request_id = (
            c.tab,
            c.method,
            c.amount_cents,
            c.actor,
            c.tendered_cents,
            c.part,
            c.request_id,
        )
        with self.h.store.session() as db:
            return self.take(
                db,
                tab_id,
                method,
                amount,
                staff,
                tendered=tendered,
                part=part,
                request_id=request_id,
                expect_owed_cents=c.expect_owed_cents,
            )

    def take(
        self,
        db: Db,
        tab_id: int,
        method: PaymentMethod | str,
        amount: object,
        staff: str,
        *,
        tendered: object = None,
        part: int | None = None,
        request_id: str | None = None,
        expect_owed_cents: int | None = None,
        lines: Callable[[TabBill, list[ReceiptLine]], list[ReceiptLine]] | None = None,
        voucher: str | None = None,
    ) -> Taken:
        """A payment in `db` (the writer's transaction): PayTab's, and the wallet's (broker.wallet:
        credit and packages are methods of their own, `m`; a package pays table time only, so it
        says which lines it freezes: `lines(bill, paid before)`, and names its voucher)."""
        now = self.h.clock()
        after = after_commit(db)
        repeated = self._repeat(db, request_id, tab_id=tab_id)
        if repeated is not None:
            return repeated
        tab = db.get(Tab, tab_id)
        if tab is None:
            raise PaymentNotFound(N_("There is no such bill; it may have been merged or the page is old."))
        name = name_of(self.h, tab, short=True)
        if tab.merged_into is not None:
            into = db.get(Tab, tab.merged_into)
            raise rules.PaymentRefused(
                N_("%(what)s is merged into %(into)s; pay it there."),
                what=name,
                into=name_of(self.h, into, short=True) if into else "?",
            )
        m = method if isinstance(method, PaymentMethod) else self._method(method)
        bill = bill_of_tab(db, self.h, tab_id, now)
        full, before, owed, what = self._what_is_paid(db, tab, bill, name, part)
        tender = rules.check_payment(
            amount,
            owed,
            cash=m.cash,
            tendered_cents=tendered,
            what=what,
            rounding=self.h.venue.till.cash_rounding,
            part=part,
            tab=name,
            expected_owed_cents=expect_owed_cents,
        )
        label = name.name if part is None else f"{name.name}, časť {part}"
        label_en = str(name) if part is None else f"{name}, part {part}"
        frozen = (
            lines(bill, before)
            if lines is not None
            else rules.frozen_lines(tender.amount_cents, full, before, label=label, label_en=label_en)
        )
        row = Payment(
            tab_id=tab_id,
            part=part,
            method=m.id,
            amount_cents=tender.amount_cents,
            tendered_cents=tender.tendered_cents,
            change_cents=tender.change_cents,
            rounding_cents=tender.rounding_cents,
            staff=staff,
            at=now,
            business_day=self._days.day_for(db, now),
            receipt_no=self._next_receipt_no(db),
            request_id=request_id,
            lines=lines_json(frozen),
            voucher=voucher,
        )
        self._record(db, tab, row, after, now)
        record_audit(
            db,
            staff,
            "payment.take",
            f"tab:{tab_id}",
            {
                "payment": row.id,
                "receipt_no": row.receipt_no,
                "method": m.id,
                "amount_cents": row.amount_cents,
                "tendered_cents": row.tendered_cents,
                "change_cents": row.change_cents,
                "rounding_cents": row.rounding_cents,
                "part": part,
            },
            at=now,
        )
        self._push(after, tab_id, tab.table_id)
        return Taken(row.id, False)

    def _what_is_paid(
        self, db: Db, tab: Tab, bill: TabBill, name: Name, part: int | None
    ) -> tuple[list[ReceiptLine], list[ReceiptLine], int, object]:
        """(the lines being paid, the lines already paid on them, what is still owed, its name)."""
        if part is None and (tab.split or {}).get("parts"):
            # Booked over all rates, it would leave the parts no longer adding up to what they owe.
            raise rules.PaymentRefused(N_("%(what)s is split into parts: choose the part this payment is for."), what=name)
        if part is None:
            lines = [
                ReceiptLine(x.description, x.description_en, x.quantity, x.unit_cents, x.amount_cents, x.vat_percent, x.category)
                for x in bill.lines
            ]
            before = [line for p in _paid_on(db, tab.id) for line in lines_from_json(p.lines, moves=True)]
            return lines, before, bill.owed_cents, name
        if isinstance(part, bool) or not isinstance(part, int):
            raise PaymentNotFound(N_("%(what)s has no such part."), what=name)
        doc = _part(tab, part, name)
        paid = _paid_on(db, tab.id, part)
        part_owed = int(doc.get("amount_cents", 0)) - sum(p.amount_cents for p in paid)
        before = [line for p in paid for line in lines_from_json(p.lines, moves=True)]
        what = Name(f"{name.name}, časť {part}", f"{name}, part {part}")
        # The part's remaining, but never more than the whole tab still owes (a payment made without
        # choosing a part counts against the tab, not against any part).
        return rules.part_lines(doc), before, min(part_owed, bill.owed_cents) if part_owed > 0 else part_owed, what

    @handles(ReversePayment)
    def reverse(self, c: ReversePayment) -> Taken:
        with self.h.store.session() as db:
            return self.give_back(db, c.payment, c.reason, c.actor, request_id=c.request_id)

    def give_back(
        self, db: Db, payment_id: int, reason_text: str, staff: str, *, request_id: str | None = None, wallet: bool = False
    ) -> Taken:
        """A reversal in `db` (the writer's transaction): ReversePayment's, and the wallet's (`wallet`:
        a payment that moved a member's credit or a package is given back only with its wallet row,
        by broker.wallet, so the balance follows)."""
        now = self.h.clock()
        reason = " ".join(str(reason_text).split())[:MAX_REASON]
        after = after_commit(db)
        repeated = self._repeat(db, request_id, reverses=payment_id)
        if repeated is not None:
            return repeated
        original = db.get(Payment, payment_id)
        if original is None:
            raise PaymentNotFound(N_("There is no such payment."))
        if original.reverses_id is not None:
            raise rules.PaymentRefused(
                N_("Receipt no. %(number)s is itself a reversal; it cannot be reversed."), number=original.receipt_no
            )
        done = db.scalar(select(Payment).where(Payment.reverses_id == original.id))
        if done is not None:
            raise rules.PaymentRefused(
                N_("Receipt no. %(number)s was reversed already (receipt no. %(reversal)s)."),
                number=original.receipt_no,
                reversal=done.receipt_no,
            )
        if len(reason) < MIN_REASON:
            raise rules.PaymentRefused(N_("Say why the payment is given back (at least 3 characters)."))
        if not wallet and is_wallet_payment(original.method, lines_from_json(original.lines, moves=True)):
            raise rules.PaymentRefused(
                N_("Receipt no. %(number)s moved a member's credit or package: reverse it on the member's page, so the balance follows."),
                number=original.receipt_no,
            )
        tab = db.get(Tab, original.tab_id)
        assert tab is not None
        row = Payment(
            tab_id=original.tab_id,
            part=original.part,
            method=original.method,
            amount_cents=-original.amount_cents,
            tendered_cents=None,
            change_cents=0,
            rounding_cents=-original.rounding_cents,  # the cash given back is what was taken
            staff=staff,
            at=now,
            business_day=self._days.day_for(db, now),
            reverses_id=original.id,
            reason=reason,
            receipt_no=self._next_receipt_no(db),
            request_id=request_id,
            lines=lines_json(rules.negated(lines_from_json(original.lines, moves=True))),
            voucher=original.voucher,
        )
        self._record(db, tab, row, after, now)
        record_audit(
            db,
            staff,
            "payment.reverse",
            f"tab:{tab.id}",
            {
                "payment": row.id,
                "receipt_no": row.receipt_no,
                "reverses": original.id,
                "reverses_no": original.receipt_no,
                "amount_cents": row.amount_cents,
                "rounding_cents": row.rounding_cents,
            },
            reason=reason,
            at=now,
        )
        self._push(after, tab.id, tab.table_id)
        return Taken(row.id, False)

    def _record(self, db: Db, tab: Tab, row: Payment, after: Effects, now: Any) -> None:
        """What every new payment row, a reversal too, goes through: stored (it gets its id), told to
        eKasa in the same transaction, and the tab's settled mark brought up to date."""
        db.add(row)
        db.flush()
        self._fiscal.payment_recorded(db, row, after)
        self._settle(db, tab, now)

    def next_receipt_no(self, db: Db) -> int:
        """The next receipt's number (the wallet's refund of credit numbers its receipt here too)."""
        return self._next_receipt_no(db)

    def _next_receipt_no(self, db: Db) -> int:
        # One sequence for the venue; only the writer numbers, so max + 1 cannot race (and the
        # column is unique should anything else ever try).
        return int(db.scalar(select(func.coalesce(func.max(Payment.receipt_no), 0))) or 0) + 1

    def game_stopped(self, db: Db, tab_id: int) -> None:
        """A game whose tab was paid in advance has stopped (the writer, in the stop's transaction):
        its tab may now be paid in full, so settled_at follows (broker.till.Till.game_billed, from the
        hub's stop and from a change to a stopped game's bill)."""
        tab = db.get(Tab, tab_id)
        if tab is not None:
            self._settle(db, tab, self.h.clock())

    def _settle(self, db: Db, tab: Tab, now: Any) -> None:
        """settled_at follows the payments: set when the tab is paid in full (its game over), cleared when reopened."""
        db.flush()
        bill = bill_of_tab(db, self.h, tab.id, now)
        paid = bill.closed and bill.owed_cents <= 0
        if paid and tab.settled_at is None:
            tab.settled_at = now
        elif not paid and tab.settled_at is not None:
            tab.settled_at = None

    def _push(self, after: Effects, tab_id: int, table: str | None) -> None:
        after.add(lambda: self.h.listeners.notify(TabPaid(tab=tab_id, table=table)))
        if table is not None:  # the table's card on the floor shows what is left to pay
            after.add(lambda: self.h.listeners.notify(SessionChanged(table=table, action="payment")))
