"""Logging in and out, lockout, CSRF on every form, roles on every page and action, cookies and headers."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from fastapi.routing import APIRoute

from broker.accounts.auth_checks import gate
from broker.accounts.login_throttle import LoginThrottle, ThrottlePolicy
from broker.floor.games import StartGame
from dashboard.web.app import web_routes
from tests.dashboard.conftest import CHEAP, MANAGER, PASSWORD, STAFF, sqlite_only
from tests.support.matching import found
from tests.support.web import Browser, add_users, web_app

if TYPE_CHECKING:
    from pathlib import Path

    from fastapi.applications import FastAPI

    from broker.hall.hub import Hub


# Open to anybody: logging in needs a page before the login, and so does choosing the language.
PUBLIC = {("GET", "/login"), ("POST", "/login"), ("POST", "/logout"), ("POST", "/lang")}
# A tournament's TV and players' phones: the link's token is the key (tests/tournaments/test_tournament_pages.py).
PUBLIC |= {("GET", "/tv/{token}"), ("GET", "/tv/{token}/board"), ("GET", "/tv/{token}/events")}
SAMPLE = {"table_id": "pool-01", "session_id": "1", "alert_id": "1"}


@pytest.fixture
def app(service: Hub, tmp_path: Path) -> FastAPI:
    add_users(service, {STAFF: "staff", MANAGER: "manager"}, PASSWORD, CHEAP)
    return web_app(service, data_dir=tmp_path)


def _concrete(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: SAMPLE.get(m.group(1), "x"), path)


def _role(route: APIRoute) -> str | None:
    """The role a route demands through require_page, found in its dependency tree."""
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        name = getattr(dep.call, "__name__", "")
        if name.endswith("_page"):
            return name.removesuffix("_page")
        stack.extend(dep.dependencies)
    return None


def _routes(method: str | None = None) -> list[tuple[str, str, APIRoute]]:
    return [(m, p, r) for m, p, r in web_routes() if (m, p) not in PUBLIC and (method is None or m == method)]


def test_every_route_but_login_demands_a_role() -> None:
    missing = [f"{m} {p}" for m, p, r in _routes() if _role(r) is None]
    assert not missing, f"routes without require_page: {missing}"


@sqlite_only
def test_anonymous_is_sent_to_login_from_every_page_and_comes_back(app: FastAPI) -> None:
    b = Browser(app)
    for _method, path, _ in _routes("GET"):
        r = b.get(_concrete(path))
        assert r.status_code == 303, f"GET {path} → {r.status_code}"
        assert r.headers["location"].startswith("/login"), r.headers["location"]
    r = b.get("/foosball")
    assert r.headers["location"] == "/login?next=/foosball"
    for _method, path, _ in _routes("POST"):  # with a valid token: the login check itself refuses
        r = b.post(_concrete(path), {})
        assert r.status_code == 303 and r.headers["location"].startswith("/login"), f"POST {path} → {r.status_code}"
    b.get("/login?next=/foosball")
    r = b.post("/login", {"username": STAFF, "password": PASSWORD, "next": "/foosball"})
    assert r.headers["location"] == "/foosball"


@sqlite_only
def test_staff_get_403_on_manager_pages_and_actions(app: FastAPI) -> None:
    b = Browser(app)
    b.login(STAFF, PASSWORD)
    manager_routes = [(m, p) for m, p, r in _routes() if _role(r) == "manager"]
    for method, path in manager_routes:
        r = b.get(_concrete(path)) if method == "GET" else b.post(_concrete(path), {})
        assert r.status_code == 403, f"{method} {path} → {r.status_code}"
        assert "vedúceho" in r.text  # the Slovak 403 page, not a bare error
    manager = Browser(app)
    manager.login(MANAGER, PASSWORD)
    for method, path in manager_routes:
        if method == "GET" and "{" not in path:
            assert manager.get(path).status_code == 200, path
    # Staff see no manager links in the top bar.
    nav: Callable[[str], str] = lambda html: found(r'<nav class="nav">(.*?)</nav>', html, re.S).group(1)  # noqa: E731
    manager_links = [p for m, p in manager_routes if m == "GET" and "{" not in p]
    staff_nav, manager_nav = nav(b.get("/").text), nav(manager.get("/").text)
    for p in manager_links:
        assert f'href="{p}"' not in staff_nav
    assert 'href="/alerts"' in staff_nav and 'href="/alerts"' in manager_nav


@sqlite_only
def test_every_form_post_without_the_token_is_refused(app: FastAPI, service: Hub) -> None:
    b = Browser(app)
    b.login(MANAGER, PASSWORD)
    sid = service.execute(StartGame(table="pool-02", actor="test"))
    for _method, path, _ in [*_routes("POST"), *[x for x in web_routes() if x[0] == "POST" and (x[0], x[1]) in PUBLIC]]:
        concrete = _concrete(path).replace("/sessions/1/", f"/sessions/{sid}/")
        r = b.post(concrete, {"next": "/"}, csrf=False)
        assert r.status_code == 403, f"POST {path} without token → {r.status_code}"
        r = b.post(concrete, {"next": "/", "csrf_token": "forged" * 8}, csrf=False)
        assert r.status_code == 403, f"POST {path} with a wrong token → {r.status_code}"
    assert service.open["pool-02"].id == sid  # nothing was stopped by the refused posts


@sqlite_only
def test_login_sets_a_signed_http_only_lax_cookie_and_logout_ends_it(app: FastAPI) -> None:
    b = Browser(app)
    b.get("/login")
    r = b.post("/login", {"username": STAFF, "password": PASSWORD, "next": "//evil.example/x"})
    assert r.headers["location"] == "/"  # never off the site
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "secure" not in cookie
    assert b.get("/").status_code == 200
    b.get("/")
    assert b.post("/logout").headers["location"] == "/login"
    assert b.get("/").status_code == 303


@sqlite_only
def test_cookie_is_secure_over_https_or_when_configured(service: Hub, tmp_path: Path) -> None:
    add_users(service, {STAFF: "staff"}, PASSWORD, CHEAP)
    over_https = Browser(web_app(service, data_dir=tmp_path), base_url="https://testserver")
    over_https.get("/login")
    r = over_https.post("/login", {"username": STAFF, "password": PASSWORD})
    assert "secure" in r.headers["set-cookie"].lower()
    forced = Browser(web_app(service, data_dir=tmp_path, https_cookies=True))
    assert "secure" in forced.get("/login").headers["set-cookie"].lower()


@sqlite_only
def test_wrong_passwords_then_throttled_even_for_the_right_one(app: FastAPI, service: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    # The throttle's clock stands still: the first wait is 1 s, which a busy machine spent before
    # the right password arrived (CI: 303, logged in). How the waits pass is test_login_throttle's.
    monkeypatch.setattr(gate(service.store), "throttle", LoginThrottle(clock=lambda: 1000.0))
    b = Browser(app)
    b.get("/login")
    r = b.post("/login", {"username": STAFF, "password": "zle-heslo"})
    assert r.status_code == 401 and "Nesprávne meno alebo heslo" in r.text
    for _ in range(ThrottlePolicy().account_free):
        b.post("/login", {"username": STAFF, "password": "zle-heslo"})
    r = b.post("/login", {"username": STAFF, "password": PASSWORD})
    assert r.status_code == 429 and "Príliš veľa neúspešných pokusov z tohto zariadenia" in r.text and "požiadajte vedúceho" in r.text
    assert re.search(r"o \d+ sekund[uy]? alebo", r.text) and 0 < int(r.headers["retry-after"]) < 60
    assert b.get("/").status_code == 303  # still not logged in


@sqlite_only
def test_pages_carry_security_headers(app: FastAPI) -> None:
    b = Browser(app)
    b.login(STAFF, PASSWORD)
    for path in ("/login", "/", "/static/app.css"):
        h = b.get(path).headers
        assert "default-src 'self'" in h["content-security-policy"], path
        assert "unsafe-inline" not in h["content-security-policy"]
        assert h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff"
        assert h["referrer-policy"]


@sqlite_only
def test_the_cookie_secret_is_made_private_once_and_kept(service: Hub, tmp_path: Path) -> None:
    web_app(service, data_dir=tmp_path)
    secret = tmp_path / "web-secret"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600
    first = secret.read_text()
    web_app(service, data_dir=tmp_path)
    assert secret.read_text() == first


@sqlite_only
def test_json_api_takes_the_cookie_session_but_writes_only_with_the_header(app: FastAPI) -> None:
    b = Browser(app)
    b.login(STAFF, PASSWORD)
    assert b.client.get("/api/members?q=x").status_code == 200
    assert b.client.post("/api/sessions", json={"table": "pool-03"}).status_code == 403
    r = b.client.post("/api/sessions", json={"table": "pool-03"}, headers={"X-CSRF-Token": b.token})
    assert r.status_code == 201, r.text
    anonymous = Browser(app)
    assert anonymous.client.get("/api/tables").status_code == 401


@sqlite_only
def test_an_ended_login_says_why_and_leads_back_to_the_form_it_sent(app: FastAPI, service: Hub) -> None:
    """Issue 19, item 17: a form sent after the login ended (a manager ended it, or its 14 h are
    over) changes nothing, the login page says why, and logging in again leads back to the page of
    the form (app.js puts back what was typed: tests/dashboard/browser/test_users_page.py)."""
    from sqlalchemy import update

    from broker.people.accounts import EndLogins
    from broker.storage.models import Login
    from tests.support.hub import on_writer

    b = Browser(app)
    b.login(STAFF, PASSWORD)
    b.get("/tables/pool-03")
    service.execute(EndLogins(username=STAFF, actor=MANAGER))
    r = b.post("/tables/pool-03/start", {"card_uid": "0a1b2c3d"}, headers={"referer": "http://testserver/tables/pool-03"})
    assert r.status_code == 303 and r.headers["location"] == "/login?next=/tables/pool-03"
    assert "pool-03" not in service.open  # nothing started
    page = b.get(r.headers["location"]).text
    assert "Vaše prihlásenie vypršalo alebo ho ukončil vedúci" in page and 'name="next" value="/tables/pool-03"' in page
    r = b.post("/login", {"username": STAFF, "password": PASSWORD, "next": "/tables/pool-03"})
    assert r.headers["location"] == "/tables/pool-03"
    b.get("/tables/pool-03")
    b.post("/logout")
    assert "vypršalo" not in b.get("/login").text  # logged out by oneself: nothing to explain

    # The 14 hours are over: the same; a Referer from another site leads to the tables, not there.
    b.login(STAFF, PASSWORD)
    on_writer(service, lambda db: db.execute(update(Login).where(Login.username == STAFF).values(expires_at=Login.created_at)))
    r = b.post("/tables/pool-03/start", {}, headers={"referer": "https://evil.example/tables/pool-03"})
    assert r.headers["location"] == "/login" and "vypršalo" in b.get("/login").text

    # `next` is only ever a path of this site.
    for evil in ("//evil.example/x", "https://evil.example/x", "/\\evil.example", "http:/evil.example"):
        assert b.get(f"/login?next={evil}").text.count('name="next" value="/"') == 1, evil
        assert b.post("/login", {"username": STAFF, "password": PASSWORD, "next": evil}).headers["location"] == "/", evil
        b.get("/")  # the token changes at login
        b.post("/logout")
