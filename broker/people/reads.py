"""The reads of people (`reads.people` on the dashboard): members and their cards, staff accounts,
their tokens, logins and audit. Read-only store sessions, frozen values out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from broker.accounts.auth_checks import waiting_clients
from broker.accounts.staff import Staff, staff_of
from broker.accounts.users import get_user, is_last_manager, list_tokens, list_users, user_audit, user_logins
from broker.core.ports import HallState
from broker.core.row_values import copy_row
from broker.core.store_errors import store_call
from broker.people.member_views import MemberView, member_view
from broker.storage.members import search_members
from broker.storage.members_csv import export_members_csv
from broker.storage.models import Member, MemberCard


@dataclass(frozen=True)
class TokenView:
    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None
    revoked: bool


@dataclass(frozen=True)
class LoginView:
    id: int
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    client: str
    user_agent: str


@dataclass(frozen=True)
class AuditView:
    at: datetime
    actor: str
    action: str
    target: str
    detail: dict[str, Any]
    reason: str | None


@dataclass(frozen=True)
class StaffRow:
    """One line of the accounts list."""

    u: Staff
    locked: bool
    logins: int  # live dashboard logins


class PeopleReads:
    """Queries over members and staff accounts; none of them writes."""

    def __init__(self, hall: HallState) -> None:
        self._hall = hall
        self._store = hall.store

    @store_call
    def search_members(self, query: str, limit: int) -> list[MemberView]:
        with self._store.reader() as db:
            return [member_view(m, self._hall.fee_year()) for m in search_members(db, query, limit=limit)]

    @store_call
    def member(self, member_id: int) -> MemberView | None:
        with self._store.reader() as db:
            m = db.get(Member, member_id)
            return member_view(m, self._hall.fee_year()) if m is not None else None

    @store_call
    def card_holder(self, uid: str) -> int | None:
        """The member id a (normalized) card UID is assigned to."""
        with self._store.reader() as db:
            card = db.get(MemberCard, uid)
            return card.member_id if card is not None else None

    @store_call
    def export_members_csv(self) -> bytes:
        """The registry as the Slovak Excel file (broker.storage.members_csv)."""
        with self._store.reader() as db:
            return export_members_csv(db)

    def locked(self, username: str) -> bool:
        """Whether some client must wait before trying this account's password again."""
        return waiting_clients(self._store, username) > 0

    @store_call
    def staff_rows(self) -> list[StaffRow]:
        with self._store.reader() as db:
            users = [(staff_of(u), len(user_logins(db, u.username))) for u in list_users(db)]
        return [StaffRow(s, self.locked(s.username), n) for s, n in users]

    @store_call
    def staff(self, username: str) -> Staff | None:
        with self._store.reader() as db:
            u = get_user(db, username)
            return staff_of(u) if u is not None else None

    @store_call
    def is_last_manager(self, username: str) -> bool:
        with self._store.reader() as db:
            return is_last_manager(db, username)

    @store_call
    def tokens(self, username: str) -> list[TokenView]:
        with self._store.reader() as db:
            return [copy_row(TokenView, t) for t in list_tokens(db, username)]

    @store_call
    def logins(self, username: str) -> list[LoginView]:
        with self._store.reader() as db:
            return [copy_row(LoginView, w) for w in user_logins(db, username)]

    @store_call
    def audit(self, username: str) -> list[AuditView]:
        with self._store.reader() as db:
            return [copy_row(AuditView, e) for e in user_audit(db, username)]
