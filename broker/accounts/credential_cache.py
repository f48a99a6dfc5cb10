"""Remember, for a minute, that a username and password were verified, so that an API client
sending HTTP Basic with every request pays argon2 once rather than per call.

What is kept is HMAC-SHA256(a random key made when the process starts, username, password) and
the password hash that password was checked against; never the password. An entry is honoured
only while the account's row still holds that same hash and is active (the caller re-reads the
row on every request), so a new password or a disabled account takes effect on the next
request, and the role is always the row's. Only successes are stored, so failed guesses cannot
fill it.

The trade: someone who can read this process's memory could test candidate passwords against
the entries at SHA-256 speed instead of argon2 speed, for as long as an entry lives (`ttl_s`).
Such a reader also sees the passwords in the requests themselves; a bearer token (no hash at
all, see broker.accounts.users.issue_token) is still the better credential for a program.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class _Entry:
    username: str
    password_hash: str
    expires: float


class VerifiedCredentials:
    """Thread-safe; `clock` is monotonic seconds (tests pass a fake one)."""

    def __init__(self, ttl_s: float = 60.0, max_entries: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()

    def _digest(self, username: str, password: str) -> bytes:
        name = username.encode("utf-8")
        # Length-prefixed, so no (username, password) pair can be spelled as another.
        return hmac.new(self._key, len(name).to_bytes(4, "big") + name + password.encode("utf-8"), hashlib.sha256).digest()

    def verified_hash(self, username: str, password: str) -> str | None:
        """The password hash these credentials were verified against within ttl_s, else None."""
        digest = self._digest(username, password)
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                return None
            if entry.expires <= self._clock():
                del self._entries[digest]
                return None
        return entry.password_hash

    def remember(self, username: str, password: str, password_hash: str) -> None:
        digest = self._digest(username, password)
        with self._lock:
            self._entries.pop(digest, None)
            self._entries[digest] = _Entry(username, password_hash, self._clock() + self.ttl_s)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def forget(self, username: str) -> None:
        with self._lock:
            for digest in [d for d, e in self._entries.items() if e.username == username]:
                del self._entries[digest]
