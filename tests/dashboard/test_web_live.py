"""Live updates: the SSE stream of a real HTTP server delivers a change as it happens, and slow clients cannot hurt."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from broker.floor.games import MoveGame, StartGame
from dashboard.web import live, pages_events
from tests.dashboard.conftest import CHEAP, PASSWORD, STAFF, sqlite_only
from tests.support import httpc
from tests.support.matching import found
from tests.support.waiting import HANG_S, wait_until
from tests.support.web import add_users, serving_app, web_app

if TYPE_CHECKING:
    from broker.hall.hub import Hub


@pytest.fixture
def server(service: Hub) -> Iterator[str]:
    """`lavos server`'s app on a real socket (the TestClient buffers whole responses: no streams)."""
    add_users(service, {STAFF: "staff"}, PASSWORD, CHEAP)
    with serving_app(web_app(service)) as base:
        yield base


def _login(base: str) -> httpx.Client:
    c = httpc.Client(base_url=base, timeout=HANG_S)  # only a hang: a busy machine took over 5 s for a page (CI)
    token = found(r'name="csrf-token" content="([^"]+)"', c.get("/login").text).group(1)
    assert c.post("/login", data={"username": STAFF, "password": PASSWORD, "csrf_token": token}).status_code == 303
    return c


@sqlite_only
def test_a_session_start_reaches_an_open_stream_and_the_listener_goes_with_it(
    server: str, service: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages_events, "HEARTBEAT_S", 0.2)
    before = len(service.listeners)
    client = _login(server)
    with client.stream("GET", "/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(lines).startswith("retry:")
        wait_until(lambda: len(service.listeners) == before + 1, what="the stream's listener")
        threading.Timer(0.05, lambda: service.execute(StartGame(table="pool-04", actor="test"))).start()
        deadline = time.monotonic() + HANG_S  # heartbeats keep the stream alive: only this ends a wait for nothing
        for line in lines:
            if line.startswith("data:") and json.loads(line[5:]) == {"topic": "table", "table": "pool-04"}:
                break
            assert time.monotonic() < deadline, "the game's start never reached the open stream"
    client.close()
    # The browser went away: the next heartbeat write fails and the listener is removed.
    wait_until(lambda: len(service.listeners) == before, what="listener removed after disconnect")


@sqlite_only
def test_anonymous_gets_no_stream(server: str) -> None:
    r = httpc.get(server + "/events", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_a_slow_client_gets_one_refresh_instead_of_a_backlog() -> None:
    async def run() -> list[dict[str, Any] | None]:
        sub = live.Subscriber(asyncio.get_running_loop(), maxsize=5)

        # Service threads push; the loop runs the hand-over callbacks when it gets to them.
        def push_50() -> None:
            for _ in range(50):
                sub.push("event", {"table": "pool-01"})

        pushers = [threading.Thread(target=push_50) for _ in range(3)]
        for t in pushers:
            t.start()
        for t in pushers:
            t.join()
        await asyncio.sleep(0.05)
        got: list[dict[str, Any] | None] = []
        while (ev := await sub.next(0.05)) is not None:
            got.append(ev)
        sub.push("light", {"table": "pool-02"})
        await asyncio.sleep(0.01)
        got.append(await sub.next(0.5))
        return got

    got = asyncio.run(run())
    assert got[-1] == {"topic": "table", "table": "pool-02"}  # caught up: details flow again
    assert {"topic": "refresh"} in got[:-1] and len(got) <= 6


def test_what_pages_hear_for_each_service_topic() -> None:
    assert live.page_events("session", {"table": "pool-01", "action": "start"}) == [{"topic": "table", "table": "pool-01"}]
    # A transfer changed two tables: one event each (each tablet re-draws two cards, not the floor).
    assert live.page_events("session", {"table": "pool-02", "action": "transfer", "from_table": "pool-01"}) == [
        {"topic": "table", "table": "pool-01"},
        {"topic": "table", "table": "pool-02"},
    ]
    assert live.page_events("session", {"table": "pool-02", "action": "transfer"}) == [{"topic": "refresh"}]
    assert live.page_events("alert", {"table": "foos-01", "kind": "foosball_no_member"})[0]["loud"] is True
    assert live.page_events("alert_ack", {"id": 3}) == [{"topic": "alert"}]
    assert live.page_events("node", {"table": "pool-01", "online": False}) == [{"topic": "node", "table": "pool-01"}]


@sqlite_only
def test_the_hub_names_both_tables_of_a_transfer(service: Hub) -> None:
    heard: list[tuple[str, dict[str, Any]]] = []
    service.subscribe(lambda topic, data: heard.append((topic, data)))
    sid = service.execute(StartGame(table="pool-01", actor="test"))
    service.execute(MoveGame(game=sid, to_table="pool-02", actor="test"))
    moved = [d for t, d in heard if t == "session" and d.get("action") == "transfer"]
    assert moved and (moved[0]["from_table"], moved[0]["table"]) == ("pool-01", "pool-02")


@sqlite_only
def test_streams_are_capped_per_login_and_given_back_when_they_end(server: str, service: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 19, item 24: one login holding streams no longer shuts everyone out (a 429 in Slovak
    for the next stream of that login, ordinary pages and other logins still served); a closed
    stream's slot comes back, also one that ended before its first byte."""
    monkeypatch.setattr(pages_events, "MAX_PER_LOGIN", 3)
    monkeypatch.setattr(pages_events, "HEARTBEAT_S", 0.2)
    add_users(service, {"boss": "manager"}, PASSWORD, CHEAP)
    client, other = _login(server), _login(server)
    boss = httpc.Client(base_url=server, timeout=HANG_S)
    token = found(r'name="csrf-token" content="([^"]+)"', boss.get("/login").text).group(1)
    assert boss.post("/login", data={"username": "boss", "password": PASSWORD, "csrf_token": token}).status_code == 303
    streams = [client.stream("GET", "/events") for _ in range(3)]
    for opened in streams:
        assert opened.__enter__().status_code == 200
    refused = other.get("/events", headers={"Accept-Language": "sk"})  # the same login, another tablet
    assert refused.status_code == 429 and "Priveľa" in refused.text and refused.headers["Retry-After"] == "30"
    assert other.get("/").status_code == 200  # the floor itself still answers
    with boss.stream("GET", "/events") as answer:
        assert answer.status_code == 200  # another login still gets its stream
    streams[0].__exit__(None, None, None)
    wait_until(lambda: pages_events.SLOTS.per_login.get(STAFF) == 2, what="the closed stream's slot back")
    with other.stream("GET", "/events") as answer:
        assert answer.status_code == 200
    for opened in streams[1:]:
        opened.__exit__(None, None, None)
    wait_until(lambda: STAFF not in pages_events.SLOTS.per_login, what="every slot back")
