"""Issue 19, item 27: under 16 anonymous Basic-auth clients the staff's own calls never get a 503.

In process (the API as `lavos server` serves it, on a real socket, over a real Hub on SQLite and
PostgreSQL): what writes while the flood runs (only the hub's writer may, and only it does), a
read transaction that cannot write (so no read path can take or wait for the write lock), and a
staff call whose bookkeeping write (the token's "last used") cannot be made now is answered anyway.
"""

from __future__ import annotations

import base64
import socket
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
import uvicorn
from sqlalchemy import event, exc, select, text, update

from broker.storage import engine as storage_engine
from broker.storage.models import ApiToken
from sim.mosquitto import free_port
from tests.dashboard.conftest import MANAGER, add_users, clock, service, sqlite_only  # noqa: F401 - fixtures
from tests.support import httpc
from tests.support.matching import some
from tests.support.waiting import wait_until
from tests.support.web import web_app

if TYPE_CHECKING:
    from broker.hall.hub import Hub


ATTACKERS = 16
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


@pytest.fixture
def served(service: Hub) -> Iterator[tuple[str, str]]:
    """The app on a real socket (a TestClient serializes requests); the staff's token."""
    token, _manager_token = add_users(service)
    sock = socket.socket()
    sock.bind(("127.0.0.1", free_port()))
    server = uvicorn.Server(uvicorn.Config(web_app(service), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, what="uvicorn started")
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", token
    server.should_exit = True
    thread.join(10)
    sock.close()


class Flood:
    """ATTACKERS threads, each from its own loopback address, sending wrong, unknown or no Basic credentials."""

    def __init__(self, base: str) -> None:
        self.base, self.stop, self.lock = base, threading.Event(), threading.Lock()
        self.answers: Counter[int] = Counter()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(ATTACKERS)]

    def _run(self, i: int) -> None:
        transport = httpc.HTTPTransport(local_address=f"127.0.27.{i + 1}")
        with httpc.Client(base_url=self.base, timeout=30, transport=transport) as c:
            n = 0
            while not self.stop.is_set():
                n += 1
                user = MANAGER if n % 2 else f"intruder-{i}-{n}"
                creds = base64.b64encode(f"{user}:hádam-{n}".encode()).decode()
                headers = {"Authorization": f"Basic {creds}"} if n % 5 else {}
                code = c.get("/api/tables", headers=headers).status_code
                with self.lock:
                    self.answers[code] += 1

    def __enter__(self) -> Flood:
        for t in self.threads:
            t.start()
        wait_until(lambda: sum(self.answers.values()) >= ATTACKERS, what="the flood under way")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(30)


def test_under_sixteen_anonymous_basic_clients_staff_calls_get_no_503_and_only_the_writer_writes(
    served: tuple[str, str], service: Hub
) -> None:
    base, token = served
    writes: Counter[tuple[str, str]] = Counter()

    def spy(conn: Any, cursor: Any, statement: Any, parameters: Any, context: Any, executemany: Any) -> None:
        verb = statement.lstrip().split(None, 1)[0].upper()
        if verb in WRITES:
            writes[(threading.current_thread().name, verb)] += 1

    event.listen(service.store.engine, "before_cursor_execute", spy)
    answers: Counter[str] = Counter()
    refused: list[str] = []
    try:
        with Flood(base) as flood, httpc.Client(base_url=base, timeout=30, headers={"Authorization": f"Bearer {token}"}) as staff:
            for _ in range(8):  # 8 rounds of 3 calls: a game started and stopped, the floor read
                started = staff.post("/api/sessions", json={"table": "pool-03"})
                calls = [("start", started)]
                if started.status_code == 201:
                    calls.append(("stop", staff.post(f"/api/sessions/{started.json()['id']}/stop")))
                calls.append(("tables", staff.get("/api/tables")))
                for what, r in calls:
                    answers[f"{what} {r.status_code}"] += 1
                    if r.status_code >= 500:
                        refused.append(f"{what}: {r.status_code} {r.text[:200]}")
            seen = flood.answers.copy()
    finally:
        event.remove(service.store.engine, "before_cursor_execute", spy)
    assert refused == [], (refused, answers)
    assert answers == {"start 201": 8, "stop 200": 8, "tables 200": 8}, answers
    assert seen[401] + seen[429] >= ATTACKERS, seen  # the flood was answered all along
    # Nothing the flood does writes; every write of the staff's calls is the writer's.
    assert {thread for thread, _verb in writes} == {"lavos-hall-writer"}, writes


def test_a_read_transaction_cannot_write(service: Hub) -> None:
    """On both backends: so a read path that writes fails at once in the tests, never taking (or
    waiting for) the write lock in the hall."""
    store = service.store
    add_users(service)
    with pytest.raises(exc.DBAPIError), store.reader() as db:
        db.execute(update(ApiToken).values(name="written by a reader"))
    with store.reader() as db:
        assert "written by a reader" not in set(db.scalars(select(ApiToken.name)))
        assert db.execute(text("SELECT 1")).scalar_one() == 1  # reading is what it is for


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's wait for the write lock shortened before the store opens (10 s in the hall)."""
    monkeypatch.setattr(storage_engine, "SQLITE_BUSY_TIMEOUT_MS", 300)


@sqlite_only
def test_a_staff_call_is_answered_while_its_tokens_last_used_cannot_be_written(
    short_busy_timeout: None, served: tuple[str, str], service: Hub
) -> None:
    """The token's "last used" is bookkeeping: when it cannot be written now (another program holds
    SQLite's write lock, as a backup or the CLI may), the staff's call is answered all the same,
    not a 503 "database is locked" after the wait; it is written with a later use."""
    base, token = served
    holder = sqlite3.connect(some(service.store.engine.url.database), isolation_level=None, timeout=0)
    try:
        holder.execute("BEGIN IMMEDIATE")  # the write lock, held
        with httpc.Client(base_url=base, timeout=30) as staff:
            r = staff.get("/api/tables", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200, r.text
    finally:
        holder.execute("ROLLBACK")
        holder.close()
