"""Issue 4, must-show 3: every page refuses an anonymous visitor (to the login page), and staff can
neither open a manager page nor do a manager action (403), against the real server process.

The routes come from the app itself (dashboard.web.app.web_routes, dashboard.api.app.api_routes),
and each page route must be classified below: a new page that is not fails the first test, so
it cannot slip through unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from dashboard.api.app import api_routes
from dashboard.web.app import web_routes
from tests.dashboard.browser.web import log_in
from tests.dashboard.conftest import MANAGER, PASSWORD, STAFF
from tests.support import httpc
from tests.support.server import Served

if TYPE_CHECKING:
    from tests.support.web import ServedHub


PUBLIC = {("GET", "/login"), ("POST", "/login"), ("POST", "/logout"), ("POST", "/lang")}
# A tournament's TV and the players' phones (issue 21): no login, the revocable link is the key;
# a link nobody was given is a 404 (tests/tournaments/test_tournament_pages.py).
PUBLIC |= {("GET", "/tv/{token}"), ("GET", "/tv/{token}/board"), ("GET", "/tv/{token}/events")}
STAFF_PAGES = {
    "/",
    "/floor/rooms",
    "/tables/{table_id}",
    "/tables/{table_id}/card",
    "/sessions/{game_id}/bill",
    "/bills",
    "/alerts",
    "/alerts/banner",
    "/foosball",
    "/foosball/tables",
    "/events",
    "/account/password",
    "/day",  # the business day's close-out (pages_day)
    "/day/{day}/report",
    "/day/figures",
    "/tabs/{tab_id}/pay",
    "/receipts/{payment_id}",
    "/ekasa",  # eKasa (issue 12, m4)
    "/tabs/{tab_id}",  # the till: tabs
    "/sessions/{game_id}/tab",
    "/bookings",  # bookings and the waiting list (issue 20)
    "/bookings/new",
    "/waiting",
    "/waiting/panel",
    "/waiting/link",  # the top bar's link while a party waits (issue 29)
    "/tournaments",  # the Lavosliga (issue 21): the day for staff, a match's score on a phone
    "/tournaments/season",
    "/tournaments/{tournament_id}",
    "/tournaments/{tournament_id}/board",
    "/tournaments/{tournament_id}/matches/{match}",
    "/tournaments/{tournament_id}/print",  # the A4 bracket: the director on a Sunday is usually staff (issue 29, item 34)
    "/shift",  # one's own shift and the drawer at a shift change (issue 32)
    "/stock",  # the bar's stock (issue 32): the levels, and write-offs of what broke
    "/stock/write-offs",
    "/wallet",  # members' credit and packages (issue 32): the bar sees them and sells them
    "/wallet/{member_id}",
}
STAFF_ACTIONS = {
    "/tables/{table_id}/start",
    "/sessions/{game_id}/stop",
    "/sessions/{game_id}/pause",
    "/sessions/{game_id}/resume",
    "/sessions/{game_id}/transfer",
    "/sessions/{game_id}/extend",
    "/sessions/{game_id}/extras",
    "/alerts/{alert_id}/ack",
    "/account/password",
    "/tables/{table_id}/out-of-service",
    "/tables/{table_id}/in-service",
    "/tables/{table_id}/light",
    "/foosball/{table}/checkin",
    "/foosball/{table}/checkout",
    "/day/open",
    "/day/close",
    "/tabs/{tab_id}/pay",
    "/receipts/{payment_id}/print",
    "/ekasa/receipts/{payment_id}/paragon",  # eKasa (issue 12, m4)
    "/tabs",  # the till: tabs (a walk-in), items, voids before payment, merge, split
    "/tabs/{tab_id}/items",
    "/tabs/{tab_id}/items/{item_id}/void",
    "/tabs/{tab_id}/merge",
    "/tabs/{tab_id}/split",
    "/tabs/{tab_id}/split/cancel",
    "/bookings/new",  # bookings and the waiting list (issue 20)
    "/bookings/{booking_id}/arrived",
    "/bookings/{booking_id}/confirm",
    "/bookings/{booking_id}/cancel",
    "/bookings/{booking_id}/no-show",
    "/bookings/{booking_id}/move",
    "/bookings/calendar",
    "/bookings/calendar/revoke",
    "/waiting",
    "/waiting/{party_id}/offer",
    "/waiting/{party_id}/take",
    "/waiting/{party_id}/decline",
    "/waiting/{party_id}/leave",
    "/tournaments/{tournament_id}/entrants",  # the Lavosliga (issue 21)
    "/tournaments/{tournament_id}/entrants/{entrant_id}/check-in",
    "/tournaments/{tournament_id}/entrants/{entrant_id}/remove",
    "/tournaments/{tournament_id}/draw",
    "/tournaments/{tournament_id}/start-now",
    "/tournaments/{tournament_id}/tv-link",
    "/tournaments/{tournament_id}/tv-link/revoke",
    "/tournaments/{tournament_id}/matches/{match}/rack",
    "/tournaments/{tournament_id}/matches/{match}/start",
    "/tournaments/{tournament_id}/matches/{match}/call",
    "/tournaments/{tournament_id}/matches/{match}/result",
    "/tournaments/{tournament_id}/matches/{match}/recall",
    "/shift/in",  # clocking oneself in and out, the drawer counted at a shift change (issue 32)
    "/shift/out",
    "/shift/drawer",
    "/stock/write-offs",  # the bar's stock (issue 32): what broke, expired or staff drank
    "/wallet/{member_id}/top-up",  # credit sold, a package sold, a lesson taken, a bill paid from them (issue 32)
    "/wallet/{member_id}/package",
    "/wallet/{member_id}/packages/{package_id}/lesson",
    "/tabs/{tab_id}/pay/credit",
    "/tabs/{tab_id}/pay/package",
}
MANAGER_PAGES = {
    "/members",
    "/members/export.csv",
    "/members/import",
    "/members/{member_id}",
    "/members/{member_id}/capture",
    "/monitoring",
    "/monitoring/nodes-fragment",
    "/reports",
    "/reports/{name}.csv",
    "/reports/lavos.xlsx",
    "/users",
    "/users/{username}",
    "/days",  # closed days and their exports (pages_day)
    "/days/{day}.csv",
    "/days/{day}.xlsx",
    "/products",  # the till: the product list
    "/notifications",  # push notifications (issue 13, n1)
    "/closing",  # stop all games at closing (issue 19, item 10)
    "/tournaments/{tournament_id}/export.csv",  # the matches for a spreadsheet (issue 29, item 35)
    "/shifts",  # everyone's shifts, the shift report, a shift's history, the hours (issue 32)
    "/shifts/{shift}",
    "/shifts/hours.csv",
    "/stock/deliveries",  # the stock's money (issue 32): purchase prices, counts, recipes, the report
    "/stock/count",
    "/stock/recipes",
    "/stock/report",
    "/stock/report/{export}.csv",
    "/stock/report.xlsx",
}
MANAGER_ACTIONS = {
    "/bills/{game_id}/correct",
    "/payments/{payment_id}/reverse",
    "/members",
    "/members/import",
    "/members/{member_id}",
    "/members/{member_id}/fee",
    "/members/{member_id}/cards",
    "/members/{member_id}/cards/remove",
    "/users",
    "/users/{username}/password",
    "/users/{username}/role",
    "/users/{username}/active",
    "/users/{username}/unlock",
    "/users/{username}/tokens/{token_id}/revoke",
    "/users/{username}/sessions/{login_id}/end",
    "/users/{username}/sessions/end",
    "/ekasa/settings",  # eKasa (issue 12, m4)
    "/ekasa/receipts/{payment_id}/retry",
    "/products",  # the till: the product list
    "/products/{product_id}",
    "/notifications/targets",  # push notifications (issue 13, n1)
    "/notifications/targets/{target_id}",
    "/notifications/targets/{target_id}/remove",
    "/notifications/targets/{target_id}/test",
    "/bookings/{booking_id}/deposit",  # a deposit kept or given back, blocks (issue 20)
    "/bookings/blocks",
    "/bookings/blocks/{block_id}/remove",
    "/closing",
    "/tournaments",  # a new tournament (issue 21)
    "/shifts/out",  # ending another's shift, a correction with a reason (issue 32)
    "/shifts/{shift}/correct",
    "/shifts/record",
    "/stock/items",  # the stock (issue 32): items, returns, deliveries, counts, recipes
    "/stock/items/{item_id}",
    "/stock/returns",
    "/stock/deliveries",
    "/stock/count",
    "/stock/recipes/{product_id}",
    "/wallet/{member_id}/refund",  # credit given back, a row undone, with a reason (issue 32)
    "/wallet/{member_id}/entries/{entry_id}/reverse",
}
# Query strings a page needs to answer at all (capture waits for a card tap: not for long here).
QUERIES = {"/members/{member_id}/capture": "?table=foos-01&wait=0.1", "/reports/{name}.csv": "", "/shifts/hours.csv": "?month=2026-12"}
STREAMS = {"/events"}  # answers and then never ends: only its status is read
FORBIDDEN_TEXT = "pre vedúceho"  # "for the manager": the 403 page for a role, not the one for a stale form


def _classified() -> set[tuple[str, str]]:
    return PUBLIC | {("GET", p) for p in STAFF_PAGES | MANAGER_PAGES} | {("POST", p) for p in STAFF_ACTIONS | MANAGER_ACTIONS}


def test_every_page_route_is_classified() -> None:
    routes = {(method, path) for method, path, _ in web_routes() if method != "HEAD"}
    assert routes - _classified() == set(), "new page routes: add each to the staff or manager sets above"
    assert _classified() - routes == set(), "routes listed here that the app no longer has"


@pytest.fixture(scope="module")
def samples(lavos: Served) -> dict[str, str]:
    """A real id for every path parameter, made through the API."""
    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-03"})["id"]
    mid = lavos.api("POST", "/api/members", MANAGER, status=201, json={"name": "Ambra Tomáš"})["id"]
    tab = lavos.api("GET", f"/api/sessions/{sid}/tab", STAFF)["id"]  # the till: the game's tab, an item, a product
    product = lavos.api("GET", "/api/products", STAFF)[0]["id"]
    item = lavos.api("POST", f"/api/tabs/{tab}/items", STAFF, status=201, json={"product_id": product})["item_id"]
    _, payment_id = _paid_tab(lavos)  # a paid tab of its own: the game's tab above stays open for items
    tournament, entrant = _drawn_tournament(lavos)
    return {
        "tab_id": str(tab),
        "payment_id": str(payment_id),
        "item_id": str(item),
        "product_id": str(product),
        "table_id": "pool-03",
        "table": "foos-01",
        "session_id": str(sid),  # the API's paths keep their parameter's name
        "game_id": str(sid),  # the pages' routes name a game a game
        "login_id": "1",
        "member_id": str(mid),
        "alert_id": "1",
        "name": "revenue",
        "username": STAFF,
        "token_id": "1",
        "target_id": "0",
        "booking_id": "1",  # none made: a staff action on it is a refusal, the role check comes first
        "party_id": "1",
        "block_id": "1",
        "day": lavos.api("GET", "/api/days/current", STAFF)["day"],
        "tournament_id": str(tournament),
        "entrant_id": str(entrant),
        "match": "W1-1",
        "shift": str(lavos.api("POST", "/api/shifts/clock-in", MANAGER, status=201)["id"]),  # the manager's own shift
        "export": "margins",  # the stock report's CSVs (issue 32)
        "package_id": "1",  # none sold: a staff action on it is a refusal, the role check comes first
        "entry_id": "1",
    }


def _drawn_tournament(lavos: Served) -> tuple[int, int]:
    """A tournament of two, drawn (its one match called to its table, free entry): (its id, an entrant)."""
    body = {"name": "Vzorka", "starts_at": "2026-12-06T14:00:00+01:00", "format": "single", "tables": ["pool-08"], "free_entry": True}
    tid = lavos.api("POST", "/api/tournaments", MANAGER, status=201, json=body)["id"]
    entrants = [
        lavos.api("POST", f"/api/tournaments/{tid}/entrants", STAFF, status=201, json={"name": name, "check_in": True})["id"]
        for name in ("Novák", "Kováč")
    ]
    lavos.api("POST", f"/api/tournaments/{tid}/draw", STAFF)
    return tid, entrants[0]


def _paid_tab(lavos: Served) -> tuple[int, int]:
    """A stopped game's tab with a payment on it: (tab id, payment id)."""
    from sqlalchemy import select

    from broker.storage.engine import open_store
    from broker.storage.models import Tab

    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-02"})["id"]
    lavos.api("POST", f"/api/sessions/{sid}/correction", MANAGER, json={"amount_cents": 500, "reason": "vzorka"})
    lavos.api("POST", f"/api/sessions/{sid}/stop", STAFF)
    store = open_store(lavos.db_url)
    try:
        with store.reader() as db:
            tab_id = db.scalar(select(Tab.id).where(Tab.session_id == sid))
            assert tab_id is not None
    finally:
        store.close()
    paid = lavos.api("POST", f"/api/tabs/{tab_id}/payments", STAFF, status=201, json={"method": "card", "amount_cents": 100})
    return tab_id, paid["id"]


def url(path: str, samples: dict[str, str]) -> str:
    filled = re.sub(r"\{(\w+)\}", lambda m: samples[m.group(1)], path)
    return filled + QUERIES.get(path, "")


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf-token" content="([^"]+)"', html) or re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)


class Visitor:
    """A browser-like HTTP client of the real server: cookie session, CSRF token from the pages."""

    def __init__(self, server: Served, username: str | None) -> None:
        self.http = httpc.Client(base_url=server.base_url, timeout=30, follow_redirects=False)
        self.token = _csrf(self.http.get("/login").text)
        if username is not None:
            r = self.http.post("/login", data={"username": username, "password": PASSWORD, "csrf_token": self.token})
            assert r.status_code == 303, r.text
            self.token = _csrf(self.http.get("/alerts").text)  # rotated at login

    def get_status(self, path: str) -> httpx.Response:
        with self.http.stream("GET", path) as r:  # a stream never ends: headers are enough
            if r.headers.get("content-type", "").startswith("text/event-stream"):
                return r
            r.read()
            return r

    def post(self, path: str) -> httpx.Response:
        return self.http.post(path, data={"csrf_token": self.token})


@pytest.fixture(scope="module")
def anonymous(lavos: ServedHub) -> Iterator[Visitor]:
    v = Visitor(lavos, None)
    yield v
    v.http.close()


@pytest.fixture(scope="module")
def staff(lavos: ServedHub) -> Iterator[Visitor]:
    v = Visitor(lavos, STAFF)
    yield v
    v.http.close()


@pytest.fixture(scope="module")
def manager(lavos: ServedHub) -> Iterator[Visitor]:
    v = Visitor(lavos, MANAGER)
    yield v
    v.http.close()


def test_an_anonymous_browser_is_sent_to_the_login_page_from_every_page(lavos: ServedHub, samples: dict[str, str], tablet: Any) -> None:
    for path in sorted(STAFF_PAGES | MANAGER_PAGES):
        target = url(path, samples)
        tablet.goto(lavos.base_url + target)
        assert tablet.url.startswith(lavos.base_url + "/login"), f"{target}: the browser stayed on {tablet.url}"
        assert tablet.locator("form.login-box input[name=password]").is_visible(), target


def _session_facts(lavos: Served, samples: dict[str, str]) -> dict[str, Any]:
    """What an action would change (the running bill grows by itself with time, so it is left out)."""
    s = lavos.api("GET", f"/api/sessions/{samples['session_id']}", MANAGER)
    return {k: s[k] for k in ("table", "state", "paused_at", "stopped_at", "prepaid_until", "extras", "member")}


def test_anonymous_actions_go_to_login_and_change_nothing(lavos: ServedHub, samples: dict[str, str], anonymous: Visitor) -> None:
    before = _session_facts(lavos, samples)
    for path in sorted(STAFF_ACTIONS | MANAGER_ACTIONS):
        r = anonymous.post(url(path, samples))  # with a valid (anonymous) CSRF token: the login check refuses it
        assert r.status_code == 303 and r.headers["location"].startswith("/login"), f"POST {path} → {r.status_code}"
    assert _session_facts(lavos, samples) == before


def test_staff_browser_gets_403_on_every_manager_page(lavos: ServedHub, samples: dict[str, str], tablet: Any) -> None:
    log_in(tablet, lavos, STAFF)
    for path in sorted(MANAGER_PAGES):
        response = tablet.goto(lavos.base_url + url(path, samples))
        assert response.status == 403, f"staff opened {path}: {response.status}"
    # The top bar offers staff none of them.
    links = set(tablet.locator(".topbar nav a").evaluate_all("els => els.map(a => a.getAttribute('href'))"))
    assert links and not links & {p for p in MANAGER_PAGES if "{" not in p}, links


def test_staff_open_staff_pages_and_the_manager_opens_manager_pages(samples: dict[str, str], staff: Visitor, manager: Visitor) -> None:
    for path in sorted(STAFF_PAGES):
        assert staff.get_status(url(path, samples)).status_code == 200, path
    for path in sorted(MANAGER_PAGES):
        assert manager.get_status(url(path, samples)).status_code == 200, path


def test_staff_manager_actions_are_403_and_change_nothing(lavos: ServedHub, samples: dict[str, str], staff: Visitor) -> None:
    before = lavos.api("GET", f"/api/members/{samples['member_id']}", MANAGER)
    for path in sorted(MANAGER_ACTIONS):
        r = staff.post(url(path, samples))  # a valid CSRF token: the role check, not the form check, refuses it
        assert r.status_code == 403 and FORBIDDEN_TEXT in r.text, f"staff POST {path} → {r.status_code}"
    assert lavos.api("GET", f"/api/members/{samples['member_id']}", MANAGER) == before


def _needs_manager(dependant: Any) -> bool:
    return any(getattr(d.call, "__name__", "") == "manager_user" or _needs_manager(d) for d in dependant.dependencies)


def test_staff_cookie_cannot_call_manager_api_routes(samples: dict[str, str], staff: Visitor) -> None:
    """The JSON API accepts the dashboard's cookie; the roles hold there too (writes carry the page's CSRF header)."""
    manager_routes = [(m, p) for m, p, route in api_routes() if _needs_manager(route.dependant)]
    assert len(manager_routes) >= 5, manager_routes
    params = {**samples, "alert_id": "1", "member_id": samples["member_id"], "uid": "0a1b2c3d"}
    for method, path in manager_routes:
        target = re.sub(r"\{(\w+)\}", lambda m: params.get(m.group(1), "1"), path)
        r = staff.http.request(
            method, target, headers={"X-CSRF-Token": staff.token}, params={"from": "2026-11-01"} if "reports" in path else None
        )
        # The API's role refusal says so; its CSRF refusal would be a 403 too, so the reason is checked.
        assert r.status_code == 403 and "needs the manager role" in r.json()["detail"], (
            f"staff {method} {target} → {r.status_code} {r.text[:200]}"
        )
