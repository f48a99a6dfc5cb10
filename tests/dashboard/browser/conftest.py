"""Browser tests: Playwright drives Debian's Chromium against the hub's pages and API served over
HTTP on a real socket, on a real Mosquitto, with simulated table nodes (EdgeNode on mock pins).

The server is what `lavos server` runs (the hub, its pages and API, the same uvicorn server), in
this process (tests/support/web.py served_lavos): a `lavos server` process per module cost 2-4
CPU-s and 6-14 s of start-up wait on the loaded 2-core machine, once per module. A module that sets `SERVER_PROCESS = True`
(test_harness.py) gets `lavos server` as a real process (tests/support/server.py LavosServer);
with `ACCOUNTS_BY_CLI = True` too, its accounts are made through `lavos user add`, as a club does.

Each test module gets its own broker, server and database (module-scoped fixtures), so what one
module leaves behind (alerts, sessions, retained MQTT messages, the hub's persistent MQTT session)
cannot change what another one sees. The database is a copy of a migrated file that already holds
the two accounts (tests/support/sqlite_template.py), so a module neither migrates nor runs
`lavos user add` twice (two processes, two real argon2 hashes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.dashboard.browser.web import prepare
from tests.dashboard.conftest import MANAGER, PASSWORD, STAFF
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, missing
from tests.support.hub import running_node
from tests.support.server import LavosServer, Served
from tests.support.waiting import wait_until
from tests.support.web import served_lavos

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize
    from playwright.sync_api._generated import Browser

    from edge.agent import EdgeNode
    from sim.mosquitto import Mosquitto
    from tests.support.web import ServedHub


TABLET: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
# Playwright's default is 30 s per action; a page load on a loaded 2-core machine stays well inside
# that, so this only bounds how long a real failure takes to report. Its expect() assertions get
# the same (their own default is 5 s): a test waits for what must show, how soon is bench/'s.
ACTION_TIMEOUT_MS = 20_000
# Tables with a simulated node: pool tables to drop balls on and transfer between, and a foosball table.
NODE_TABLES = ("pool-01", "pool-02", "pool-03", "foos-01")
USERS = {STAFF: ("staff", PASSWORD), MANAGER: ("manager", PASSWORD)}


@pytest.fixture(scope="module")
def lavos(request: pytest.FixtureRequest, mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The module's server: `base_url`, `api(...)`, `db_url` (SQLite), `workdir` and `users`."""
    workdir = tmp_path_factory.mktemp("lavos")
    if not getattr(request.module, "SERVER_PROCESS", False):
        with served_lavos(mosquitto, workdir, dict(USERS)) as served:
            yield served
        return
    server = LavosServer(workdir, mosquitto.port, dict(USERS))
    if getattr(request.module, "ACCOUNTS_BY_CLI", False):
        server.create_users()
    else:
        server.seed_users()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def node_online(server: Served, table: str) -> bool:
    result: bool = server.api("GET", f"/api/tables/{table}", MANAGER)["node"]["online"]
    return result


@pytest.fixture(scope="module")
def nodes(
    request: pytest.FixtureRequest, lavos: LavosServer | ServedHub, mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[EdgeNode, Any]]]:
    """{table: (EdgeNode, MockFactory)} for NODE_TABLES (a test module may set its own), each online at the server."""
    tables = getattr(request.module, "NODE_TABLES", NODE_TABLES)
    workdir = tmp_path_factory.mktemp("nodes")
    with contextlib.ExitStack() as stack:
        out = {t: stack.enter_context(running_node(mosquitto, workdir, t)) for t in tables}
        for table in tables:
            wait_until(lambda: node_online(lavos, table), timeout=30, what=f"{table} online at the server")
        yield out


# Per module, not per session: Playwright's sync API keeps an event loop of its own while it runs,
# and the rest of the suite (asyncio tests after these) should not share the process with it.
@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    if why := missing():
        pytest.fail(why, pytrace=False)
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=ACTION_TIMEOUT_MS)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def open_page(chromium: Browser) -> Iterator[Callable[..., Any]]:
    """open_page(viewport, mobile=...) → a fresh page in its own browser context (own cookies), closed after the test."""
    contexts = []

    def make(viewport: ViewportSize = TABLET, *, mobile: bool = False) -> Any:
        # Slovak and the venue's time zone, as on the tablet behind the bar; touch, so taps are real taps.
        context = chromium.new_context(
            viewport=viewport, device_scale_factor=1, is_mobile=mobile, has_touch=True, locale="sk-SK", timezone_id="Europe/Bratislava"
        )
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        prepare(page)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def tablet(open_page: Callable[..., Any]) -> Any:
    return open_page(TABLET)


@pytest.fixture
def phone(open_page: Callable[..., Any]) -> Any:
    return open_page(PHONE, mobile=True)
