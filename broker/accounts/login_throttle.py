"""Slow down password guessing per client address, without letting a guesser lock anybody out.

Two counters of wrong passwords, kept in memory (per process; a restart forgets them):
- per (account, client address): a few free mistakes, then each further one doubles the wait;
- per client address, whatever the account: a larger allowance, against one address trying many
  usernames.
An attempt while a wait is in force is refused without checking the password and without
counting, so hammering neither lengthens the wait nor costs an argon2 hash.

There is deliberately no counter per account alone. Anything an anonymous party can trip for an
account from anywhere also stops its owner (the old "5 wrong passwords lock the account for 15
minutes" let anyone lock the manager out): the account's owner at another address is never
slowed by someone else's mistakes. The total guessing rate the server allows is bounded instead
by how many hashes may run at once (broker.accounts.auth_checks).

The same rules apply to a username that does not exist, so the answers do not tell which exist.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

log = logging.getLogger(__name__)
_K = TypeVar("_K")  # a throttle table's key: an account and address, or an address

# Longer names cannot be accounts (broker.accounts.users._USERNAME); cut them so a key stays small.
_MAX_KEY_NAME = 65


@dataclass(frozen=True)
class ThrottlePolicy:
    account_free: int = 5  # wrong passwords for one account from one address before waiting
    client_free: int = 20  # wrong passwords from one address over all accounts before waiting
    first_wait_s: float = 1.0  # the first wait; each further failure doubles it
    max_wait_s: float = 15 * 60
    forget_after_s: float = 60 * 60  # failures this old (and no wait in force) are forgotten
    max_entries: int = 50_000  # per kind; the oldest go first (memory stays bounded under a flood)
    known_for_s: float = 30 * 24 * 3600  # how long a successful (account, address) counts as the owner's

    def wait_after(self, failures: int, free: int) -> float:
        if failures <= free:
            return 0.0
        wait: float = min(self.max_wait_s, self.first_wait_s * 2 ** (failures - free - 1))  # int ** int is Any to mypy
        return wait


@dataclass
class _Strikes:
    failures: int = 0
    last: float = 0.0
    until: float = 0.0  # monotonic time before which attempts are refused
    # For an account: its password hash when the failures were made. A new password (a manager's
    # reset, from any process, the CLI included) ends the wait for everyone.
    password_hash: str | None = None


class LoginThrottle:
    """Thread-safe; `clock` is monotonic seconds (tests pass a fake one)."""

    def __init__(self, policy: ThrottlePolicy = ThrottlePolicy(), clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._clock = clock
        self._lock = threading.Lock()
        self._pairs: OrderedDict[tuple[str, str], _Strikes] = OrderedDict()
        self._clients: OrderedDict[str, _Strikes] = OrderedDict()
        self._known: OrderedDict[tuple[str, str], float] = OrderedDict()  # (account, address) -> last success

    def wait(self, username: str, client: str, password_hash: str | None) -> float:
        """Seconds this client must wait before it may try this username again; 0 = try now."""
        now = self._clock()
        with self._lock:
            pair_key = (username[:_MAX_KEY_NAME], client)
            pair = self._pairs.get(pair_key)
            if pair is not None and pair.password_hash != password_hash:
                del self._pairs[pair_key]
                pair = None
            waits = [s.until - now for s in (pair, self._clients.get(client)) if s is not None]
        return max([0.0, *waits])

    def failed(self, username: str, client: str, password_hash: str | None) -> float:
        """Count a wrong password; returns the wait that starts now (0 if none yet)."""
        now = self._clock()
        p = self.policy
        with self._lock:
            self._forget_old(now)
            pair = self._bump(self._pairs, (username[:_MAX_KEY_NAME], client), now)
            pair.password_hash = password_hash
            client_strikes = self._bump(self._clients, client, now)
            waits = (p.wait_after(pair.failures, p.account_free), p.wait_after(client_strikes.failures, p.client_free))
            pair.until, client_strikes.until = now + waits[0], now + waits[1]
            failures = (pair.failures, client_strikes.failures)
        wait = max(waits)
        if wait:
            # One line per failure that starts a wait: bounded by the waits themselves, not per request.
            log.warning(
                "login throttled: %d wrong passwords for %r and %d in all from %s; next try in %.0f s",
                *(failures[0], username[:_MAX_KEY_NAME], failures[1], client, wait),
            )
        return wait

    def succeeded(self, username: str, client: str) -> None:
        """The right password: this client's mistakes for this account are forgiven."""
        key = (username[:_MAX_KEY_NAME], client)
        with self._lock:
            self._pairs.pop(key, None)
            self._known.pop(key, None)
            self._known[key] = self._clock()
            while len(self._known) > self.policy.max_entries:
                self._known.popitem(last=False)

    def known(self, username: str, client: str) -> bool:
        """Whether this address logged in to this account lately (its owner's device, as far as we know)."""
        with self._lock:
            at = self._known.get((username[:_MAX_KEY_NAME], client))
        return at is not None and self._clock() - at < self.policy.known_for_s

    def waiting(self, username: str) -> int:
        """How many addresses must still wait before trying this account again (the manager's page shows it)."""
        now = self._clock()
        with self._lock:
            return sum(1 for k, s in self._pairs.items() if k[0] == username[:_MAX_KEY_NAME] and s.until > now)

    def reset_account(self, username: str) -> int:
        """A manager lifts every wait on this account (from all addresses); returns how many were lifted."""
        with self._lock:
            keys = [k for k in self._pairs if k[0] == username[:_MAX_KEY_NAME]]
            for k in keys:
                del self._pairs[k]
        return len(keys)

    def reset_client(self, client: str) -> bool:
        """A manager lifts the wait on one address (all accounts)."""
        with self._lock:
            found = self._clients.pop(client, None) is not None
            for k in [k for k in self._pairs if k[1] == client]:
                del self._pairs[k]
        return found

    def _bump(self, table: OrderedDict[_K, _Strikes], key: _K, now: float) -> _Strikes:
        strikes = table.pop(key, None)
        if strikes is None or (now - strikes.last >= self.policy.forget_after_s and strikes.until <= now):
            strikes = _Strikes()
        strikes.failures += 1
        strikes.last = now
        table[key] = strikes  # most recent last: the front is what _forget_old looks at
        while len(table) > self.policy.max_entries:
            table.popitem(last=False)
        return strikes

    def _forget_old(self, now: float) -> None:
        for table in (self._pairs, self._clients):
            while table:
                oldest = next(iter(table.values()))
                if now - oldest.last < self.policy.forget_after_s or oldest.until > now:
                    break
                table.popitem(last=False)
