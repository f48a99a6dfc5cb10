"""Dashboard logins kept on the server, so that logging out (or being disabled) really ends them.

The browser's signed cookie holds only a random login id; the store keeps its SHA-256 with
the user, when it started, when it was last seen and when it ends (login + one shift, never
moved: a busy tablet must log in again the next day). Every request looks its row up by that
hash (one indexed SELECT joined with the user); last_seen_at is written at most once a minute.

The centre's pages (`lavos central serve`) keep theirs the same way, in rows of their own for
the centre's accounts: `row=CentralLogin` (broker/central/accounts.py); a hall's are `Login`.

Functions take the caller's SQLAlchemy session; the caller commits.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from broker.storage.audit import record_audit
from broker.storage.models import CentralLogin, Login, User
from broker.storage.types import utcnow

LoginRow = Login | CentralLogin  # a hall's dashboard login, or one to the centre's pages
AnyLogin = TypeVar("AnyLogin", Login, CentralLogin)
LIFETIME = timedelta(hours=14)  # one evening's shift (16:00-24:00) with room
TOUCH_EVERY = timedelta(minutes=1)
END_REASONS = ("logout", "password", "disabled", "role", "ended")
ENDED = "web_session.end"  # the audit's action, as stored since logins were called web sessions


@dataclass(frozen=True)
class LiveLogin:
    """A login that may be used now, and whose user it is."""

    row: Login
    user: User
    touch_due: bool  # last_seen_at is older than TOUCH_EVERY


def _hash(login_id: str) -> str:
    return hashlib.sha256(login_id.encode("utf-8")).hexdigest()


def start(
    db: Session,
    username: str,
    *,
    client: str = "",
    user_agent: str = "",
    now: datetime | None = None,
    row: type[LoginRow] = Login,
    lifetime: timedelta = LIFETIME,
) -> str:
    """A new login for `username`; returns the id for the cookie (only its hash is stored)."""
    now = now or utcnow()
    login_id = secrets.token_urlsafe(32)
    db.add(
        row(
            id_hash=_hash(login_id),
            username=username,
            created_at=now,
            last_seen_at=now,
            expires_at=now + lifetime,
            client=client[:64],
            user_agent=user_agent[:200],
        )
    )
    db.flush()
    return login_id


def live(db: Session, login_id: str, *, now: datetime | None = None) -> LiveLogin | None:
    """The login and its user if it is neither ended nor expired and the user is active; else None."""
    now = now or utcnow()
    found = db.execute(
        select(Login, User)
        .join(User, User.username == Login.username)
        .where(Login.id_hash == _hash(login_id), Login.ended_at.is_(None), Login.expires_at > now, User.active.is_(True))
    ).first()
    if found is None:
        return None
    row, user = found
    return LiveLogin(row, user, now - row.last_seen_at >= TOUCH_EVERY)


def live_row(db: Session, login_id: str, *, row: type[AnyLogin], now: datetime | None = None) -> AnyLogin | None:
    """The login of this cookie id if it has neither ended nor expired (whose user it is: `.username`); else None."""
    now = now or utcnow()
    return db.scalar(select(row).where(row.id_hash == _hash(login_id), row.ended_at.is_(None), row.expires_at > now))


def touch(db: Session, login_pk: int, *, now: datetime | None = None) -> None:
    db.execute(update(Login).where(Login.id == login_pk).values(last_seen_at=now or utcnow()))


def current_pk(db: Session, login_id: str) -> int | None:
    return db.scalar(select(Login.id).where(Login.id_hash == _hash(login_id)))


def _end(db: Session, rows: list[LoginRow], *, by: str, reason: str, now: datetime) -> int:
    for row in rows:
        row.ended_at, row.ended_by, row.end_reason = now, by, reason
    db.flush()
    return len(rows)


def _open_rows(db: Session, username: str, now: datetime, row: type[LoginRow] = Login) -> list[LoginRow]:
    return list(db.scalars(select(row).where(row.username == username, row.ended_at.is_(None), row.expires_at > now)))


def end_user_logins(
    db: Session,
    username: str,
    *,
    by: str,
    reason: str,
    keep: int | None = None,
    now: datetime | None = None,
    row: type[LoginRow] = Login,
) -> int:
    """End every live login of `username` but `keep` (a login pk); returns how many ended."""
    now = now or utcnow()
    rows = [r for r in _open_rows(db, username, now, row) if r.id != keep]
    ended = _end(db, rows, by=by, reason=reason, now=now)
    if ended:
        record_audit(db, by, ENDED, f"user:{username}", {"reason": reason, "sessions": ended})
    return ended


def end_one(db: Session, username: str, login_pk: int, *, by: str, now: datetime | None = None) -> bool:
    """End one live login of `username` (by its pk, as the list shows it); False if there is no such one."""
    now = now or utcnow()
    rows = [r for r in _open_rows(db, username, now) if r.id == login_pk]
    if rows:
        _end(db, rows, by=by, reason="ended", now=now)
        record_audit(db, by, ENDED, f"user:{username}", {"reason": "ended", "session": login_pk})
    return bool(rows)


def active_logins(db: Session, username: str | None = None, *, now: datetime | None = None) -> list[Login]:
    """Live logins (not ended, not expired), newest first; of one user or of all."""
    now = now or utcnow()
    q = select(Login).where(Login.ended_at.is_(None), Login.expires_at > now)
    if username is not None:
        q = q.where(Login.username == username)
    return list(db.scalars(q.order_by(Login.created_at.desc(), Login.id.desc())))
