"""Logging in: the few writes a login makes, as commands on the hub's writer.

Checking a password reads only (broker.accounts.auth_checks: a reader and argon2 on the
request's thread, never inside a transaction); what it changes is written here: a new dashboard
login, the re-hash of a password whose parameters are out of date, when a login or an API token
was last used (at most every few minutes), and logging out.
"""

from __future__ import annotations

from datetime import datetime

from broker.accounts import logins, users
from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState


@command
class StartLogin(Command[str]):
    """A new dashboard login for `actor` (who has just shown their password): answers the id for
    the cookie, of which only a hash is stored."""

    client: str
    user_agent: str


@command
class TouchLogin(Command[None]):
    """The login was seen now (for the list of logins)."""

    login: int


@command
class TouchToken(Command[None]):
    """An API token was used at `at` (noted at most every few minutes)."""

    token_id: int
    at: datetime


@command
class LogOut(Command[None]):
    """`actor` logs out: every one of their dashboard logins ends, so a copied cookie is worth nothing."""


@command
class StoreRehash(Command[bool]):
    """A password checked right whose hash has out-of-date parameters gets the new hash, unless the
    password changed meanwhile (answers whether it was stored)."""

    username: str
    old_hash: str
    new_hash: str


class Logins(Part):
    def __init__(self, hall: HallState) -> None:
        self.h = hall

    @handles(StartLogin)
    def start(self, c: StartLogin) -> str:
        with self.h.store.session() as db:
            return logins.start(db, c.actor, client=c.client, user_agent=c.user_agent)

    @handles(TouchLogin)
    def touch(self, c: TouchLogin) -> None:
        with self.h.store.session() as db:
            logins.touch(db, c.login)

    @handles(TouchToken)
    def touch_token(self, c: TouchToken) -> None:
        with self.h.store.session() as db:
            users.touch_token(db, c.token_id, c.at)

    @handles(LogOut)
    def log_out(self, c: LogOut) -> None:
        with self.h.store.session() as db:
            logins.end_user_logins(db, c.actor, by=c.actor, reason="logout")

    @handles(StoreRehash)
    def rehash(self, c: StoreRehash) -> bool:
        with self.h.store.session() as db:
            return users.store_rehash(db, c.username, c.old_hash, c.new_hash)
