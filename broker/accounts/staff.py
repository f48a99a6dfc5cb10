"""The logged-in staff member as the dashboard sees them: a frozen value, never an ORM row.

The auth checks (broker.hall.facade) turn the `users` row into a Staff inside their transaction,
so a page can keep it for the whole request without a database session and cannot change the
account by assigning to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from broker.accounts.users import role_at_least as role_at_least  # re-exported: the dashboard knows it from here
from broker.storage.models import ROLES as ROLES  # re-exported: the roles are an accounts rule the dashboard shows


@dataclass(frozen=True)
class Staff:
    id: int
    username: str
    role: str  # one of ROLES
    active: bool
    must_change_password: bool
    created_at: datetime | None = None

    def at_least(self, role: str) -> bool:
        return role_at_least(self.role, role)


@dataclass(frozen=True)
class StaffLogin:
    """A live login (broker.accounts.logins) and whose it is."""

    pk: int
    staff: Staff


def staff_of(user: Any) -> Staff:
    """The value of a `users` row (read inside its transaction)."""
    return Staff(user.id, user.username, user.role, bool(user.active), bool(user.must_change_password), user.created_at)
