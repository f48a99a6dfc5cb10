"""The staff pages over a real Hub: a logged-in TestClient that sends CSRF tokens itself."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.routing import Mount

from broker.accounts.users import new_password
from broker.hall.facade import HubFacade
from broker.hall.hub import Hub
from broker.people.accounts import CreateStaff
from dashboard.api import create_app
from dashboard.http_server import http_server
from dashboard.web import mount_web
from devices import contract
from sim.mosquitto import HUB_USER, Mosquitto
from tests.support.hub import running_service
from tests.support.mqtt import Collector
from tests.support.server import call_api
from tests.support.sqlite_template import sqlite_with_users
from tests.support.waiting import wait_until

_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


class Browser:
    """One visitor: its own cookie jar; `post` fills in the page's CSRF token unless told not to."""

    def __init__(self, app: FastAPI, base_url: str = "http://testserver") -> None:
        self.client = TestClient(app, base_url=base_url, follow_redirects=False)
        self.token = ""

    def get(self, path: str, **kw: Any) -> httpx.Response:
        r = self.client.get(path, **kw)
        m = _CSRF.search(r.text) if r.headers.get("content-type", "").startswith("text/html") else None
        if m:
            self.token = m.group(1)
        result: httpx.Response = r
        return result

    def post(self, path: str, data: dict[str, Any] | None = None, *, csrf: bool = True, **kw: Any) -> httpx.Response:
        if csrf and not self.token:
            self.get("/login")
        body = dict(data or {})
        if csrf:
            body.setdefault("csrf_token", self.token)
        result: httpx.Response = self.client.post(path, data=body, **kw)
        return result

    def login(self, username: str, password: str) -> httpx.Response:
        self.get("/login")
        r = self.post("/login", {"username": username, "password": password, "next": "/"})
        assert r.status_code == 303, r.text
        self.get("/")  # the token changes at login
        return r


def web_app(service: Hub, data_dir: Path | None = None, https_cookies: bool = False) -> FastAPI:
    return mount_web(create_app(service), service, data_dir=data_dir, https_cookies=https_cookies)


_BOUND: dict[bool, FastAPI] = {}


def bound_app(service: Hub, *, pages: bool = True) -> FastAPI:
    """The API (with `pages`, and the pages, as `lavos server` serves them) over `service`: one app
    per test process, handed to each test's hub in turn.

    FastAPI builds a router's routes (a pydantic adapter for every parameter and response) at an
    app's first request to it: about 0.2 s for ours here, three or four times that on the loaded
    machine, per test when each test built its own app. The app holds the hub only in its state
    (dashboard.api.deps, the body limits), so binding it to the next test's hub is setting that.
    For the fixtures whose test talks to one hub at a time; a test with two hubs builds its own."""
    app = _BOUND.get(pages)
    if app is None:
        app = _BOUND[pages] = web_app(service) if pages else create_app(service)
    facade = HubFacade(service)
    app.state.hub = facade
    for route in app.routes:
        if isinstance(route, Mount) and isinstance(route.app, FastAPI):
            route.app.state.hub = facade  # the pages (mount_web)
    return app


# How long a stopping server lets the requests in flight finish: a live page's stream never ends
# by itself (`lavos server` ends with its process), and once cancelled it gives its slot back
# (dashboard.web.pages_events.SLOTS: one per process, shared with the next module's server).
STOP_GRACE_S = 2


@contextmanager
def serving_app(app: FastAPI) -> Iterator[str]:
    """`app` on a real socket, served in a thread of this process by the uvicorn server `lavos
    server` runs (dashboard.http_server: its protocol, timeouts and connection cap), until the
    block ends; yields its base URL. For what the TestClient cannot do (it buffers whole
    responses: no live stream, no browser), over a hub in this process."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = http_server(app, log_level="warning", access_log=False)
    server.config.timeout_graceful_shutdown = STOP_GRACE_S
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="uvicorn", daemon=True)
    thread.start()
    wait_until(lambda: server.started, what="uvicorn started")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(STOP_GRACE_S + 10)
        sock.close()


@dataclass
class ServedHub:
    """A hub of this process served on a real socket (serving_app), with the accounts `users`
    (name -> (role, password)): what the tests use of tests.support.server.LavosServer (`base_url`,
    `api`; from served_lavos its `workdir` and `db_url` too)."""

    base_url: str
    users: dict[str, tuple[str, str]]
    hub: Hub
    workdir: Path | None = None  # served_lavos: the database and the data directory are in it
    db_url: str = ""

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    def api(self, method: str, path: str, user: str, *, status: int | None = 200, **kw: Any) -> Any:
        return call_api(self.base_url, self.users, method, path, user, status=status, **kw)


@contextmanager
def served_lavos(mosquitto: Mosquitto, workdir: Path, users: dict[str, tuple[str, str]]) -> Iterator[ServedHub]:
    """What `lavos server` runs, in this process: the hub on a SQLite file in `workdir` holding
    `users` (copied in, hashed cheaply: tests/support/sqlite_template.py, and checked at those
    costs), on the broker as lavos-hub, with its data directory in `workdir`; the same pages and
    API on a real socket, served by the same uvicorn server. The hub receives MQTT in a thread
    (`lavos server`: in a child process, broker.adapters.link_process).

    For the browser modules: Chromium, the broker and the nodes reach it over the same sockets as
    they reach the process, which cost 2-4 CPU-s to start and its start-up wait per module. The
    process is tested where it is the point (tests/dashboard/browser/test_harness.py,
    tests/dashboard/test_server_cli.py, the faults and security modules)."""
    db = sqlite_with_users(workdir / "lavos.db", users)
    data = workdir / "data"
    data.mkdir(parents=True, exist_ok=True)  # as `lavos server` makes it
    with (
        running_service(mosquitto, db, client_id=HUB_USER, data_dir=data) as hub,
        serving_app(web_app(hub, data)) as base,
    ):
        yield ServedHub(base, users, hub, workdir, db)


@contextmanager
def served_hub(hub: Hub, users: dict[str, tuple[str, str]], hasher: PasswordHasher) -> Iterator[ServedHub]:
    """`hub` with `users` (hashed with `hasher`), its pages and API on a real socket."""
    for name, (role, password) in users.items():
        add_users(hub, {name: role}, password, hasher)
    with serving_app(web_app(hub)) as base:
        yield ServedHub(base, users, hub)


def add_users(service: Hub | HubFacade, users: dict[str, str], password: str, hasher: PasswordHasher) -> None:
    """Staff accounts through the hub's command (`service`: a Hub or its facade); the password is hashed once, here."""
    hashed = new_password(password, hasher)
    for name, role in users.items():
        service.execute(CreateStaff(username=name, password=hashed, role=role, actor="test"))


@contextmanager
def node_link(mosquitto: Mosquitto, table: str) -> Iterator[Collector]:
    """Publish as the table's node (its own MQTT user, so the ACL applies as in the hall)."""
    c = Collector(mosquitto.port, username=table, password=f"pw-{table}", topics=(contract.light_set_topic(table),))
    try:
        yield c
    finally:
        # The broker is shared by a test module: leave no retained state behind for the next test.
        for topic in (contract.status_topic(table), contract.light_state_topic(table)):
            c.publish(topic, b"", retain=True)
        c.close()


def status(node: Collector, table: str, state: str, boot: str = "b-web") -> None:
    node.publish(contract.status_topic(table), json.dumps({"state": state, "boot": boot, "version": "test"}), retain=True)


def light(node: Collector, table: str, on: bool, cause: str = "button") -> None:
    node.publish(contract.light_state_topic(table), json.dumps({"on": on, "blink": False, "cause": cause}), retain=True)


def event(node: Collector, table: str, etype: str, seq: int, data: dict[str, Any]) -> None:
    node.publish(
        contract.event_topic(table, etype),
        json.dumps(
            {
                "v": 1,
                "table": table,
                "type": etype,
                "boot": "b-web",
                "seq": seq,
                "ts": "2026-11-10T17:00:00+00:00",
                "ts_synced": False,
                "data": data,
            }
        ),
    )
