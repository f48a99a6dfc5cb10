"""The member registry: members, their club cards and yearly fees, and whether a card is valid.

Every function takes the caller's SQLAlchemy session and leaves the commit to it, so one
request or one CSV import is one transaction. Every change is written to the audit log.
CSV import/export lives in broker/storage/members_csv.py.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import date, datetime
from typing import Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from broker.domain.people import membership

# Re-exported (`X as X`, mypy's explicit form): the registry's callers know them from here.
from broker.domain.people.membership import DEFAULT_FEE_CENTS as DEFAULT_FEE_CENTS
from broker.domain.people.membership import FIRST_YEAR as FIRST_YEAR
from broker.domain.people.membership import LAST_YEAR as LAST_YEAR
from broker.domain.people.membership import MEMBER_KINDS as MEMBER_KINDS
from broker.domain.people.membership import MemberError as MemberError
from broker.domain.people.membership import check_year as check_year
from broker.domain.people.membership import normalize_uid as normalize_uid
from broker.domain.refusals import N_
from broker.storage.audit import record_audit
from broker.storage.models import FeePayment, Member, MemberCard
from broker.storage.types import utcnow

# 10 EUR a calendar year (the club's statutes, art. 3.3).


def name_key(text: str) -> str:
    """Casefolded, accents stripped: "Zadražil Miro" → "zadrazil miro"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def clean_name(name: str) -> str:
    """NFC (so a name typed on a Mac equals one typed on Windows), single spaces, stripped."""
    cleaned = " ".join(unicodedata.normalize("NFC", name).split())
    if not cleaned:
        raise MemberError(N_('The name is empty: write the member\'s name, e.g. "Zadražil Miro".'))
    if len(cleaned) > 200:
        raise MemberError(N_("The name is %(length)d characters long; 200 at most."), length=len(cleaned))
    return cleaned


def check_kind(kind: str) -> str:
    if kind not in MEMBER_KINDS:
        raise MemberError(N_("%(kind)s is not a membership type (%(kinds)s)."), kind=str(kind)[:40], kinds=", ".join(MEMBER_KINDS))
    return kind


def _target(member: Member) -> str:
    return f"member:{member.id}"


# --- members -----------------------------------------------------------------------------


def get_member(db: Session, member_id: int) -> Member:
    member = db.get(Member, member_id)
    if member is None:
        raise MemberError(N_("There is no member no. %(member_id)d: search by name to find the right one."), member_id=member_id)
    return member


def find_by_name(db: Session, name: str) -> Member | None:
    return db.scalars(select(Member).where(Member.name == clean_name(name))).first()


def add_member(db: Session, name: str, *, actor: str, kind: str = "individual", note: str = "", active: bool = True) -> Member:
    name = clean_name(name)
    check_kind(kind)
    if find_by_name(db, name) is not None:
        raise MemberError(N_("A member named %(name)s already exists; tell them apart, e.g. with a middle initial."), name=name)
    member = Member(name=name, name_key=name_key(name), kind=kind, note=note, active=active, created_at=utcnow())
    db.add(member)
    db.flush()
    record_audit(db, actor, "member.add", _target(member), {"name": name, "kind": kind, "active": active, "note": note})
    return member


def edit_member(
    db: Session,
    member_id: int,
    *,
    actor: str,
    name: str | None = None,
    kind: str | None = None,
    active: bool | None = None,
    note: str | None = None,
    reason: str | None = None,
) -> Member:
    """Change the given fields (None = keep); the audit entry records old and new values."""
    member = get_member(db, member_id)
    wanted: dict[str, object] = {}
    if name is not None:
        wanted["name"] = new_name = clean_name(name)
        if new_name != member.name and find_by_name(db, new_name) is not None:
            raise MemberError(
                N_("A member named %(name)s already exists; tell them apart, e.g. with a middle initial."), name=wanted["name"]
            )
    if kind is not None:
        wanted["kind"] = check_kind(kind)
    if active is not None:
        wanted["active"] = active
    if note is not None:
        wanted["note"] = note
    changes = {k: [getattr(member, k), v] for k, v in wanted.items() if getattr(member, k) != v}
    for k, (_old, new) in changes.items():
        setattr(member, k, new)
    if "name" in changes:
        member.name_key = name_key(member.name)
    if changes:
        db.flush()
        record_audit(db, actor, "member.edit", _target(member), changes, reason)
    return member


def search_members(db: Session, query: str, *, limit: int = 20, active_only: bool = False) -> list[Member]:
    """Members whose name holds every word of `query`, ignoring case and accents, by name."""
    q = select(Member).order_by(Member.name_key).limit(limit)
    for word in name_key(query).split():
        escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        q = q.where(Member.name_key.like(f"%{escaped}%", escape="\\"))
    if active_only:
        q = q.where(Member.active.is_(True))
    return list(db.scalars(q))


# --- cards -------------------------------------------------------------------------------


def find_by_card(db: Session, uid: str) -> Member | None:
    try:
        uid = normalize_uid(uid)
    except MemberError:
        return None
    card = db.get(MemberCard, uid)
    return card.member if card else None


def assign_card(db: Session, member_id: int, uid: str, *, actor: str) -> MemberCard:
    """Give the member a card; assigning a card they already hold changes nothing."""
    member = get_member(db, member_id)
    uid = normalize_uid(uid)
    card = db.get(MemberCard, uid)
    if card is not None:
        if card.member_id == member.id:
            return card
        raise MemberError(N_("Card %(card)s belongs to %(member)s; take it away from them first."), card=uid, member=card.member.name)
    card = MemberCard(uid=uid, member=member, created_at=utcnow())
    db.add(card)
    db.flush()
    record_audit(db, actor, "member.card.assign", _target(member), {"uid": uid})
    return card


def remove_card(db: Session, uid: str, *, actor: str, reason: str | None = None) -> None:
    uid = normalize_uid(uid)
    card = db.get(MemberCard, uid)
    if card is None:
        raise MemberError(N_("Card %(card)s is not assigned to anyone."), card=uid)
    member = card.member
    member.cards.remove(card)
    db.flush()
    record_audit(db, actor, "member.card.remove", _target(member), {"uid": uid}, reason)


# --- fees --------------------------------------------------------------------------------


def record_fee(
    db: Session,
    member_id: int,
    year: int,
    *,
    actor: str,
    amount_cents: int = DEFAULT_FEE_CENTS,
    paid_at: datetime | None = None,
) -> FeePayment:
    """Record the fee for one calendar year (0 cents is allowed, e.g. for honorary members)."""
    member = get_member(db, member_id)
    check_year(year)
    if amount_cents < 0:
        raise MemberError(N_("A fee cannot be negative; it is 0 or more."))
    if fee_paid(member, year):
        raise MemberError(N_("The %(year)d fee of %(member)s is already recorded."), year=year, member=member.name)
    payment = FeePayment(member=member, year=year, amount_cents=amount_cents, paid_at=paid_at or utcnow(), recorded_by=actor)
    db.add(payment)
    db.flush()
    record_audit(db, actor, "member.fee", _target(member), {"year": year, "amount_cents": amount_cents})
    return payment


def fee_paid(member: Member, year: int) -> bool:
    return membership.fee_paid((f.year for f in member.fees), year)


@dataclass(frozen=True)
class CardCheck:
    """Whether a card may be used today (`code`: membership.eligibility's verdict, or "unknown"),
    whose it is and the fee year it was checked against. The words for staff are the alert's
    (broker.domain.floor.alert_kinds.card_refused)."""

    code: Literal["ok", "unknown", "inactive", "unpaid"]
    member: Member | None
    year: int

    @property
    def ok(self) -> bool:
        return self.code == "ok"


def is_valid_card(db: Session, uid: str, today: date) -> CardCheck:
    """A card is valid when it is known, its member active and `today`'s year paid.

    `today` is the venue's local date (Europe/Bratislava): the fee year turns at local midnight.
    Every kind of membership needs the year recorded (the statutes make no exception);
    honorary members get a 0-cent payment.
    """
    member = find_by_card(db, uid)
    if member is None:
        return CardCheck("unknown", None, today.year)
    return CardCheck(membership.eligibility(member.active, (f.year for f in member.fees), today.year), member, today.year)
