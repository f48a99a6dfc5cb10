"""The centre's page logins live on the server, as a hall's dashboard logins do (issue 29): the cookie
holds only a random id, logging out ends every login of that person (a copied cookie too), and a
new password (`lavos central add-user` again) ends them all; a login lasts 12 h at most."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from broker.central.accounts import add_hall, add_user
from broker.central.service import Central
from broker.storage.engine import open_store
from broker.storage.models import CentralLogin
from dashboard.web.central.app import SESSION_COOKIE, build_central_app
from tests.support.sqlite_template import CHEAP

if TYPE_CHECKING:
    from fastapi.applications import FastAPI

    from tests.support.postgres import PostgresCluster


@pytest.fixture
def centre(postgres_cluster: PostgresCluster, postgres_template: str) -> Iterator[tuple[FastAPI, Central]]:
    url = postgres_cluster.create_database(template=postgres_template)
    store = open_store(url)
    with store.session() as db:
        add_hall(db, "a", "Lavos Krasňany")
        add_user(db, "jan", "manager-pass", "hall_manager", "a", CHEAP)
        add_user(db, "eva", "operator-pass", "operator", None, CHEAP)
    central = Central(store, hasher=CHEAP)
    app = build_central_app(central, secret="s")
    yield app, central
    store.close()
    postgres_cluster.drop_database(url)


def _logged_in(app: Any, user: str, password: str) -> TestClient:
    client = TestClient(app, follow_redirects=False)
    csrf = client.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]
    r = client.post("/login", data={"username": user, "password": password, "csrf_token": csrf, "next": "/"})
    assert r.status_code == 303 and r.headers["location"] == "/"
    return client


def _copy(app: Any, client: TestClient) -> TestClient:
    """Another browser holding the same cookie (copied off a shared PC, or stolen)."""
    other = TestClient(app, follow_redirects=False)
    other.cookies.set(SESSION_COOKIE, client.cookies[SESSION_COOKIE])
    return other


def _signed_in(client: TestClient) -> bool:
    page, api = client.get("/"), client.get("/api/central/halls")
    assert (page.status_code == 200) == (api.status_code == 200), (page.status_code, api.status_code)
    assert page.status_code in (200, 303) and api.status_code in (200, 401)
    result: bool = page.status_code == 200
    return result


def _csrf(client: TestClient) -> str:
    result: str = client.get("/").text.split('name="csrf_token" value="')[1].split('"')[0]
    return result


def test_logout_and_a_new_password_end_a_copied_cookie_too_and_the_cookie_holds_only_a_random_id(centre: tuple[FastAPI, Central]) -> None:
    app, central = centre
    jan = _logged_in(app, "jan", "manager-pass")
    copy, other_tab = _copy(app, jan), _logged_in(app, "jan", "manager-pass")
    eva = _logged_in(app, "eva", "operator-pass")
    assert _signed_in(jan) and _signed_in(copy) and _signed_in(other_tab)
    # The cookie names no one: a random id, whose SHA-256 only is stored, 12 h from the login.
    session = json.loads(base64.b64decode(jan.cookies[SESSION_COOKIE].split(".")[0] + "=="))
    assert "jan" not in json.dumps(session) and len(session["login"]) >= 40
    with central.store.reader() as db:
        row = db.scalar(select(CentralLogin).where(CentralLogin.id_hash == hashlib.sha256(session["login"].encode()).hexdigest()))
        assert row is not None and row.username == "jan" and row.expires_at - row.created_at == timedelta(hours=12)
    # Logging out ends every login of that person on the server: the copy and the other tab too.
    assert jan.post("/logout", data={"csrf_token": _csrf(jan)}).status_code == 303
    assert not _signed_in(jan) and not _signed_in(copy) and not _signed_in(other_tab)
    assert copy.get("/").headers["location"] == "/login"
    assert _signed_in(eva)  # someone else's login is theirs
    with central.store.reader() as db:
        assert {r.end_reason for r in db.scalars(select(CentralLogin).where(CentralLogin.username == "jan"))} == {"logout"}
    # A new password (`lavos central add-user jan --password-file ...` again) ends every login too.
    jan = _logged_in(app, "jan", "manager-pass")
    copy = _copy(app, jan)
    assert _signed_in(jan) and _signed_in(copy)
    with central.store.session() as db:
        add_user(db, "jan", "a-new-password", "hall_manager", "a", CHEAP)
    assert not _signed_in(jan) and not _signed_in(copy)
    assert _signed_in(eva)
    assert _signed_in(_logged_in(app, "jan", "a-new-password"))
