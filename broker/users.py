"""Staff accounts: argon2 password hashes, roles, API tokens.

Functions take the caller's SQLAlchemy session; the caller commits. Checking a password (slow on
purpose, throttled, cached) is broker.auth_checks.check_password.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from broker.db.audit import record_audit
from broker.db.models import ROLES, ApiToken, User
from broker.db.types import utcnow

DEFAULT_HASHER = PasswordHasher()  # argon2id with the library's current recommended costs
TOKEN_PREFIX = "lavos_"
MIN_PASSWORD = 8
_USERNAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
# last_used_at is for "which tokens are still in use", not a log: a write per request is waste.
_TOKEN_TOUCH_EVERY = timedelta(minutes=5)


class UserError(ValueError):
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
        raise UserError(f"the password is {len(password)} characters long; use at least {MIN_PASSWORD}")


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise UserError(f"role {role!r} is not one of {', '.join(ROLES)}")
    return role


def get_user(db: Session, username: str) -> User | None:
    return db.scalars(select(User).where(User.username == username)).first()


def _require_user(db: Session, username: str) -> User:
    user = get_user(db, username)
    if user is None:
        raise UserError(f"no user {username!r}: create it with `lavos user add {username} --role staff`")
    return user


def create_user(db: Session, username: str, password: str, role: str, *, actor: str, hasher: PasswordHasher = DEFAULT_HASHER) -> User:
    if not _USERNAME.match(username):
        raise UserError(f"username {username!r}: use 2-64 characters a-z 0-9 . _ - starting with a letter or digit, e.g. \"jana\"")
    _check_role(role)
    _check_password(password)
    if get_user(db, username) is not None:
        raise UserError(f"user {username!r} already exists; pick another name")
    user = User(username=username, password_hash=hasher.hash(password), role=role, active=True, failed_logins=0, created_at=utcnow())
    db.add(user)
    db.flush()
    record_audit(db, actor, "user.add", f"user:{username}", {"role": role})
    return user


def set_password(db: Session, username: str, password: str, *, actor: str, hasher: PasswordHasher = DEFAULT_HASHER) -> User:
    """A new password also lifts a lockout."""
    user = _require_user(db, username)
    _check_password(password)
    user.password_hash = hasher.hash(password)
    user.failed_logins, user.locked_until = 0, None
    db.flush()
    record_audit(db, actor, "user.password", f"user:{username}")
    return user


def set_role(db: Session, username: str, role: str, *, actor: str) -> User:
    user = _require_user(db, username)
    old, user.role = user.role, _check_role(role)
    db.flush()
    record_audit(db, actor, "user.role", f"user:{username}", {"role": [old, role]})
    return user


def set_active(db: Session, username: str, active: bool, *, actor: str) -> User:
    user = _require_user(db, username)
    user.active = active
    db.flush()
    record_audit(db, actor, "user.active", f"user:{username}", {"active": active})
    return user


# --- API tokens ----------------------------------------------------------------------------

def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_token(db: Session, username: str, name: str, *, actor: str) -> str:
    """A new bearer token for `username`; only its hash is stored, so show it now or never."""
    user = _require_user(db, username)
    name = name.strip()
    if not name:
        raise UserError("give the token a name that says where it is used, e.g. --name bar-tablet")
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
        raise UserError(f"no token {token_id}: list them with `lavos user tokens`")
    row.revoked = True
    db.flush()
    record_audit(db, actor, "token.revoke", f"user:{row.username}", {"name": row.name, "token_id": token_id})
    return row
