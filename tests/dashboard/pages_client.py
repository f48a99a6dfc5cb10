"""The pages over a real Hub, as a browser sees them: cookie login, CSRF token from the page.

A fixture module shared by the manager-page tests (members, reports, monitoring); import `pages`
from it. Three clients on one app: a manager, a staff user and an anonymous visitor, each with
its own cookie jar.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.dashboard.conftest import CHEAP, MANAGER, PASSWORD, STAFF
from tests.support.web import Browser, add_users, bound_app

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from tests.dashboard.conftest import FakeClock


@dataclass
class Pages:
    browsers: dict[str, Browser]  # "manager", "staff", "anon": each its own cookie jar
    service: Hub
    clock: FakeClock

    @property
    def manager(self) -> TestClient:
        return self.browsers["manager"].client

    @property
    def staff(self) -> TestClient:
        return self.browsers["staff"].client

    @property
    def anon(self) -> TestClient:
        return self.browsers["anon"].client

    def token(self, client: TestClient | None = None) -> str:
        """The CSRF token the page gave this client (it changes only at login and logout)."""
        browser = next(b for b in self.browsers.values() if b.client is (client or self.manager))
        if not browser.token:
            browser.get("/login", follow_redirects=True)
        return browser.token

    def post(
        self,
        path: str,
        data: dict[str, Any] | None = None,
        *,
        client: TestClient | None = None,
        files: Any = None,
        with_csrf: bool = True,
    ) -> httpx.Response:
        client = client or self.manager
        form = dict(data or {})
        if with_csrf:
            form["csrf_token"] = self.token(client)
        result: httpx.Response = client.post(path, data=form, files=files)
        return result

    def page(self, path: str, status: int = 200, *, client: TestClient | None = None) -> str:
        r = (client or self.manager).get(path)
        assert r.status_code == status, f"GET {path} → {r.status_code} {r.text[:2000]}"
        result: str = r.text
        return result

    def follow(self, r: httpx.Response, status: int = 200) -> str:
        """The page a 303 after a POST lands on (with its flash message)."""
        assert r.status_code == 303, f"{r.status_code} {r.text[:2000]}"
        return self.page(r.headers["location"], status)

    def refused_to_others(self, method: str, path: str, data: dict[str, Any] | None = None) -> None:
        """Staff get the 403 page; an anonymous visitor is sent to log in (and nothing happens)."""
        if method == "GET":
            staff, anon = self.staff.get(path), self.anon.get(path)
        else:
            staff = self.post(path, data, client=self.staff)
            anon = self.post(path, data, client=self.anon)
        assert staff.status_code == 403, f"staff {method} {path} → {staff.status_code}"
        assert anon.status_code == 303 and anon.headers["location"].startswith("/login"), f"anonymous {method} {path} → {anon.status_code}"


def logged_in(app: Any, username: str) -> Browser:
    browser = Browser(app)
    browser.login(username, PASSWORD)
    return browser


@pytest.fixture
def pages(service: Hub, clock: FakeClock) -> Iterator[Pages]:
    add_users(service, {STAFF: "staff", MANAGER: "manager"}, PASSWORD, CHEAP)
    app = bound_app(service)
    yield Pages({"manager": logged_in(app, MANAGER), "staff": logged_in(app, STAFF), "anon": Browser(app)}, service, clock)
