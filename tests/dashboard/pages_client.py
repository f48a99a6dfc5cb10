"""The pages over a real CentralService, as a browser sees them: cookie login, CSRF token from the page.

A fixture module shared by the manager-page tests (members, reports, monitoring); import `pages`
from it. Three clients on one app: a manager, a staff user and an anonymous visitor, each with
its own cookie jar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx
import pytest
from fastapi.testclient import TestClient

from broker.users import create_user
from dashboard.api import create_app
from dashboard.web import mount_web
from tests.dashboard.conftest import CHEAP, MANAGER, PASSWORD, STAFF

_TOKEN = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


def csrf_of(client: TestClient) -> str:
    """This client's CSRF token, as the page hands it to forms."""
    html = client.get("/login", follow_redirects=True).text  # logged in: lands on a page with the same meta tag
    found = _TOKEN.search(html)
    assert found, "no csrf-token meta tag on the page"
    return found.group(1)


def logged_in(app, username: str) -> TestClient:  # type: ignore[no-untyped-def]
    client = TestClient(app, follow_redirects=False)
    r = client.post("/login", data={"username": username, "password": PASSWORD, "csrf_token": csrf_of(client), "next": "/"})
    assert r.status_code == 303, r.text
    return client


@dataclass
class Pages:
    manager: TestClient
    staff: TestClient
    anon: TestClient
    service: object
    clock: object

    def token(self, client: TestClient | None = None) -> str:
        return csrf_of(client or self.manager)

    def post(self, path: str, data: dict | None = None, *, client: TestClient | None = None, files=None,  # type: ignore[no-untyped-def]
             with_csrf: bool = True) -> httpx.Response:
        client = client or self.manager
        form = dict(data or {})
        if with_csrf:
            form["csrf_token"] = self.token(client)
        return client.post(path, data=form, files=files)

    def page(self, path: str, status: int = 200, *, client: TestClient | None = None) -> str:
        r = (client or self.manager).get(path)
        assert r.status_code == status, f"GET {path} → {r.status_code} {r.text[:2000]}"
        return r.text

    def follow(self, r: httpx.Response, status: int = 200) -> str:
        """The page a 303 after a POST lands on (with its flash message)."""
        assert r.status_code == 303, f"{r.status_code} {r.text[:2000]}"
        return self.page(r.headers["location"], status)

    def refused_to_others(self, method: str, path: str, data: dict | None = None) -> None:
        """Staff get the 403 page; an anonymous visitor is sent to log in (and nothing happens)."""
        if method == "GET":
            staff, anon = self.staff.get(path), self.anon.get(path)
        else:
            staff = self.post(path, data, client=self.staff)
            anon = self.anon.post(path, data={**(data or {}), "csrf_token": csrf_of(self.anon)})
        assert staff.status_code == 403, f"staff {method} {path} → {staff.status_code}"
        assert anon.status_code == 303 and anon.headers["location"].startswith("/login"), f"anonymous {method} {path} → {anon.status_code}"


@pytest.fixture
def pages(service, clock) -> Pages:  # type: ignore[no-untyped-def]
    with service.store.session() as db:
        create_user(db, STAFF, PASSWORD, "staff", actor="test", hasher=CHEAP)
        create_user(db, MANAGER, PASSWORD, "manager", actor="test", hasher=CHEAP)
    app = mount_web(create_app(service), service)
    yield Pages(logged_in(app, MANAGER), logged_in(app, STAFF), TestClient(app, follow_redirects=False), service, clock)
