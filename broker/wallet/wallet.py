"""The members' money: prepaid credit and packages, sold, used, lapsed, refunded and reversed on the writer.

Every change is a `wallet_entries` row (broker.domain.wallet.rules: a balance is their sum), made in
the same transaction as the till's payment it goes with (broker.till.payments.Payments.take and
give_back), so the credit and the till never disagree:

- TopUpCredit: credit sold (a multi-purpose voucher): a tab of its own with one line "Kredit"
  (category CREDIT_SALE: not revenue, no VAT, not sent to eKasa) paid by cash or card; the drawer
  holds the cash, the Z report shows it as voucher sales.
- SellPackage: a package of table hours or lessons sold (a single-purpose voucher): a tab with one
  line at the service's VAT rate (category PACKAGE_SALE): revenue of the day, on the receipt.
- PayFromCredit: a bill (or a split part) paid from credit, the method "Z kreditu": revenue with VAT
  per the goods. Never below zero: the balance is checked on the writer, where every use queues.
- PayFromPackage: a stopped game's table time covered minute by minute at the package's rate
  (broker.domain.wallet.rules.cover), the method "Z balíka": not revenue again; eKasa gets the table
  time and the voucher's exchange (a "Voucher" item with the package's number).
- UseLesson: one lesson of a lesson package taken (no money: it was taxed when sold).
- RefundCredit: a manager gives unused credit back (cash or card) with a reason.
- ReverseWalletEntry: a manager undoes a use, a top-up or a sale that has not been used, with a reason:
  the payment's reversal and the row giving the credit (or units) back, together.
- The watchdog's round records what lapsed (a venue's credit_valid_days / package_valid_days), once a day.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.part import Part, Round
from broker.core.ports import HallState
from broker.domain.cash_rounding import cash_due
from broker.domain.euros import euros, whole_cents
from broker.domain.floor import game_ops
from broker.domain.floor.game_log import replay_row
from broker.domain.refusals import N_
from broker.domain.schedule import business_day
from broker.domain.till.money import TABLE_TIME
from broker.domain.till.receipt import ReceiptLine, lines_from_json, lines_json
from broker.domain.till.revenue import unpaid
from broker.domain.venue import PaymentMethod
from broker.domain.vouchers import CREDIT, CREDIT_SALE, PACKAGE, PACKAGE_SALE
from broker.domain.wallet import rules
from broker.domain.wallet.rules import HOURS, LESSONS, Entry, WalletRefused
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import Game, Member, Payment, Tab, TabItem, WalletEntry, WalletPackage
from broker.till import Till
from broker.till.business_days import open_day
from broker.till.payments import MAX_REASON, MIN_REASON
from broker.till.tabs import bill_of_tab
from broker.wallet.events import WalletChanged

MAX_HOURS = 500
MAX_LESSONS = 200


class WalletMissing(WalletRefused):
    """No such member, package, bill or wallet row (the hub's NotFound, a 404)."""


@dataclass(frozen=True)
class WalletDone:
    """What the wallet's commands answer: the row made (or found again: a resent form), its payment."""

    entry_id: int
    payment_id: int | None
    repeated: bool = False
    package_id: int | None = None


@command
class TopUpCredit(Command[WalletDone]):
    """A member buys credit (a multi-purpose voucher) paid by `method`: money in, not revenue, no VAT."""

    member_id: int
    amount_cents: object
    method: str
    tendered_cents: object = None
    request_id: str | None = None


@command
class SellPackage(Command[WalletDone]):
    """A member buys a package (a single-purpose voucher): `quantity` hours of table time or lessons
    (`kind`) for `price_cents`, revenue with VAT when sold."""

    member_id: int
    kind: str
    quantity: object
    price_cents: object
    method: str
    tendered_cents: object = None
    request_id: str | None = None


@command
class PayFromCredit(Command[WalletDone]):
    """Pay `amount_cents` of a tab (or its split part) from a member's credit ("Z kreditu"); a
    one-tap button's `expect_owed_cents` refuses it when the bill moved since the page was drawn."""

    tab: int
    member_id: int
    amount_cents: object
    part: int | None = None
    expect_owed_cents: int | None = None
    request_id: str | None = None


@command
class PayFromPackage(Command[WalletDone]):
    """A stopped game's table time on a tab covered by an hours package, minute by minute at its rate."""

    tab: int
    package_id: int
    request_id: str | None = None


@command
class UseLesson(Command[WalletDone]):
    """One lesson of a lesson package taken."""

    package_id: int
    request_id: str | None = None


@command
class RefundCredit(Command[WalletDone]):
    """A manager gives a member's unused credit back by `method`, with a reason."""

    member_id: int
    amount_cents: object
    method: str
    reason: str
    request_id: str | None = None


@command
class ReverseWalletEntry(Command[WalletDone]):
    """A manager undoes a use, an unused top-up or an unused package's sale, with a reason: the
    payment is reversed and the credit (or the package's units) follows, together."""

    entry: int
    reason: str
    request_id: str | None = None


def _package_no(package_id: int) -> str:
    """A package's number: the voucher's number on its receipts (eKasa's voucherNumber)."""
    return f"B-{package_id}"


class Wallet(Part):
    as_not_found = (WalletMissing,)
    as_service_error = (WalletRefused,)

    def __init__(self, hall: HallState, till: Till) -> None:
        self.h = hall
        self._payments = till.payments
        self._tabs = till.tabs
        self._lapsed_on: date | None = None

    # -- what the rows say ---------------------------------------------------------------------

    def _member(self, db: Db, member_id: object) -> Member:
        m = db.get(Member, member_id) if isinstance(member_id, int) and not isinstance(member_id, bool) else None
        if m is None:
            raise WalletMissing(N_("There is no such member."))
        return m

    def _credit_rows(self, db: Db, member_id: int) -> list[Entry]:
        rows = db.scalars(
            select(WalletEntry).where(WalletEntry.member_id == member_id, WalletEntry.package_id.is_(None)).order_by(WalletEntry.id)
        )
        return [Entry(r.id, r.kind, r.cents, r.units, r.expires_on, r.reverses_id) for r in rows]

    def _units_left(self, db: Db, package_id: int) -> int:
        return int(db.scalar(select(func.coalesce(func.sum(WalletEntry.units), 0)).where(WalletEntry.package_id == package_id)) or 0)

    def _package(self, db: Db, package_id: object) -> WalletPackage:
        p = db.get(WalletPackage, package_id) if isinstance(package_id, int) and not isinstance(package_id, bool) else None
        if p is None:
            raise WalletMissing(N_("There is no such package."))
        return p

    def _today(self) -> date:
        return business_day(self.h.clock(), self.h.venue)

    def _method(self, method: object) -> PaymentMethod:
        m = self.h.venue.till.method(method) if isinstance(method, str) else None
        if m is None:
            raise WalletRefused(N_("%(method)s is not a payment method of this hall; choose one of the buttons."), method=str(method)[:40])
        return m

    def _repeat(self, db: Db, request_id: str | None) -> WalletDone | None:
        if request_id is None:
            return None
        if not isinstance(request_id, str) or not 8 <= len(request_id) <= 64:
            raise WalletRefused(N_("This form is broken; open the payment page again."))
        done = db.scalar(select(WalletEntry).where(WalletEntry.request_id == request_id))
        return None if done is None else WalletDone(done.id, done.payment_id, True, done.package_id)

    def _reason(self, text: object) -> str:
        reason = " ".join(str(text).split())[:MAX_REASON]
        if len(reason) < MIN_REASON:
            raise WalletRefused(N_("Say why (at least 3 characters)."))
        return reason

    def _sale_tab(self, db: Db, label: str, holds: str, staff: str, now: datetime) -> Tab:
        tab = Tab(label=label[:120], opened_at=now, opened_by=staff, business_day=open_day(db, self.h.venue, now), holds=holds)
        db.add(tab)
        db.flush()
        return tab

    def _changed(self, db: Db, member_id: int) -> None:
        after_commit(db).add(lambda: self.h.listeners.notify(WalletChanged(member_id=member_id)))

    def _entry(self, db: Db, **fields: object) -> WalletEntry:
        row = WalletEntry(at=self.h.clock(), **fields)
        db.add(row)
        db.flush()
        self._changed(db, int(row.member_id))
        return row

    # -- selling --------------------------------------------------------------------------------

    @handles(TopUpCredit)
    def top_up(self, c: TopUpCredit) -> WalletDone:
        now = self.h.clock()
        with self.h.store.session() as db:
            again = self._repeat(db, c.request_id)
            if again is not None:
                return again
            member = self._member(db, c.member_id)
            if not member.active:
                raise WalletRefused(N_("%(member)s is not an active member; make them active first."), member=member.name)
            amount = rules.check_amount(c.amount_cents)
            m = self._method(c.method)
            tab = self._sale_tab(db, f"Kredit: {member.name}", CREDIT_SALE, c.actor, now)
            db.add(
                TabItem(
                    tab_id=tab.id,
                    name="Kredit (viacúčelový poukaz)",
                    name_en="Credit (a multi-purpose voucher)",
                    category=CREDIT_SALE,
                    unit_cents=amount,
                    vat_percent=0,
                    quantity=1,
                    added_at=now,
                    added_by=c.actor,
                )
            )
            db.flush()
            taken = self._payments.take(db, tab.id, m, amount, c.actor, tendered=c.tendered_cents)
            days = self.h.venue.wallet.credit_valid_days
            row = self._entry(
                db,
                member_id=member.id,
                kind="topup",
                cents=amount,
                staff=c.actor,
                expires_on=self._today() + timedelta(days=days) if days else None,
                tab_id=tab.id,
                payment_id=taken.payment_id,
                request_id=c.request_id,
            )
            record_audit(
                db, c.actor, "wallet.topup", f"member:{member.id}", {"entry": row.id, "amount_cents": amount, "method": m.id}, at=now
            )
            return WalletDone(row.id, taken.payment_id)

    @handles(SellPackage)
    def sell_package(self, c: SellPackage) -> WalletDone:
        now = self.h.clock()
        with self.h.store.session() as db:
            again = self._repeat(db, c.request_id)
            if again is not None:
                return again
            member = self._member(db, c.member_id)
            if not member.active:
                raise WalletRefused(N_("%(member)s is not an active member; make them active first."), member=member.name)
            if c.kind not in rules.KINDS:
                raise WalletRefused(N_("Choose a package of hours or of lessons."))
            top = MAX_HOURS if c.kind == HOURS else MAX_LESSONS
            quantity = whole_cents(c.quantity, high=top)
            if quantity is None:
                raise WalletRefused(N_("Give the number of hours or lessons as a whole number from 1 to %(top)d."), top=top)
            price = rules.check_amount(c.price_cents)
            m = self._method(c.method)
            units = quantity * 60 if c.kind == HOURS else quantity
            rate = price // quantity  # per hour, or per lesson
            rate_vat = self.h.venue.billing.vat_percent
            package = WalletPackage(
                member_id=member.id,
                kind=c.kind,
                name=f"{quantity} h stola" if c.kind == HOURS else f"{quantity} lekcií",
                units=units,
                rate_cents=rate,
                price_cents=price,
                vat_percent=rate_vat,
                sold_at=now,
                sold_by=c.actor,
                expires_on=(self._today() + timedelta(days=d)) if (d := self.h.venue.wallet.package_valid_days) else None,
            )
            db.add(package)
            db.flush()
            number = _package_no(package.id)
            tab = self._sale_tab(db, f"Balík {number}: {member.name}", PACKAGE_SALE, c.actor, now)
            what = "hodín stola" if c.kind == HOURS else "lekcií"
            what_en = "hours of table time" if c.kind == HOURS else "lessons"
            db.add(
                TabItem(
                    tab_id=tab.id,
                    name=f"Balík {quantity} {what}, poukaz č. {number}",
                    name_en=f"Package of {quantity} {what_en}, voucher no. {number}",
                    category=PACKAGE_SALE,
                    unit_cents=price,
                    vat_percent=rate_vat,
                    quantity=1,
                    added_at=now,
                    added_by=c.actor,
                )
            )
            db.flush()
            taken = self._payments.take(db, tab.id, m, price, c.actor, tendered=c.tendered_cents)
            package.payment_id = taken.payment_id
            row = self._entry(
                db,
                member_id=member.id,
                package_id=package.id,
                kind="sale",
                units=units,
                staff=c.actor,
                expires_on=package.expires_on,
                tab_id=tab.id,
                payment_id=taken.payment_id,
                request_id=c.request_id,
            )
            record_audit(
                db,
                c.actor,
                "wallet.package_sale",
                f"member:{member.id}",
                {"package": package.id, "units": units, "price_cents": price},
                at=now,
            )
            return WalletDone(row.id, taken.payment_id, package_id=package.id)

    # -- using ----------------------------------------------------------------------------------

    @handles(PayFromCredit)
    def pay_from_credit(self, c: PayFromCredit) -> WalletDone:
        with self.h.store.session() as db:
            again = self._repeat(db, c.request_id)
            if again is not None:
                return again
            member = self._member(db, c.member_id)
            amount = whole_cents(c.amount_cents)
            if amount is None:
                raise WalletRefused(N_("Give the amount in whole cents above zero, e.g. 12,50 €."))
            rules.check_use(rules.balance(self._credit_rows(db, member.id)), amount, member=member.name)
            taken = self._payments.take(
                db,
                c.tab,
                self._wallet_method(CREDIT),
                amount,
                c.actor,
                part=c.part,
                expect_owed_cents=c.expect_owed_cents,
            )
            row = self._entry(
                db,
                member_id=member.id,
                kind="use",
                cents=-amount,
                staff=c.actor,
                tab_id=c.tab,
                payment_id=taken.payment_id,
                request_id=c.request_id,
            )
            return WalletDone(row.id, taken.payment_id)

    def _wallet_method(self, method_id: str) -> PaymentMethod:
        m = self.h.venue.till.named(method_id)
        assert m is not None
        return m

    @handles(PayFromPackage)
    def pay_from_package(self, c: PayFromPackage) -> WalletDone:
        now = self.h.clock()
        with self.h.store.session() as db:
            again = self._repeat(db, c.request_id)
            if again is not None:
                return again
            package = self._package(db, c.package_id)
            number = _package_no(package.id)
            self._usable(db, package, HOURS)
            tab = db.get(Tab, c.tab) if isinstance(c.tab, int) else None
            if tab is None:
                raise WalletMissing(N_("There is no such bill; it may have been merged or the page is old."))
            game = db.get(Game, tab.session_id) if tab.session_id is not None else None
            if game is None:
                raise WalletRefused(N_("A package pays table time only, and this bill has none."))
            state = replay_row(game, self.h.venue)
            if state.is_open:
                raise WalletRefused(N_("Stop the game first: a package pays the table time it was played."))
            slices = [
                rules.TimeSlice(-(-(line.billed_seconds or 0) // 60), line.amount_cents)
                for line in game_ops.bill(state, self.h.venue, now).lines
                if line.kind == "time"
            ]
            bill = self._tabs_bill(db, tab.id, now)
            paid = [x for p in db.scalars(select(Payment).where(Payment.tab_id == tab.id)) for x in lines_from_json(p.lines, moves=True)]
            owed_time = sum(cents for (_rate, category), cents in unpaid(bill, paid).items() if category == TABLE_TIME)
            # The package's minutes at what was paid for them (its price over its minutes), not a rounded rate.
            got = rules.cover(slices, self._units_left(db, package.id), package.price_cents, owed_time, per_minutes=package.units)
            if got.cents <= 0 or got.minutes <= 0:
                raise WalletRefused(N_("There is no table time left to pay on this bill."))
            rate = self.h.venue.billing.vat_percent
            line = ReceiptLine(
                f"Čas pri stole z balíka č. {number}: {got.minutes} min",
                f"Table time from package no. {number}: {got.minutes} min",
                1,
                got.cents,
                got.cents,
                rate,
                TABLE_TIME,
            )
            taken = self._payments.take(
                db, tab.id, self._wallet_method(PACKAGE), got.cents, c.actor, lines=lambda _b, _p: [line], voucher=number
            )
            row = self._entry(
                db,
                member_id=package.member_id,
                package_id=package.id,
                kind="use",
                units=-got.minutes,
                staff=c.actor,
                tab_id=tab.id,
                payment_id=taken.payment_id,
                request_id=c.request_id,
            )
            return WalletDone(row.id, taken.payment_id, package_id=package.id)

    def _tabs_bill(self, db: Db, tab_id: int, now: datetime) -> list[ReceiptLine]:
        return [
            ReceiptLine(x.description, x.description_en, x.quantity, x.unit_cents, x.amount_cents, x.vat_percent, x.category)
            for x in bill_of_tab(db, self.h, tab_id, now).lines
        ]

    def _usable(self, db: Db, package: WalletPackage, kind: str) -> int:
        number = _package_no(package.id)
        if package.kind != kind:
            if kind == HOURS:
                raise WalletRefused(N_("Package no. %(number)s is of lessons; it pays no table time."), number=number)
            raise WalletRefused(N_("Package no. %(number)s is of table hours, not lessons."), number=number)
        left = self._units_left(db, package.id)
        if package.expires_on is not None and package.expires_on < self._today():
            raise WalletRefused(
                N_("Package no. %(number)s lapsed on %(day)s."), number=number, day=package.expires_on.strftime("%d. %m. %Y")
            )
        if left <= 0:
            raise WalletRefused(N_("Package no. %(number)s is used up."), number=number)
        return left

    @handles(UseLesson)
    def use_lesson(self, c: UseLesson) -> WalletDone:
        with self.h.store.session() as db:
            again = self._repeat(db, c.request_id)
            if again is not None:
                return again
            package = self._package(db, c.package_id)
            self._usable(db, package, LESSONS)
            row = self._entry(
                db, member_id=package.member_id, package_id=package.id, kind="use", units=-1, staff=c.actor, request_id=c.request_id
            )
            return WalletDone(row.id, None, package_id=package.id)

    # -- giving back ----------------------------------------------------------------------------

    @handles(RefundCredit)
    def refund(self, c: RefundCredit) -> WalletDone:
        now = self.h.clock()
        with self.h.store.session() as db:
            again = self._repeat(db, c.request_id)
            if again is not None:
                return again
            member = self._member(db, c.member_id)
            amount = rules.check_amount(c.amount_cents)
            reason = self._reason(c.reason)
            m = self._method(c.method)
            rules.check_use(rules.balance(self._credit_rows(db, member.id)), amount, member=member.name)
            tab = self._sale_tab(db, f"Vrátenie kreditu: {member.name}", CREDIT_SALE, c.actor, now)
            tab.settled_at = now  # nothing to pay: the money goes out
            rounding = (cash_due(amount, self.h.venue.till.cash_rounding) - amount) if m.cash else 0
            payment = Payment(
                tab_id=tab.id,
                method=m.id,
                amount_cents=-amount,
                tendered_cents=None,
                change_cents=0,
                rounding_cents=-rounding,
                staff=c.actor,
                at=now,
                business_day=open_day(db, self.h.venue, now),
                reason=reason,
                receipt_no=self._payments.next_receipt_no(db),
                lines=lines_json(
                    [ReceiptLine("Vrátenie nevyčerpaného kreditu", "Unused credit given back", -1, amount, -amount, 0, CREDIT_SALE)]
                ),
            )
            db.add(payment)
            db.flush()
            row = self._entry(
                db,
                member_id=member.id,
                kind="refund",
                cents=-amount,
                staff=c.actor,
                reason=reason,
                tab_id=tab.id,
                payment_id=payment.id,
                request_id=c.request_id,
            )
            record_audit(
                db, c.actor, "wallet.refund", f"member:{member.id}", {"entry": row.id, "amount_cents": amount}, reason=reason, at=now
            )
            return WalletDone(row.id, payment.id)

    @handles(ReverseWalletEntry)
    def reverse(self, c: ReverseWalletEntry) -> WalletDone:
        now = self.h.clock()
        with self.h.store.session() as db:
            again = self._repeat(db, c.request_id)
            if again is not None:
                return again
            entry = db.get(WalletEntry, c.entry) if isinstance(c.entry, int) else None
            if entry is None:
                raise WalletMissing(N_("There is no such row of credit or package."))
            reason = self._reason(c.reason)
            if entry.kind not in ("use", "topup", "sale") or entry.reverses_id is not None:
                raise WalletRefused(N_("Only a use, a top-up or a package's sale can be reversed; a refund or a lapse stays."))
            if db.scalar(select(WalletEntry.id).where(WalletEntry.reverses_id == entry.id)) is not None:
                raise WalletRefused(N_("This row was reversed already."))
            if entry.kind == "topup":
                left = rules.balance(self._credit_rows(db, entry.member_id))
                if left < entry.cents:
                    raise WalletRefused(
                        N_("Of this top-up only %(left)s of credit is left; give that back as a refund instead."), left=euros(max(left, 0))
                    )
            if entry.kind == "sale" and entry.package_id is not None and self._units_left(db, entry.package_id) < entry.units:
                raise WalletRefused(N_("This package has been used; it can no longer be reversed."))
            payment_id = None
            if entry.payment_id is not None:
                if entry.kind in ("topup", "sale") and entry.tab_id is not None:
                    # The sale's line goes off its tab, so the tab stays settled at zero after the reversal.
                    for item in db.scalars(select(TabItem).where(TabItem.tab_id == entry.tab_id, TabItem.voided_at.is_(None))):
                        item.voided_at, item.voided_by, item.void_reason = now, c.actor, reason
                    db.flush()
                payment_id = self._payments.give_back(db, entry.payment_id, reason, c.actor, wallet=True).payment_id
            row = self._entry(
                db,
                member_id=entry.member_id,
                package_id=entry.package_id,
                kind="reversal",
                cents=-entry.cents,
                units=-entry.units,
                staff=c.actor,
                reason=reason,
                tab_id=entry.tab_id,
                payment_id=payment_id,
                reverses_id=entry.id,
                request_id=c.request_id,
            )
            record_audit(
                db, c.actor, "wallet.reverse", f"member:{entry.member_id}", {"entry": row.id, "reverses": entry.id}, reason=reason, at=now
            )
            return WalletDone(row.id, payment_id, package_id=entry.package_id)

    # -- what lapses ----------------------------------------------------------------------------

    def rounds(self) -> Sequence[Round]:
        return (self.lapse,)

    def lapse(self, now: datetime) -> None:
        """Once a business day (the watchdog's round, on the writer): credit and packages whose last
        valid day has passed lapse, each as a row of what was left."""
        today = self._today()
        if self._lapsed_on == today:
            return
        with self.h.store.session() as db:
            members = db.scalars(
                select(WalletEntry.member_id)
                .where(WalletEntry.package_id.is_(None), WalletEntry.kind == "topup", WalletEntry.expires_on < today)
                .distinct()
            ).all()
            for member_id in members:
                for lot in rules.lapsed(self._credit_rows(db, member_id), today):
                    self._entry(db, member_id=member_id, kind="expiry", cents=-lot.left_cents, staff="system", reverses_id=None)
            for package in db.scalars(select(WalletPackage).where(WalletPackage.expires_on < today)):
                left = self._units_left(db, package.id)
                if left > 0:
                    self._entry(db, member_id=package.member_id, package_id=package.id, kind="expiry", units=-left, staff="system")
        self._lapsed_on = today


__all__ = [
    "PayFromCredit",
    "PayFromPackage",
    "RefundCredit",
    "ReverseWalletEntry",
    "SellPackage",
    "TopUpCredit",
    "UseLesson",
    "Wallet",
    "WalletDone",
    "WalletMissing",
]
