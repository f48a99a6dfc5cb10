"""What staff read of the members' money (any thread: read-only queries): a member's credit, packages
and history; what a bill's member may pay with (the pay page, the floor card)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.core.ports import HallState
from broker.domain.schedule import business_day
from broker.domain.wallet import rules
from broker.domain.wallet.rules import HOURS, Entry
from broker.storage.models import Game, Member, Payment, Tab, WalletEntry, WalletPackage


@dataclass(frozen=True)
class PackageView:
    id: int
    number: str  # the voucher's number on its receipts
    kind: str  # hours | lessons
    name: str
    units: int  # minutes (hours) or lessons, as sold
    left: int  # what is left of them
    rate_cents: int  # per hour, or per lesson
    price_cents: int
    vat_percent: int
    sold_at: datetime
    expires_on: date | None
    lapsed: bool

    @property
    def hours_left(self) -> str:
        """ "7:30" for 450 minutes (hours packages)."""
        return f"{self.left // 60}:{self.left % 60:02d}"


@dataclass(frozen=True)
class EntryView:
    id: int
    kind: str  # topup, use, expiry, refund, reversal, sale
    cents: int
    units: int
    package: str | None  # the package's number, for a package's row
    package_kind: str | None
    at: datetime
    staff: str
    reason: str | None
    expires_on: date | None
    payment_id: int | None
    receipt_no: int | None
    reversed: bool  # a later row reversed this one
    reversible: bool  # a use, a top-up or a sale not reversed yet


@dataclass(frozen=True)
class CreditLot:
    expires_on: date | None
    left_cents: int


@dataclass(frozen=True)
class WalletView:
    """A member's money: credit (with what lapses when) and packages, and every row, newest first."""

    member_id: int
    member: str
    active: bool
    balance_cents: int
    lots: tuple[CreditLot, ...]
    packages: tuple[PackageView, ...]
    history: tuple[EntryView, ...]

    @property
    def hours_packages(self) -> tuple[PackageView, ...]:
        return tuple(p for p in self.packages if p.kind == HOURS and p.left > 0 and not p.lapsed)

    @property
    def minutes_left(self) -> int:
        return sum(p.left for p in self.hours_packages)

    @property
    def hours_left(self) -> str:
        return f"{self.minutes_left // 60}:{self.minutes_left % 60:02d}"


@dataclass(frozen=True)
class MemberMoney:
    """What the pay page and the floor card show of a member who pays: credit and hours left."""

    member_id: int
    member: str
    balance_cents: int
    minutes_left: int
    packages: tuple[PackageView, ...]  # hours packages still usable

    @property
    def hours_left(self) -> str:
        return f"{self.minutes_left // 60}:{self.minutes_left % 60:02d}"


def _number(package_id: int) -> str:
    return f"B-{package_id}"


class WalletReads:
    def __init__(self, hall: HallState) -> None:
        self._hall = hall

    def _today(self) -> date:
        return business_day(self._hall.clock(), self._hall.venue)

    def _packages(self, db: Db, member_id: int, today: date) -> list[PackageView]:
        rows = db.scalars(select(WalletPackage).where(WalletPackage.member_id == member_id).order_by(WalletPackage.id)).all()
        left = dict(
            db.execute(
                select(WalletEntry.package_id, func.sum(WalletEntry.units))
                .where(WalletEntry.package_id.in_([p.id for p in rows]))
                .group_by(WalletEntry.package_id)
            ).all()
        )
        return [
            PackageView(
                p.id,
                _number(p.id),
                p.kind,
                p.name,
                p.units,
                int(left.get(p.id) or 0),
                p.rate_cents,
                p.price_cents,
                p.vat_percent,
                p.sold_at,
                p.expires_on,
                p.expires_on is not None and p.expires_on < today,
            )
            for p in rows
        ]

    def member(self, member_id: int) -> WalletView | None:
        """A member's credit, packages and history (None: no such member)."""
        today = self._today()
        with self._hall.store.reader() as db:
            m = db.get(Member, member_id)
            if m is None:
                return None
            rows = db.scalars(select(WalletEntry).where(WalletEntry.member_id == member_id).order_by(WalletEntry.id)).all()
            packages = self._packages(db, member_id, today)
            kinds = {p.id: p.kind for p in packages}
            receipts = dict(
                db.execute(select(Payment.id, Payment.receipt_no).where(Payment.id.in_([r.payment_id for r in rows if r.payment_id]))).all()
            )
            reversed_ids = {r.reverses_id for r in rows if r.reverses_id is not None}
            credit = [Entry(r.id, r.kind, r.cents, r.units, r.expires_on, r.reverses_id) for r in rows if r.package_id is None]
            history = tuple(
                EntryView(
                    r.id,
                    r.kind,
                    r.cents,
                    r.units,
                    _number(r.package_id) if r.package_id is not None else None,
                    kinds.get(r.package_id) if r.package_id is not None else None,
                    r.at,
                    r.staff,
                    r.reason,
                    r.expires_on,
                    r.payment_id,
                    receipts.get(r.payment_id) if r.payment_id else None,
                    r.id in reversed_ids,
                    r.kind in ("use", "topup", "sale") and r.reverses_id is None and r.id not in reversed_ids,
                )
                for r in reversed(rows)
            )
            return WalletView(
                m.id,
                m.name,
                bool(m.active),
                rules.balance(credit),
                tuple(CreditLot(lot.expires_on, lot.left_cents) for lot in rules.lots(credit) if lot.left_cents > 0),
                tuple(packages),
                history,
            )

    def money(self, member_ids: Iterable[int]) -> dict[int, MemberMoney]:
        """Credit and usable hours of these members (those with any), for the floor and the pay page."""
        ids = sorted(set(member_ids))
        if not ids:
            return {}
        today = self._today()
        with self._hall.store.reader() as db:
            names = dict(db.execute(select(Member.id, Member.name).where(Member.id.in_(ids))).all())
            credit = dict(
                db.execute(
                    select(WalletEntry.member_id, func.sum(WalletEntry.cents))
                    .where(WalletEntry.member_id.in_(ids), WalletEntry.package_id.is_(None))
                    .group_by(WalletEntry.member_id)
                ).all()
            )
            has_packages = set(db.scalars(select(WalletPackage.member_id).where(WalletPackage.member_id.in_(ids))).all())
            out = {}
            for mid in ids:
                if mid not in names:
                    continue
                packages = tuple(
                    p
                    for p in (self._packages(db, mid, today) if mid in has_packages else [])
                    if p.kind == HOURS and p.left > 0 and not p.lapsed
                )
                bal = int(credit.get(mid) or 0)
                if bal or packages:
                    out[mid] = MemberMoney(mid, names[mid], bal, sum(p.left for p in packages), packages)
            return out

    def for_tab(self, tab_id: int) -> MemberMoney | None:
        """The member a bill's game was started for, with their credit and hours (None: no member, or none of either)."""
        with self._hall.store.reader() as db:
            member_id = db.scalar(select(Game.member_id).join(Tab, Tab.session_id == Game.id).where(Tab.id == tab_id))
        if member_id is None:
            return None
        return self.money([member_id]).get(member_id)

    def with_credit(self) -> list[MemberMoney]:
        """Every member with credit or hours left, by name (the pay page's choice of who pays)."""
        with self._hall.store.reader() as db:
            ids = set(
                db.scalars(select(WalletEntry.member_id).group_by(WalletEntry.member_id).having(func.sum(WalletEntry.cents) != 0)).all()
            ) | set(db.scalars(select(WalletPackage.member_id).distinct()).all())
        return sorted(self.money(ids).values(), key=lambda m: m.member.casefold())
