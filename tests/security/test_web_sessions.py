"""Issue 9 item 8: a dashboard login is a server-side session, and ending it ends every copy of the cookie.

Against the hub served as `lavos server` serves it, on a real socket (tests/support/web.py
served_lavos: in this process, which is not what is tested here): a browser logs in, its
cookie is copied into a second httpx client (the "stolen" copy), and after logout / a manager's new
password / disabling / a role change that copy is refused on a page (303 to /login), on the API
(401) and on a CSRF-carrying POST (refused, nothing done). On the original code the cookie held
the username, so the copy kept working until it was 14 h old, and every POST renewed it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from dashboard.web.security import SESSION_COOKIE
from tests.support import httpc
from tests.support.matching import some
from tests.support.server import Served
from tests.support.sqlite_template import CHEAP
from tests.support.web import served_lavos

if TYPE_CHECKING:
    from datetime import datetime

    from sim.mosquitto import Mosquitto
    from tests.support.web import ServedHub


PASSWORD = "Čašníčka-heslo-42"
NEW_PASSWORD = "Nové-heslo-na-zmenu-9"
USERS = {
    "boss": ("manager", PASSWORD),
    "jana": ("staff", PASSWORD),
    "fero": ("staff", PASSWORD),
    "zuza": ("staff", PASSWORD),
    "miro": ("staff", PASSWORD),
    "eva": ("staff", PASSWORD),
}
_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


@pytest.fixture(scope="module")
def lavos(mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served_lavos(mosquitto, tmp_path_factory.mktemp("web-sessions"), dict(USERS)) as server:
        yield server


class Tab:
    """One browser tab: its own cookie jar and the page's CSRF token."""

    def __init__(self, server: Served, cookie: str | None = None) -> None:
        self.http = httpc.Client(base_url=server.base_url, timeout=30, follow_redirects=False)
        if cookie is not None:
            self.http.cookies.set(SESSION_COOKIE, cookie)
        self.token = ""

    def page(self, path: str = "/") -> httpx.Response:
        r = self.http.get(path)
        m = _CSRF.search(r.text)
        if m:
            self.token = m.group(1)
        return r

    def post(self, path: str, data: dict[str, str] | None = None) -> httpx.Response:
        return self.http.post(path, data={"csrf_token": self.token, **(data or {})})

    def login(self, username: str, password: str = PASSWORD) -> Tab:
        self.page("/login")
        r = self.post("/login", {"username": username, "password": password, "next": "/"})
        assert r.status_code == 303 and r.headers["location"] == "/", r.text
        assert self.page("/").status_code == 200
        return self

    @property
    def cookie(self) -> str:
        return self.http.cookies[SESSION_COOKIE]


def _copy(tab: Tab, server: Served) -> Tab:
    """The cookie as a thief has it, with the CSRF token the page showed."""
    thief = Tab(server, tab.cookie)
    thief.token = tab.token
    return thief


def _works(thief: Tab) -> dict[str, object]:
    page = thief.http.get("/")
    api = thief.http.get("/api/tables")
    # CSRF-checked writes through the pages and the API: acknowledging an alert that does not exist.
    post = thief.http.post("/alerts/999999/ack", data={"csrf_token": thief.token, "next": "/alerts"})
    api_post = thief.http.post("/api/alerts/999999/ack", headers={"X-CSRF-Token": thief.token}, json={})
    return {
        "page": page.status_code,
        "page goes to": page.headers.get("location", ""),
        "api": api.status_code,
        "post": post.status_code,
        "post goes to": post.headers.get("location", ""),
        "api post": api_post.status_code,
    }


def _assert_refused(thief: Tab) -> None:
    got = _works(thief)
    assert got["page"] == 303 and str(got["page goes to"]).startswith("/login"), got
    assert got["api"] == 401, got
    assert got["post"] == 303 and str(got["post goes to"]).startswith("/login"), got  # not done: sent to log in
    assert got["api post"] == 401, got


def _assert_working(thief: Tab) -> None:
    got = _works(thief)
    assert (got["page"], got["api"], got["post"], got["post goes to"], got["api post"]) == (200, 200, 303, "/alerts", 404), got


def _manager(lavos: Served) -> Tab:
    return Tab(lavos).login("boss")


def test_copied_cookie_is_refused_after_logout(lavos: ServedHub) -> None:
    tab = Tab(lavos).login("jana")
    thief = _copy(tab, lavos)
    _assert_working(thief)  # the copy really is a working session before
    assert tab.post("/logout").headers["location"] == "/login"
    _assert_refused(thief)
    assert tab.http.get("/").status_code == 303


def test_logout_ends_every_session_of_that_user(lavos: ServedHub) -> None:
    first, second = Tab(lavos).login("fero"), Tab(lavos).login("fero")
    first.post("/logout")
    assert second.http.get("/").status_code == 303
    assert second.http.get("/api/tables").status_code == 401


@pytest.mark.parametrize("change", ["password", "disable", "role"])
def test_copied_cookie_is_refused_after_a_manager_changes_the_account(lavos: ServedHub, change: Any) -> None:
    username = {"password": "zuza", "disable": "miro", "role": "eva"}[change]
    tab = Tab(lavos).login(username)
    thief = _copy(tab, lavos)
    _assert_working(thief)
    boss = _manager(lavos)
    boss.page(f"/users/{username}")
    if change == "password":
        r = boss.post(f"/users/{username}/password", {"password": NEW_PASSWORD, "repeat": NEW_PASSWORD})
    elif change == "disable":
        r = boss.post(f"/users/{username}/active", {"active": "0"})
    else:
        r = boss.post(f"/users/{username}/role", {"role": "manager"})
    assert r.status_code == 303, r.text
    _assert_refused(thief)
    assert tab.http.get("/").status_code == 303  # the user's own tab too
    assert boss.page("/").status_code == 200  # the manager who did it stays logged in


@pytest.mark.parametrize("change", ["password", "disable", "role"])
def test_copied_cookie_is_refused_after_the_account_changes_outside_the_server(lavos: ServedHub, change: Any) -> None:
    """The same through broker.accounts.users on the database (what `lavos user …` does): the server sees it at once."""
    from broker.accounts.users import new_password, set_active, set_password, set_role
    from broker.storage.engine import open_store

    username = {"password": "zuza", "disable": "miro", "role": "eva"}[change]
    store = open_store(lavos.db_url)
    try:
        with store.session() as db:  # the page test above may have changed this account: start from a usable one
            set_active(db, username, True, actor="test")
            set_password(db, username, new_password(PASSWORD, CHEAP), actor="test")
            set_role(db, username, "staff", actor="test")
        thief = _copy(Tab(lavos).login(username), lavos)
        _assert_working(thief)
        with store.session() as db:
            if change == "password":
                set_password(db, username, new_password(NEW_PASSWORD, CHEAP), actor="boss")
            elif change == "disable":
                set_active(db, username, False, actor="boss")
            else:
                set_role(db, username, "manager", actor="boss")
    finally:
        store.close()
    _assert_refused(thief)


def test_a_post_does_not_extend_the_session_past_its_absolute_end(lavos: ServedHub) -> None:
    tab = Tab(lavos).login("jana")
    engine = create_engine(lavos.db_url)
    try:
        with engine.begin() as c:
            row = (
                c.execute(
                    text(
                        "select id, created_at, expires_at from web_sessions where username = 'jana' and ended_at is null order by id desc"
                    )
                )
                .mappings()
                .first()
            )
            assert row is not None
            # The end is fixed at login: one shift (14 h), whatever happens after.
            hours = (_dt(row["expires_at"]) - _dt(row["created_at"])).total_seconds() / 3600
            assert hours == pytest.approx(14, abs=0.01)
            # The shift is nearly over: 3 s left.
            c.execute(
                text("update web_sessions set expires_at = :at where id = :id"),
                {"at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() + 3)), "id": row["id"]},
            )
        # Busy at the bar until the end: pages, a form POST, a CSRF-carrying API write.
        assert tab.page("/").status_code == 200
        assert tab.post("/alerts/999999/ack", {"next": "/alerts"}).headers["location"] == "/alerts"
        assert tab.http.post("/api/alerts/999999/ack", headers={"X-CSRF-Token": tab.token}, json={}).status_code == 404
        with engine.connect() as c:
            after = c.execute(text("select expires_at from web_sessions where id = :id"), {"id": row["id"]}).scalar_one()
        assert _dt(after) < _dt(row["expires_at"])  # ...but the session's end did not move
        time.sleep(3.5)
        assert tab.http.get("/").status_code == 303
        assert tab.http.get("/api/tables").status_code == 401
    finally:
        engine.dispose()


def test_the_cookie_holds_a_random_id_whose_hash_only_is_stored(lavos: ServedHub) -> None:
    tab = Tab(lavos).login("fero")
    payload = json.loads(base64.b64decode(tab.cookie.split(".")[0]))
    assert "user" not in payload and set(payload) <= {"sid", "csrf", "flash"}  # no username in the cookie any more
    engine = create_engine(lavos.db_url)
    try:
        with engine.connect() as c:
            hashes = set(c.execute(text("select id_hash from web_sessions")).scalars())
    finally:
        engine.dispose()
    assert hashlib.sha256(payload["sid"].encode()).hexdigest() in hashes
    raw = b"".join(p.read_bytes() for p in some(lavos.workdir).glob("lavos.db*"))
    assert payload["sid"].encode() not in raw


def _dt(value: Any) -> datetime:
    from datetime import datetime

    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
