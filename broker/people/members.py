"""The member registry's changes: members, their fees and club cards, a CSV import.

The rules live in broker.storage.members (which audits each change) and
broker.storage.members_csv; these are their commands, run by the hub's writer like every other
change, so the writer's own checks (may this member play, whose card is this) never read a
registry that another thread is changing under them.
"""

from __future__ import annotations

from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.errors import NotFound
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.refusals import N_
from broker.people.member_views import MemberView, member_view
from broker.storage import members, members_csv
from broker.storage.members import MemberError
from broker.storage.members_csv import ImportReport as ImportReport  # the import's answer, for the routes
from broker.storage.models import MemberCard


@command
class AddMember(Command[MemberView]):
    """A new member of the registry (the name not taken yet)."""

    name: str
    kind: str = "individual"
    note: str = ""
    active: bool = True


@command
class EditMember(Command[MemberView]):
    """Change the given fields (None keeps one); the audit entry keeps old and new values."""

    member_id: int
    name: str | None = None
    kind: str | None = None
    active: bool | None = None
    note: str | None = None
    reason: str | None = None


@command
class RecordFee(Command[MemberView]):
    """A year's fee paid now (by the hub's clock); the amount defaults to the club's fee."""

    member_id: int
    year: int
    amount_cents: int | None = None


@command
class AssignCard(Command[MemberView]):
    """Give a member a club card (a card someone else holds is refused)."""

    member_id: int
    uid: str


@command
class RemoveCard(Command[None]):
    """Take a card away; with `member_id`, only if it is that member's."""

    uid: str
    reason: str | None = None
    member_id: int | None = None


@command
class ImportMembers(Command[ImportReport]):
    """A CSV file: all of it in one transaction, or nothing (MemberImportError with the lines)."""

    data: bytes


class Members(Part):
    def __init__(self, hall: HallState) -> None:
        self.h = hall

    def _member(self, db: Db, member_id: int) -> MemberView:
        try:
            return member_view(members.get_member(db, member_id), self.h.fee_year())
        except MemberError:
            raise NotFound(N_("There is no member no. %(member_id)d: search by name to find the right one."), member_id=member_id) from None

    def _reread(self, db: Db, member_id: int) -> MemberView:
        db.flush()
        db.expire_all()
        return self._member(db, member_id)

    @handles(AddMember)
    def add(self, c: AddMember) -> MemberView:
        with self.h.store.session() as db:
            return member_view(members.add_member(db, c.name, actor=c.actor, kind=c.kind, note=c.note, active=c.active), self.h.fee_year())

    @handles(EditMember)
    def edit(self, c: EditMember) -> MemberView:
        with self.h.store.session() as db:
            self._member(db, c.member_id)
            changed = members.edit_member(
                db, c.member_id, actor=c.actor, name=c.name, kind=c.kind, active=c.active, note=c.note, reason=c.reason
            )
            return member_view(changed, self.h.fee_year())

    @handles(RecordFee)
    def record_fee(self, c: RecordFee) -> MemberView:
        with self.h.store.session() as db:
            self._member(db, c.member_id)
            amount = {} if c.amount_cents is None else {"amount_cents": c.amount_cents}
            members.record_fee(db, c.member_id, c.year, actor=c.actor, paid_at=self.h.clock(), **amount)
            return self._reread(db, c.member_id)

    @handles(AssignCard)
    def assign_card(self, c: AssignCard) -> MemberView:
        with self.h.store.session() as db:
            self._member(db, c.member_id)
            members.assign_card(db, c.member_id, c.uid, actor=c.actor)
            return self._reread(db, c.member_id)

    @handles(RemoveCard)
    def remove_card(self, c: RemoveCard) -> None:
        card = members.normalize_uid(c.uid)
        with self.h.store.session() as db:
            if c.member_id is not None and card not in self._member(db, c.member_id).cards:
                raise MemberError(N_("Card %(card)s is not this member's."), card=card)
            if c.member_id is None and db.get(MemberCard, card) is None:
                raise NotFound(N_("Card %(card)s is not assigned to anyone."), card=card)
            members.remove_card(db, card, actor=c.actor, reason=c.reason)

    @handles(ImportMembers)
    def import_csv(self, c: ImportMembers) -> ImportReport:
        with self.h.store.session() as db:
            return members_csv.import_members_csv(db, c.data, actor=c.actor)
