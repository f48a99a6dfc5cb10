"""Staff accounts: the manager's changes to them (broker.accounts.users holds the rules and audits).

Passwords arrive hashed (`users.new_password`, on the caller's thread): argon2 never runs inside
a write transaction, so a new account never stalls the writer for a fifth of a second.
"""

from __future__ import annotations

from broker.accounts import users
from broker.accounts.auth_checks import reset_failures
from broker.accounts.staff import Staff, staff_of
from broker.accounts.users import NewPassword
from broker.core.commands import Command, command, handles
from broker.core.errors import NotFound
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.refusals import N_


@command
class CreateStaff(Command[Staff]):
    """A new staff account (the name free, the role one of the roles); `must_change`: the user
    chooses their own password at the first login."""

    username: str
    password: NewPassword
    role: str
    must_change: bool = False


@command
class SetStaffPassword(Command[None]):
    """A new password; ends the user's dashboard logins except `keep_login` (the one they changed it in)."""

    username: str
    password: NewPassword
    must_change: bool = False
    keep_login: int | None = None


@command
class SetStaffRole(Command[None]):
    """A new role; the user's dashboard logins end (their pages were made for the old one), and their iCal link."""

    username: str
    role: str


@command
class SetStaffActive(Command[None]):
    """Disable an account (its logins and its iCal link end, its tokens stop working) or enable it again; never the last manager."""

    username: str
    active: bool


@command
class UnlockStaff(Command[None]):
    """Lift the login waits on an account (every address), audited."""

    username: str


@command
class RevokeToken(Command[None]):
    """Revoke one of `username`'s API tokens (NotFound if it is not theirs)."""

    username: str
    token_id: int


@command
class EndLogin(Command[None]):
    """End one of `username`'s dashboard logins (UserError if it has ended already)."""

    username: str
    login: int


@command
class EndLogins(Command[int]):
    """Log `username` out of every browser; answers how many logins ended."""

    username: str


class Accounts(Part):
    def __init__(self, hall: HallState) -> None:
        self.h = hall

    @handles(CreateStaff)
    def create(self, c: CreateStaff) -> Staff:
        with self.h.store.session() as db:
            if users.get_user(db, c.username) is not None:
                raise users.UserError(N_("The account %(username)s already exists; pick another name."), username=c.username)
            return staff_of(users.create_user(db, c.username, c.password, c.role, actor=c.actor, must_change=c.must_change))

    @handles(SetStaffPassword)
    def set_password(self, c: SetStaffPassword) -> None:
        with self.h.store.session() as db:
            users.set_password(db, c.username, c.password, actor=c.actor, must_change=c.must_change, keep_login=c.keep_login)

    @handles(SetStaffRole)
    def set_role(self, c: SetStaffRole) -> None:
        with self.h.store.session() as db:
            users.set_role(db, c.username, c.role, actor=c.actor)

    @handles(SetStaffActive)
    def set_active(self, c: SetStaffActive) -> None:
        with self.h.store.session() as db:
            users.set_active(db, c.username, c.active, actor=c.actor)

    @handles(UnlockStaff)
    def unlock(self, c: UnlockStaff) -> None:
        with self.h.store.session() as db:
            users.unlock(db, c.username, actor=c.actor)
        reset_failures(self.h.store, c.username)

    @handles(RevokeToken)
    def revoke_token(self, c: RevokeToken) -> None:
        with self.h.store.session() as db:
            if c.token_id not in {t.id for t in users.list_tokens(db, c.username)}:
                raise NotFound(N_("%(username)s has no token no. %(token)d."), username=c.username, token=c.token_id)
            users.revoke_token(db, c.token_id, actor=c.actor)

    @handles(EndLogin)
    def end_login(self, c: EndLogin) -> None:
        with self.h.store.session() as db:
            users.end_login(db, c.username, c.login, actor=c.actor)

    @handles(EndLogins)
    def end_logins(self, c: EndLogins) -> int:
        with self.h.store.session() as db:
            return users.end_logins(db, c.username, actor=c.actor)
