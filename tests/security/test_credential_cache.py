"""Issue 9, item 5, in process over a real Hub: a verified HTTP Basic credential is
remembered so the next call runs no argon2 (counted on the real hasher, shipped costs), what is
remembered holds no plaintext, a login that cannot get a hash slot is told 503 at once, and the
account owner's known address goes before a guesser when every slot is taken.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from typing import TYPE_CHECKING, Any, Literal

import pytest
from argon2 import PasswordHasher

from broker.accounts import auth_checks
from broker.accounts.auth_checks import check_password, gate
from broker.accounts.users import AuthError
from broker.people.logins import StoreRehash
from tests.dashboard.conftest import CHEAP, PASSWORD, STAFF, api, basic, clock, service, sqlite_only  # noqa: F401  (fixtures)
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


class CountingHasher(PasswordHasher):
    """The real argon2id hasher (shipped costs), counting how often it hashes or verifies."""

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    def verify(self, hash: Any, password: Any) -> Literal[True]:
        self.runs += 1
        return super().verify(hash, password)

    def hash(self, password: Any, *, salt: Any = None) -> str:
        self.runs += 1
        return super().hash(password, salt=salt)


@sqlite_only
def test_the_second_call_runs_no_argon2_and_the_cache_holds_no_plaintext(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = CountingHasher()
    monkeypatch.setattr(api.service, "password_hasher", counting)  # the one hasher the hub's password path uses
    assert api.client.get("/api/tables", headers=basic(STAFF, PASSWORD)).status_code == 200
    after_first = counting.runs
    assert after_first >= 1
    for _ in range(5):
        assert api.client.get("/api/tables", headers=basic(STAFF, PASSWORD)).status_code == 200
    assert counting.runs == after_first
    assert api.client.get("/api/tables", headers=basic(STAFF, "čierna-guľa-9")).status_code == 401
    assert counting.runs == after_first + 1  # a wrong password is still checked
    leaks = [o for o in _reachable(gate(api.service.store)) if isinstance(o, (str, bytes, bytearray)) and _contains(o, PASSWORD)]
    assert leaks == []
    assert all(isinstance(k, bytes) and len(k) == 32 for k in gate(api.service.store).cache._entries)


@sqlite_only
def test_a_login_that_gets_no_hash_slot_is_told_503_not_queued(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth_checks, "HASH_WAIT_S", 0.2)
    taken = 0
    try:
        while taken < auth_checks.HASH_SLOTS:  # every slot busy, as under a flood from many addresses
            assert auth_checks._slots.acquire(first=True, timeout=5, max_waiting=1)
            taken += 1
        r = api.client.get("/api/tables", headers=basic(STAFF, PASSWORD))  # waits HASH_WAIT_S for a slot, no longer
        assert r.status_code == 503 and "busy" in r.json()["detail"] and int(r.headers["retry-after"]) >= 1
        assert api.client.get("/api/tables", headers=api.staff).status_code == 200  # tokens need no hash
        # As if that many callers were queued already: no wait at all. The slots stay taken and the
        # wait for one would last a day, so an answer at all says it did not queue.
        monkeypatch.setattr(auth_checks, "HASH_WAIT_S", 24 * 3600.0)
        monkeypatch.setattr(auth_checks, "MAX_WAITING", 0)
        answers: list[int] = []
        call = threading.Thread(target=lambda: answers.append(api.client.get("/api/tables", headers=basic(STAFF, PASSWORD)).status_code))
        call.start()
        wait_until(lambda: answers, what="an answer without a wait for a hash slot")
        assert answers == [503]
    finally:
        for _ in range(taken):
            auth_checks._slots.release()
        monkeypatch.undo()
    assert api.client.get("/api/tables", headers=basic(STAFF, PASSWORD)).status_code == 200


def _contains(o: str | bytes | bytearray, secret: str) -> bool:
    return secret in o if isinstance(o, str) else secret.encode() in o


def _reachable(root: object, limit: int = 100_000) -> list[object]:
    seen: set[int] = set()
    todo = [root]
    out: list[object] = []
    while todo and len(out) < limit:
        o = todo.pop()
        if id(o) in seen or isinstance(o, type) or (callable(o) and not hasattr(o, "__dict__")):
            continue
        seen.add(id(o))
        out.append(o)
        todo.extend(gc.get_referents(o))
    return out


@sqlite_only
def test_under_a_flood_the_owners_known_address_gets_the_next_hash_slot(api: Api) -> None:
    store, order = api.service.store, []

    def rehash(username: str, old: str, new: str) -> bool:  # as the facade does: a command on the writer
        result: bool = api.service.execute(StoreRehash(username=username, old_hash=old, new_hash=new, actor=username))
        return result

    assert check_password(store, STAFF, PASSWORD, client="10.0.0.1", hasher=CHEAP, store_rehash=rehash).username == STAFF  # her bar tablet
    gate(store).cache.forget(STAFF)  # as a minute later: the next call must hash again

    def attempt(name: str, password: str, client: str) -> None:
        with contextlib.suppress(AuthError):
            check_password(store, STAFF, password, client=client, hasher=CHEAP, store_rehash=rehash)
        order.append(name)

    taken = 0
    try:
        while taken < auth_checks.HASH_SLOTS:
            assert auth_checks._slots.acquire(first=True, timeout=5, max_waiting=1)
            taken += 1
        guesser = threading.Thread(target=attempt, args=("guesser", "hádam", "10.6.6.6"))
        guesser.start()
        time.sleep(0.3)  # the guesser waits first
        owner = threading.Thread(target=attempt, args=("owner", PASSWORD, "10.0.0.1"))
        owner.start()
        time.sleep(0.3)
        auth_checks._slots.release()  # one slot frees up: the owner gets it, the guesser waits on
        taken -= 1
        owner.join(10)  # the owner's hash runs, then its slot goes to the guesser
        guesser.join(10)
    finally:
        for _ in range(taken):
            auth_checks._slots.release()
    assert order == ["owner", "guesser"]
