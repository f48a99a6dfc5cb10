"""Staff accounts: argon2 password hashes, roles, API tokens.

Functions take the caller's SQLAlchemy session; the caller commits. Checking a password (slow on
purpose, throttled, cached) is broker.accounts.auth_checks.check_password.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from argon2 import PasswordHasher
from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from broker.accounts import links, logins
from broker.domain.refusals import N_, Refusal
from broker.storage.audit import record_audit
from broker.storage.models import ROLES, ApiToken, AuditEntry, Login, User
from broker.storage.types import utcnow

DEFAULT_HASHER = PasswordHasher()  # argon2id with the library's current recommended costs
TOKEN_PREFIX = "lavos_"
MIN_PASSWORD = 8
_USERNAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
# last_used_at is for "which tokens are still in use", not a log: a write per request is waste.
_TOKEN_TOUCH_EVERY = timedelta(minutes=5)


class UserError(Refusal):
    """An account operation that cannot be done; str() says why and what to do."""


class AuthError(Exception):
    """Authentication failed. `reason` is for logs; show users only str() (it never says which part was wrong)."""

    def __init__(self, reason: str, message: str = "wrong username or password") -> None:
        self.reason = reason
        super().__init__(message)


def role_at_least(role: str, required: str) -> bool:
    """staff < manager: a manager may do everything staff may."""
    return ROLES.index(role) >= ROLES.index(required)


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise UserError(
            N_("The password is %(length)d characters long; use at least %(minimum)d."), length=len(password), minimum=MIN_PASSWORD
        )


@dataclass(frozen=True)
class NewPassword:
    """A password that passed the rules, hashed: made by `new_password` before any write
    transaction opens (argon2 is slow on purpose, and a hash inside a transaction stalls every
    other writer). Only the hash travels, and it never shows in a repr."""

    hash: str = field(repr=False)


def new_password(password: str, hasher: PasswordHasher = DEFAULT_HASHER) -> NewPassword:
    """Check `password` against the rules (UserError) and hash it, on the caller's thread."""
    _check_password(password)
    return NewPassword(hasher.hash(password))


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise UserError(N_("%(role)s is not a role (%(roles)s)."), role=str(role)[:40], roles=", ".join(ROLES))
    return role


def get_user(db: Session, username: str) -> User | None:
    return db.scalars(select(User).where(User.username == username)).first()


def _require_user(db: Session, username: str) -> User:
    user = get_user(db, username)
    if user is None:
        raise UserError(
            N_("There is no account %(username)s: create it with `lavos user add %(username)s --role staff`."), username=username[:64]
        )
    return user


def create_user(db: Session, username: str, password: NewPassword, role: str, *, actor: str, must_change: bool = False) -> User:
    if not valid_username(username):
        raise UserError(
            N_('The username %(username)s cannot be used: 2 to 64 characters a-z 0-9 . _ - starting with a letter or digit, e.g. "jana".'),
            username=username[:64],
        )
    _check_role(role)
    if get_user(db, username) is not None:
        raise UserError(N_("The account %(username)s already exists; pick another name."), username=username)
    user = User(
        username=username,
        password_hash=password.hash,
        role=role,
        active=True,
        failed_logins=0,
        created_at=utcnow(),
        must_change_password=must_change,
    )
    db.add(user)
    db.flush()
    record_audit(db, actor, "user.add", f"user:{username}", {"role": role, "must_change": must_change})
    return user


def set_password(
    db: Session,
    username: str,
    password: NewPassword,
    *,
    actor: str,
    must_change: bool = False,
    keep_login: int | None = None,
) -> User:
    """A new password also lifts a lockout and ends the user's logins.

    `keep_login` (a login's pk) survives: the user changing their own password stays logged
    in where they did it, every other browser is logged out. `must_change`: a manager hands the
    password out, and the user must choose their own at the next login.
    """
    user = _require_user(db, username)
    user.password_hash = password.hash
    user.failed_logins, user.locked_until = 0, None
    user.must_change_password = must_change
    db.flush()
    record_audit(db, actor, "user.password", f"user:{username}", {"must_change": must_change})
    logins.end_user_logins(db, username, by=actor, reason="password", keep=keep_login)
    return user


def store_rehash(db: Session, username: str, old_hash: str, new_hash: str) -> bool:
    """A re-hash with up-to-date parameters (made before the transaction), unless the password
    changed meanwhile; whether it was stored."""
    done = db.execute(update(User).where(User.username == username, User.password_hash == old_hash).values(password_hash=new_hash))
    return bool(cast("CursorResult[Any]", done).rowcount)  # an UPDATE's result counts its rows


def _active_managers(db: Session) -> int:
    return len(list(db.scalars(select(User.id).where(User.role == "manager", User.active.is_(True)))))


def valid_username(username: str) -> bool:
    return bool(_USERNAME.match(username))


def is_last_manager(db: Session, username: str) -> bool:
    """Whether demoting or disabling `username` would leave nobody to administer the accounts."""
    user = get_user(db, username)
    return user is not None and user.role == "manager" and user.active and _active_managers(db) <= 1


def _keep_a_manager(db: Session, user: User) -> None:
    if is_last_manager(db, user.username):
        raise UserError(
            N_("%(username)s is the only active manager: make another manager first, or nobody could administer the accounts."),
            username=user.username,
        )


def set_role(db: Session, username: str, role: str, *, actor: str) -> User:
    """A new role ends the user's logins (the pages they have open were made for the old one) and
    their links that work without a login (broker.accounts.links: the iCal link)."""
    user = _require_user(db, username)
    _check_role(role)
    if role == user.role:
        return user
    if role != "manager":
        _keep_a_manager(db, user)
    old, user.role = user.role, role
    db.flush()
    record_audit(db, actor, "user.role", f"user:{username}", {"role": [old, role]})
    logins.end_user_logins(db, username, by=actor, reason="role")
    links.end_user_links(db, username, by=actor, reason="role")
    return user


def set_active(db: Session, username: str, active: bool, *, actor: str) -> User:
    """Disabling also ends the user's logins and their links that work without a login
    (broker.accounts.links: the iCal link); their tokens stop working too (verify_token checks active)."""
    user = _require_user(db, username)
    if active == user.active:
        return user
    if not active:
        _keep_a_manager(db, user)
    user.active = active
    db.flush()
    record_audit(db, actor, "user.active", f"user:{username}", {"active": active})
    if not active:
        logins.end_user_logins(db, username, by=actor, reason="disabled")
        links.end_user_links(db, username, by=actor, reason="disabled")
    return user


def unlock(db: Session, username: str, *, actor: str) -> User:
    """Record that a manager lifted the login waits on this account (the user knows the password;
    somebody else guessed wrong). The waits live in the serving process's throttle
    (broker.accounts.auth_checks.reset_failures), which the manager's page calls beside this; the
    legacy lockout columns are cleared too so that no older reader sees a lock."""
    user = _require_user(db, username)
    user.failed_logins, user.locked_until = 0, None
    db.flush()
    record_audit(db, actor, "user.unlock", f"user:{username}")
    return user


def list_users(db: Session) -> list[User]:
    return list(db.scalars(select(User).order_by(User.username)))


def user_logins(db: Session, username: str) -> list[Login]:
    """The user's live logins, newest first."""
    _require_user(db, username)
    return logins.active_logins(db, username)


def end_login(db: Session, username: str, login_pk: int, *, actor: str) -> None:
    _require_user(db, username)
    if not logins.end_one(db, username, login_pk, by=actor):
        raise UserError(N_("%(username)s has no open login no. %(login)d; it has already ended."), username=username, login=login_pk)


def end_logins(db: Session, username: str, *, actor: str) -> int:
    """Log the user out of every browser; returns how many logins ended."""
    _require_user(db, username)
    return logins.end_user_logins(db, username, by=actor, reason="ended")


def user_audit(db: Session, username: str, limit: int = 50) -> list[AuditEntry]:
    """What was done to this account, newest first (the account page shows who and when)."""
    q = select(AuditEntry).where(AuditEntry.target == f"user:{username}").order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
    return list(db.scalars(q.limit(limit)))


# --- API tokens ----------------------------------------------------------------------------


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_token(db: Session, username: str, name: str, *, actor: str) -> str:
    """A new bearer token for `username`; only its hash is stored, so show it now or never."""
    user = _require_user(db, username)
    name = name.strip()
    if not name:
        raise UserError(N_("Give the token a name that says where it is used, e.g. --name bar-tablet."))
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    db.add(ApiToken(token_hash=_token_hash(token), username=user.username, name=name, created_at=utcnow(), revoked=False))
    db.flush()
    record_audit(db, actor, "token.issue", f"user:{username}", {"name": name})
    return token


def find_token(db: Session, token: str) -> tuple[ApiToken, User]:
    """The token's row and its user, or AuthError (unknown, revoked, inactive user); reads only."""
    row = db.scalars(select(ApiToken).where(ApiToken.token_hash == _token_hash(token))).first()
    if row is None or row.revoked:
        raise AuthError("unknown or revoked token", "invalid token")
    user = _require_user(db, row.username)
    if not user.active:
        raise AuthError("inactive", "this account is disabled; ask a manager")
    return row, user


def token_touch_due(row: ApiToken, now: datetime) -> bool:
    return row.last_used_at is None or now - row.last_used_at >= _TOKEN_TOUCH_EVERY


def touch_token(db: Session, token_id: int, now: datetime) -> None:
    db.execute(update(ApiToken).where(ApiToken.id == token_id).values(last_used_at=now))


def verify_token(db: Session, token: str, *, now: datetime | None = None) -> User:
    """The user a bearer token stands for, or AuthError; notes when it was last used (every few minutes)."""
    now = now or utcnow()
    row, user = find_token(db, token)
    if token_touch_due(row, now):
        row.last_used_at = now
        db.flush()
    return user


def list_tokens(db: Session, username: str | None = None) -> list[ApiToken]:
    q = select(ApiToken).order_by(ApiToken.username, ApiToken.created_at)
    if username is not None:
        q = q.where(ApiToken.username == username)
    return list(db.scalars(q))


def revoke_token(db: Session, token_id: int, *, actor: str) -> ApiToken:
    row = db.get(ApiToken, token_id)
    if row is None:
        raise UserError(N_("There is no token no. %(token)d: list them with `lavos user tokens`."), token=token_id)
    if row.revoked:
        return row
    row.revoked = True
    db.flush()
    record_audit(db, actor, "token.revoke", f"user:{row.username}", {"name": row.name, "token_id": token_id})
    return row
