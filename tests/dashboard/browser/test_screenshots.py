"""Issue 4, must-show 4 (and issue 11, must-show 1): the floor view, a table's page with a game running
and a free one's start form, a bill, the members, the monitoring page and a report, at tablet and
phone sizes, written to docs/screenshots/ (the README shows them). Issue 19: the pay page (what a
stopped game's tab owes, one tap to pay) and the receipts journal on the bills page.

The hall is put in the state of an evening first, through the API and the simulated nodes, so the
pictures show what staff see: tables playing, paused, on a club card, prepaid, balls counted, a
member checked in at foosball, an alert. Each page must also load without a browser error (a
Content-Security-Policy violation, a failed script) before it is photographed. Issue 29, item 36:
with a party on the waiting list too, the whole floor of that evening is on the tablet's screen.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import TABLES
from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.hall import drop_balls, goal
from tests.dashboard.browser.test_floor_fit import fit, venue_tables, wait_party
from tests.dashboard.browser.web import log_in, wait_live
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.hub import REPO, card_reader_of
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from edge.agent import EdgeNode
    from tests.support.web import ServedHub


SHOTS = REPO / "docs" / "screenshots"
MEMBER_UID = "0a1b2c3d"
SIZES = {"tablet": (TABLET, False), "phone": (PHONE, True)}
# A node at every table but one, so the pictures show tables playing rather than offline, and one offline.
NODE_TABLES = tuple(t for t in TABLES if t != "pool-08")


@pytest.fixture(scope="module")
def evening(lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]]) -> dict[str, int]:
    """Sessions, drops, a check-in and an alert, made the way the bar and the tables make them."""
    year = datetime.now(ZoneInfo("Europe/Bratislava")).year
    member = lavos.api("POST", "/api/members", MANAGER, status=201, json={"name": "Ambra Tomáš"})["id"]
    lavos.api("POST", f"/api/members/{member}/cards", MANAGER, status=201, json={"uid": MEMBER_UID})
    lavos.api("POST", f"/api/members/{member}/fees", MANAGER, status=201, json={"year": year})

    def start(table: str, **body: Any) -> int:
        result: int = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": table, **body})["id"]
        return result

    start("pool-01")
    drop_balls(nodes, "pool-01", 1, 4)
    paused = start("pool-03")
    lavos.api("POST", f"/api/sessions/{paused}/pause", STAFF)
    start("pool-05", card_uid=MEMBER_UID)
    start("pool-09", prepaid_minutes=60)
    start("carom-01")
    billed = start("pool-04")
    lavos.api("POST", f"/api/sessions/{billed}/extras", STAFF, json={"extra": "topping", "quantity": 2})
    lavos.api("POST", f"/api/sessions/{billed}/extras", STAFF, json={"extra": "pizza_box", "quantity": 1})
    tab = lavos.api("GET", f"/api/sessions/{billed}/tab", STAFF)["id"]  # the till: two drinks on the game's tab, one voided
    drinks = {p["name"]: p["id"] for p in lavos.api("GET", "/api/products", STAFF)}
    lavos.api("POST", f"/api/tabs/{tab}/items", STAFF, status=201, json={"product_id": drinks["Pivo 0,5 l"], "quantity": 2})
    kofola = lavos.api("POST", f"/api/tabs/{tab}/items", STAFF, status=201, json={"product_id": drinks["Kofola 0,5 l"]})["item_id"]
    lavos.api("POST", f"/api/tabs/{tab}/items/{kofola}/void", STAFF, json={"reason": "zadané omylom"})
    lavos.api("POST", f"/api/sessions/{billed}/stop", STAFF)
    # Receipts for the journal: a game with two Kofolas paid by card, two sales at the bar (one named).
    played = start("pool-10")
    played_tab = lavos.api("GET", f"/api/sessions/{played}/tab", STAFF)["id"]
    lavos.api("POST", f"/api/tabs/{played_tab}/items", STAFF, status=201, json={"product_id": drinks["Kofola 0,5 l"], "quantity": 2})
    lavos.api("POST", f"/api/sessions/{played}/stop", STAFF)
    bar = lavos.api("POST", "/api/tabs", STAFF, status=201, json={})["id"]
    peter = lavos.api("POST", "/api/tabs", STAFF, status=201, json={"label": "Peter"})["id"]
    lavos.api("POST", f"/api/tabs/{bar}/items", STAFF, status=201, json={"product_id": drinks["Pivo 0,5 l"]})
    lavos.api("POST", f"/api/tabs/{peter}/items", STAFF, status=201, json={"product_id": drinks["Borovička 4 cl"]})
    for tab_id, method, tendered in ((played_tab, "card", None), (bar, "cash", 1000), (peter, "cash", None)):
        owed = lavos.api("GET", f"/api/tabs/{tab_id}/payments", STAFF)["owed_cents"]
        body = {"method": method, "amount_cents": owed, **({"tendered_cents": tendered} if tendered else {})}
        lavos.api("POST", f"/api/tabs/{tab_id}/payments", STAFF, status=201, json=body)
    node, _factory = nodes["foos-01"]
    card_reader_of(node).tap(MEMBER_UID)  # the member taps the club card at the foosball table
    wait_until(lambda: lavos.api("GET", "/api/foosball", STAFF)[0]["checkins"], timeout=10, what="foosball check-in")
    goal(nodes, "foos-01")
    drop_balls(nodes, "pool-02", 0, 1)  # balls on a table with no session: an alert in the banner
    wait_until(lambda: lavos.api("GET", "/api/alerts", STAFF), timeout=10, what="an open alert")
    wait_until(lambda: lavos.api("GET", "/api/tables/pool-01", STAFF)["session"]["drops"] == 4, timeout=10, what="4 drops")
    wait_party(lavos)
    return {"bill": billed, "tab": tab}


def test_the_evenings_whole_floor_fits_the_tablet_with_a_party_waiting(lavos: ServedHub, evening: dict[str, Any], tablet: Any) -> None:
    """Issue 29, item 36: with one alert and one party waiting, this floor was 984 px tall on the
    1280x800 tablet: the side room and the foosball fell below the fold."""
    log_in(tablet, lavos, MANAGER)
    wait_live(tablet)
    tablet.locator("#waiting-region .party").wait_for()
    f = fit(tablet)
    low = max(c["bottom"] for c in f["cards"])
    print(f"\nthe evening's floor at 1280x800 with a party waiting: the last card ends at {low:.0f} px")
    assert sorted(c["table"] for c in f["cards"]) == sorted(venue_tables())
    off = [c["table"] for c in f["cards"] if c["bottom"] > f["vh"] or c["right"] > f["vw"]]
    assert not off and f["height"] <= f["vh"] and f["width"] <= f["vw"], f"not on the screen without scrolling: {off} ({f})"
    assert f["navRows"] == 1


@pytest.mark.parametrize("size", SIZES)
def test_screenshots(lavos: ServedHub, evening: dict[str, Any], open_page: Callable[..., Any], size: Any) -> None:
    viewport, mobile = SIZES[size]
    page = open_page(viewport, mobile=mobile)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    log_in(page, lavos, MANAGER)
    shots = {
        "floor": ("/", "#table-pool-01 .drops"),
        "table": ("/tables/pool-01", 'form[action$="/pause"]'),  # a game running: pause, stop, move, extras
        "table-start": ("/tables/pool-06", "#start"),  # a free table: the start form
        "bill": (f"/sessions/{evening['bill']}/bill", "#bill-total"),
        "tab": (f"/tabs/{evening['tab']}", "#tab-total"),  # the till: a game's tab with drinks, a void, VAT per rate
        "pay": (f"/tabs/{evening['tab']}/pay", "#pay-owed"),  # what the stopped game's tab owes, one tap to pay it
        "receipts": ("/bills", "#receipt-list"),  # today's receipts to find and reprint (scrolled to them, under the unpaid tabs)
        "members": ("/members", "main"),
        "monitoring": ("/monitoring", "main"),
        "report": ("/reports", "main svg"),
    }
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, (path, ready) in shots.items():
        response = page.goto(lavos.base_url + path)
        assert response.status == 200, f"{path} → {response.status}"
        page.locator(ready).first.wait_for()
        wait_live(page)
        if name == "receipts":
            page.evaluate("document.getElementById('journal').scrollIntoView()")
        page.screenshot(path=str(SHOTS / f"{name}-{size}.png"))  # the viewport, as on the device
    assert problems == [], problems
