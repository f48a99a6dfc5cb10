"""Issue 9 item 9: one role table (dashboard.access) for the pages and the API, and every route obeys it.

Walks every route of both apps (dashboard.api.app.api_routes(), dashboard.web.app.web_routes())
against the hub served as `lavos server` serves it, on a real socket (served_lavos, in this
process), as anonymous, staff and manager, and checks each answer against the capability the
route declares and the role the table gives it. A route that declares no capability and is not
public fails the walk. On the original code staff read the
member export, the registry with notes and card UIDs, closed sessions (revenue), closed alerts and
the nodes through the API, while the matching pages were the manager's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from fastapi.routing import APIRoute

from dashboard import access
from dashboard.api.app import api_routes
from dashboard.web.app import web_routes
from tests.support import httpc
from tests.support.matching import found
from tests.support.server import Served
from tests.support.web import served_lavos

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto
    from tests.support.web import ServedHub


PASSWORD = "Heslo-na-roly-77"
USERS = {"boss": ("manager", PASSWORD), "jana": ("staff", PASSWORD)}
# Any value: the role is checked before the path is looked at; ids that exist nowhere, so that a
# manager's request that gets through changes nothing.
SAMPLE = {"table_id": "pool-01", "table": "pool-01", "username": "nobody-x", "uid": "0a0b0c0d", "name": "x"}
_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
LAST = {("POST", "/logout")}  # it ends the walker's own session
# The query that asks only for the route's own capability; what more it can ask is tested below.
QUERY = {("GET", "/api/sessions"): "?open=true"}


def _get(server: Served, path: str, user: str) -> httpx.Response:
    return httpc.get(server.base_url + path, auth=(user, PASSWORD), timeout=30)


def _concrete(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: SAMPLE.get(m.group(1), "999999"), path)


def capability(route: APIRoute) -> str | None:
    """The capability a route declares through can()/page_can(), found in its dependency tree."""
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        if dep.call is not None and hasattr(dep.call, "capability"):
            result: str | None = dep.call.capability
            return result
        stack.extend(dep.dependencies)
    return None


ROUTES = [("api", m, p, r) for m, p, r in api_routes()] + [("page", m, p, r) for m, p, r in web_routes()]


def test_every_route_is_in_the_table() -> None:
    missing = [f"{m} {p}" for _, m, p, r in ROUTES if (m, p) not in access.PUBLIC_ROUTES and capability(r) is None]
    unknown = [
        f"{m} {p}: {capability(r)}" for _, m, p, r in ROUTES if capability(r) is not None and capability(r) not in access.CAPABILITIES
    ]
    public_with_a_role = [f"{m} {p}" for _, m, p, r in ROUTES if (m, p) in access.PUBLIC_ROUTES and capability(r) is not None]
    assert (missing, unknown, public_with_a_role) == ([], [], [])
    served = {(m, p) for _, m, p, _ in ROUTES}
    assert access.PUBLIC_ROUTES - served == {("GET", "/openapi.json")}  # the schema is FastAPI's own route


def test_the_rules_the_bar_needs() -> None:
    # Staff run the evening; the registry, revenue, history, nodes and accounts are the manager's.
    staff = {c for c, cap in access.CAPABILITIES.items() if cap.role == "staff"}
    # A table out of service (cleaning, repair) and its light by hand are the bar's call too.
    assert staff == {
        "floor.view",
        "games.run",
        "games.open",
        "alerts.open",
        "foosball.checkin",
        "members.search",
        "account.own",
        "tables.service",
        "tables.light",
        "games.void",
        "bills.today",
        # The till: the bar runs tabs, takes money and closes its day; changing money already
        # taken, the product list, past days and the eKasa client are the manager's.
        "tabs.run",
        "payments.take",
        "wallet.run",
        "day.run",
        "ekasa.run",
        # Tournaments: the bar runs the day (check-in, the draw, results); creating one, forcing a
        # correction and exports are the manager's.
        "tournaments.view",
        "tournaments.run",
        # Bookings (issue 20): the bar takes phone bookings, seats them and runs the waiting list;
        # blocks and what happens to a paid deposit are the manager's.
        "bookings.read",
        "bookings.run",
        "bookings.availability",
        # Shifts (issue 32): the bar clocks itself in and out and counts the drawer at a shift
        # change; everyone's shifts, corrections and the hours are the manager's.
        "shifts.own",
        # The stock (issue 32): the bar sees the levels and writes off what broke.
        "stock.view",
    }


@pytest.fixture(scope="module")
def lavos(mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served_lavos(mosquitto, tmp_path_factory.mktemp("roles"), dict(USERS)) as server:
        yield server


class Walker:
    def __init__(self, server: Served, username: str | None) -> None:
        self.username = username
        self.http = httpc.Client(base_url=server.base_url, timeout=60, follow_redirects=False)
        self.auth = (username, PASSWORD) if username is not None else None
        r = self.http.get("/login")
        if username is not None:
            token = found(_CSRF, r.text).group(1)
            r = self.http.post("/login", data={"username": username, "password": PASSWORD, "csrf_token": token})
            assert r.status_code == 303, r.text
            r = self.http.get("/")
        self.token = found(_CSRF, r.text).group(1)

    def call(self, kind: str, method: str, path: str) -> tuple[int, str]:
        url = _concrete(path) + QUERY.get((method, path), "")
        if kind == "api":
            kw: dict[str, Any] = {"json": {}} if method in ("POST", "PATCH", "PUT") else {}
            r = httpc.request(method, self.http.base_url.join(url), auth=self.auth, timeout=60, **kw)
            return r.status_code, ""
        if method == "GET":
            with self.http.stream("GET", url) as r:  # /events never ends: the status is enough
                return r.status_code, r.headers.get("location", "")
        r = self.http.request(method, url, data={"csrf_token": self.token})
        return r.status_code, r.headers.get("location", "")


def _expected(who: str | None, kind: str, cap: str | None) -> str:
    if cap is None:
        return "answers"
    if who is None:
        return "401" if kind == "api" else "login"
    return "answers" if access.allows(USERS[who][0], cap) else "403"


def _verdict(kind: str, status: int, location: str) -> str:
    if status == 401:
        return "401"
    if status == 403:
        return "403"
    if kind == "page" and status == 303 and location.startswith("/login"):
        return "login"
    return "answers"


@pytest.mark.parametrize("who", [None, "jana", "boss"], ids=["anonymous", "staff", "manager"])
def test_every_route_answers_as_the_table_says(lavos: ServedHub, who: Any) -> None:
    walker = Walker(lavos, who)
    wrong = []
    ordered = sorted(ROUTES, key=lambda x: (x[1], x[2]) in LAST)
    for kind, method, path, route in ordered:
        cap = capability(route)
        status, location = walker.call(kind, method, path)
        got, want = _verdict(kind, status, location), _expected(who, kind, cap)
        if cap is None and got in ("answers", "login"):  # public: /logout sends anybody to /login
            continue
        if got != want:
            wrong.append(f"{method} {path} [{cap}] → {status} {location}: expected {want}")
    assert wrong == []


@pytest.fixture(scope="module")
def sample_data(lavos: ServedHub) -> Any:
    member = lavos.api("POST", "/api/members", "boss", status=201, json={"name": "Ján Tajný", "note": "dlží 20 €"})
    lavos.api("POST", f"/api/members/{member['id']}/cards", "boss", status=201, json={"uid": "04a1b2c3"})
    return member


@pytest.mark.parametrize(
    "path",
    [
        "/api/sessions?open=false",
        "/api/sessions",
        "/api/sessions?day=2026-11-30",
        "/api/alerts?open=false",
        "/api/members/export",
        "/api/nodes",
    ],
)
def test_staff_cannot_read_history_or_the_registry_through_the_api(lavos: ServedHub, path: Any) -> None:
    assert _get(lavos, path, "jana").status_code == 403
    assert _get(lavos, path, "boss").status_code == 200


def test_staff_get_what_the_bar_needs(lavos: ServedHub) -> None:
    for path in ("/api/sessions?open=true", "/api/alerts", "/api/alerts?open=true", "/api/tables", "/api/foosball"):
        assert _get(lavos, path, "jana").status_code == 200, path


def test_staff_find_members_by_name_without_notes_or_cards(lavos: ServedHub, sample_data: Any) -> None:
    found = lavos.api("GET", "/api/members?q=tajny", "jana")
    assert [m["name"] for m in found] == ["Ján Tajný"]
    assert set(found[0]) == {"id", "name", "kind", "active", "fee_paid", "fee_year"}
    text = _get(lavos, "/api/members?q=tajny", "jana").text
    assert "04a1b2c3" not in text and "dlží" not in text
    full = lavos.api("GET", "/api/members?q=tajny", "boss")
    assert full[0]["cards"] == ["04a1b2c3"] and full[0]["note"] == "dlží 20 €"
