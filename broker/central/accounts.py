"""Who may talk to the centre: halls (a bearer credential each) and people (operator, hall manager).

A hall's credential is a random token shown once (`lavos central add-hall`); only its SHA-256 is
kept, so a copied database is no set of working credentials. A person logs in with a password
(argon2, as the hall's staff). An operator sees every hall; a hall manager only their own.

A page login is kept on the server as a hall's dashboard logins are (broker/accounts/logins.py, rows
of `central_logins`): the cookie holds a random id, the row its SHA-256, and it ends 12 h after it
began, at logout (every login of that person: a copied cookie is worth nothing), or when the person
gets a new password, role or hall (`lavos central add-user` again).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta

from argon2 import PasswordHasher
from sqlalchemy import select
from sqlalchemy.orm import Session

from broker.accounts import logins
from broker.accounts.auth_checks import check_against, gate
from broker.accounts.users import DEFAULT_HASHER
from broker.storage.engine import Store
from broker.storage.models import CENTRAL_ROLES, CentralHall, CentralLogin, CentralUser

OPERATOR, HALL_MANAGER = CENTRAL_ROLES
LOGIN_LIFETIME = timedelta(hours=12)  # a working day at the centre; never extended by use
HALL_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")  # a venue id (devices.tables.Slug): also an MQTT topic level


class CentralError(ValueError):
    """A request the centre refuses; the message says why (English: the CLI and the API's detail)."""


@dataclass(frozen=True)
class Viewer:
    """Someone logged in to the centre; `hall` is None for an operator (every hall)."""

    username: str
    role: str
    hall: str | None

    def may_see(self, hall: str) -> bool:
        return self.role == OPERATOR or self.hall == hall


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_hall(db: Session, hall: str, name: str) -> str:
    """Register a hall (its venue id) or give it a new credential; answers the credential, shown once."""
    if not HALL_ID.match(hall) or hall.startswith("lavos-"):
        # Also its bridge's login at the centre's broker (central.acl): lavos-... are the services'.
        raise CentralError(f"{hall!r} is not a hall id: use the venue file's [venue] id (lowercase letters, digits, -; not lavos-...)")
    token = secrets.token_urlsafe(32)
    row = db.get(CentralHall, hall)
    if row is None:
        db.add(CentralHall(hall=hall, name=name or hall, token_hash=token_hash(token), last_seq=0))
    else:
        row.token_hash, row.name = token_hash(token), name or row.name
    return token


def hall_of_token(db: Session, token: str) -> str | None:
    return db.scalar(select(CentralHall.hall).where(CentralHall.token_hash == token_hash(token))) if token else None


def add_user(
    db: Session, username: str, password: str, role: str, hall: str | None, hasher: PasswordHasher = DEFAULT_HASHER, *, actor: str = "cli"
) -> None:
    """A new person, or a new password, role and hall for one: then every login they have ends."""
    if role not in CENTRAL_ROLES:
        raise CentralError(f"role {role!r}: use {' or '.join(CENTRAL_ROLES)}")
    if (role == HALL_MANAGER) != (hall is not None):
        raise CentralError("a hall manager needs --hall; an operator sees every hall and takes none")
    if hall is not None and db.get(CentralHall, hall) is None:
        raise CentralError(f"no hall {hall!r} at the centre: add it first (lavos central add-hall {hall})")
    if len(password) < 10:
        raise CentralError("the password needs at least 10 characters")
    row = db.get(CentralUser, username)
    hashed = hasher.hash(password)
    if row is None:
        db.add(CentralUser(username=username, password_hash=hashed, role=role, hall=hall))
    else:
        row.password_hash, row.role, row.hall = hashed, role, hall
        end_logins(db, username, by=actor, reason="password")


def check_login(store: Store, username: str, password: str, *, client: str, hasher: PasswordHasher = DEFAULT_HASHER) -> Viewer | None:
    """The person with this name and password, or None; as the hall's staff logins are checked
    (broker.accounts.auth_checks): a client guessing waits (Throttled), a flood of guesses gets Busy
    rather than every core hashing, an API client's HTTP Basic is hashed once a minute, not per call."""
    with store.reader() as db:
        row = db.get(CentralUser, username)
        viewer = Viewer(row.username, row.role, row.hall) if row is not None else None
        stored = row.password_hash if row is not None else None
    checked = check_against(store, username, password, stored, client=client, hasher=hasher)
    if not checked.right or viewer is None or stored is None:
        return None
    if not checked.cached:
        gate(store).cache.remember(username, password, stored)
    return viewer


def viewer_of(db: Session, username: str) -> Viewer | None:
    row = db.get(CentralUser, username)
    return Viewer(row.username, row.role, row.hall) if row is not None else None


def start_login(db: Session, username: str, *, client: str, user_agent: str) -> str:
    """A new page login for `username` (who has just shown their password): the id for the cookie."""
    return logins.start(db, username, client=client, user_agent=user_agent, row=CentralLogin, lifetime=LOGIN_LIFETIME)


def viewer_of_login(db: Session, login_id: str) -> Viewer | None:
    """Whose page login this cookie id is, while it lasts; None once it ended, expired or was never one."""
    row = logins.live_row(db, login_id, row=CentralLogin)
    return viewer_of(db, row.username) if row is not None else None


def end_logins(db: Session, username: str, *, by: str, reason: str) -> int:
    """End every page login of `username` (logout, a new password); answers how many ended."""
    return logins.end_user_logins(db, username, by=by, reason=reason, row=CentralLogin)
