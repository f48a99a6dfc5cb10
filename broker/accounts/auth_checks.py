"""Checking a staff username and password, cheaply for the honest and slowly for guessers.

argon2id is slow on purpose (~100-200 ms of CPU, 64 MiB here), so:
- it never runs inside a database write transaction: the account is read with a reader (on
  SQLite, WAL readers neither wait for nor block the ingest writer), and the only write is a
  short one after a successful check whose hash parameters are out of date (the re-hash is
  computed before the transaction opens);
- at most HASH_SLOTS hashes run at once (one per core); a caller that cannot get a slot within
  HASH_WAIT_S, or finds MAX_WAITING callers already waiting, is told the server is busy
  (Busy → 503) instead of piling up threads; one who logged in to this account from this
  address before goes first (broker.accounts.hash_slots);
- wrong passwords are counted per client address (broker.accounts.login_throttle), and a client that
  must wait is refused before any hash (Throttled → 429);
- a verified username + password is remembered for a minute as a keyed hash
  (broker.accounts.credential_cache), so an API client using HTTP Basic pays argon2 once a minute, not
  per request; the account row is still read on every request, so a new password, a disabled
  account or a new role take effect on the very next one.

An unknown username goes through the same steps (a hash is verified against a dummy made with
the same parameters, the throttle counts it the same way) and gets the same answer.

The throttle and the cache belong to one database (one per Store, found by its engine); the hash
slots to the process, since they share its cores.
"""

from __future__ import annotations

import math
import os
import secrets
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from broker.accounts.credential_cache import VerifiedCredentials
from broker.accounts.hash_slots import HashSlots
from broker.accounts.login_throttle import LoginThrottle
from broker.accounts.users import DEFAULT_HASHER, AuthError, get_user
from broker.storage.engine import Store
from broker.storage.models import User

HASH_SLOTS = max(1, os.cpu_count() or 1)
HASH_WAIT_S = 3.0
# A waiting caller holds one of the web server's worker threads; beyond this many, refuse at once
# so that token, cookie and already-verified callers still find a thread.
MAX_WAITING = 8 * HASH_SLOTS
BUSY_RETRY_AFTER_S = 2
_slots = HashSlots(HASH_SLOTS)


class Throttled(AuthError):
    """Too many wrong passwords from this client: try again after `retry_after` seconds."""

    def __init__(self, wait_s: float) -> None:
        self.retry_after = max(1, math.ceil(wait_s))
        super().__init__("throttled", f"too many failed logins from this address; try again in {self.retry_after} s, or ask a manager")


class Busy(AuthError):
    """Every hash slot stayed taken for HASH_WAIT_S: the server is flooded with logins."""

    retry_after = BUSY_RETRY_AFTER_S

    def __init__(self) -> None:
        super().__init__("busy", "the server is busy checking other logins; try again in a few seconds")


@dataclass
class PasswordGate:
    throttle: LoginThrottle = field(default_factory=LoginThrottle)
    cache: VerifiedCredentials = field(default_factory=VerifiedCredentials)


_gates: weakref.WeakKeyDictionary[object, PasswordGate] = weakref.WeakKeyDictionary()
_gates_lock = threading.Lock()


def gate(store: Store) -> PasswordGate:
    """The throttle and credential cache of this database, in this process."""
    with _gates_lock:
        found = _gates.get(store.engine)
        if found is None:
            found = _gates[store.engine] = PasswordGate()
        return found


def reset_failures(store: Store, username: str) -> int:
    """A manager lifts every login wait on `username` (from every address); returns how many.

    Setting a new password does it too, from any process (the CLI included): the throttle
    notices the account's hash has changed.
    """
    return gate(store).throttle.reset_account(username)


def waiting_clients(store: Store, username: str) -> int:
    """How many client addresses this process makes wait before they may try `username` again."""
    return gate(store).throttle.waiting(username)


def reset_client(store: Store, client: str) -> bool:
    """A manager lifts the login wait on one client address, for every account."""
    return gate(store).throttle.reset_client(client)


StoreRehash = Callable[[str, str, str], bool]  # (username, old hash, new hash) -> stored?


def check_password(
    store: Store, username: str, password: str, *, client: str, store_rehash: StoreRehash, hasher: PasswordHasher | None = None
) -> User:
    """The active user with this username and password, else AuthError (Throttled, Busy or a refusal).

    The refusal's message is the same for an unknown user and a wrong password. `hasher` (default
    DEFAULT_HASHER) decides whether a stored hash is out of date; verifying reads the costs from it.
    This reads only; `store_rehash` writes the one change a check may make (the hub's writer:
    broker.people.logins.StoreRehash), after the hash was computed here.
    """
    with store.reader() as db:
        user = get_user(db, username)
    stored = user.password_hash if user is not None else None
    checked = check_against(store, username, password, stored, client=client, hasher=hasher)
    if not checked.right:
        raise AuthError("unknown user" if user is None else "wrong password")
    assert user is not None and stored is not None
    if not user.active:
        raise AuthError("inactive", "this account is disabled; ask a manager")
    if checked.new_hash is not None and store_rehash(username, stored, checked.new_hash):
        user.password_hash = stored = checked.new_hash
    if not checked.cached:
        gate(store).cache.remember(username, password, stored)
    return user


@dataclass(frozen=True)
class Checked:
    right: bool
    cached: bool = False  # right by the credential cache: no hash computed
    new_hash: str | None = None  # the password hashed again: the stored hash's parameters are out of date


def check_against(
    store: Store, username: str, password: str, stored: str | None, *, client: str, hasher: PasswordHasher | None = None
) -> Checked:
    """`password` against `stored`, the hash of `username`'s account in `store` (None: no such account,
    checked against a dummy all the same), behind the database's throttle and credential cache and the
    process's hash slots: Throttled or Busy before any hash, a wrong one counted against `client`.
    The caller remembers a right one that was not `cached` (the cache keeps it for a minute)."""
    g = gate(store)
    wait = g.throttle.wait(username, client, stored)
    if wait > 0:
        raise Throttled(wait)
    if stored is not None and g.cache.verified_hash(username, password) == stored:
        return Checked(right=True, cached=True)
    right, new_hash = _verify(hasher or DEFAULT_HASHER, stored, password, first=g.throttle.known(username, client))
    if not right:
        g.throttle.failed(username, client, stored)
        return Checked(right=False)
    g.throttle.succeeded(username, client)
    return Checked(right=True, new_hash=new_hash)


def _verify(hasher: PasswordHasher, stored: str | None, password: str, *, first: bool) -> tuple[bool, str | None]:
    """(right?, a re-hash if the stored parameters are out of date), in a hash slot."""
    if not _slots.acquire(first=first, timeout=HASH_WAIT_S, max_waiting=MAX_WAITING):
        raise Busy()
    try:
        try:
            hasher.verify(stored if stored is not None else _dummy_hash(hasher), password)
        except (VerificationError, InvalidHashError):
            return False, None
        if stored is None:
            return False, None
        return True, hasher.hash(password) if hasher.check_needs_rehash(stored) else None
    finally:
        _slots.release()


_dummies: dict[tuple[object, ...], str] = {}
_dummies_lock = threading.Lock()


def _dummy_hash(hasher: PasswordHasher) -> str:
    """A hash of a random secret with `hasher`'s parameters: what an unknown user is checked against."""
    params = (hasher.time_cost, hasher.memory_cost, hasher.parallelism, hasher.hash_len, hasher.salt_len, hasher.type)
    with _dummies_lock:
        if params not in _dummies:
            _dummies[params] = hasher.hash(secrets.token_urlsafe(32))
        return _dummies[params]
