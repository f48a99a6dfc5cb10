"""Issue 11, item 7: timers that tick and amounts that move without any event.

The carom table has no pockets and here no node at all: nothing at the table ever announces
anything, so only the clock moves its bill. Its card must still show the time ticking every
second (large) and its amount following the bill within 30 s, on the floor and on the table's own
page; a prepaid game shows the time left counting down and when it ends ("končí 19:30").

The bill moves at the game's next started minute, a real minute on the server's own clock: the game
starts as soon as the server is up, so the module's other set-up (nodes, browser) runs in that
minute. The pages' clocks are the test's (Playwright's clock, installed before they load): once
the bill has moved, each page runs 30 s of its own time at once, and must show the new amount
after them. That proves the 30 s as exactly as waiting for them did, without the wait.
"""

from __future__ import annotations

import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from tests.dashboard.browser.conftest import TABLET
from tests.dashboard.browser.web import log_in, page_marker, wait_live
from tests.dashboard.conftest import STAFF
from tests.support.waiting import wait_until

NODE_TABLES = ("pool-01",)
TABLE = "carom-01"
REFRESH_S = 30  # the pages' periodic refresh of what moves with time alone
FETCH_S = 10  # the fetch it makes, on a loaded machine


def hms_seconds(text: str) -> int:
    h, m, s = (int(x) for x in text.strip().split(":"))
    return h * 3600 + m * 60 + s


@pytest.fixture(scope="module", autouse=True)
def game(lavos) -> int:
    """The carom table's game, started before the nodes and the browser (autouse: set up first)."""
    return lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": TABLE})["id"]


def test_timers_tick_and_the_amount_moves_without_events(lavos, game, nodes, tablet, open_page):
    sid = game
    lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-01", "prepaid_minutes": 60})
    panel = open_page(TABLET)
    for p in (tablet, panel):
        p.clock.install()  # time runs as usual until the test moves it (below)
    log_in(tablet, lavos, STAFF)
    log_in(panel, lavos, STAFF, f"/tables/{TABLE}")
    for p in (tablet, panel):
        wait_live(p)
    loaded = (page_marker(tablet), page_marker(panel))

    # Elapsed time ticks every second, in large type.
    elapsed = tablet.locator(f"#table-{TABLE} .timer.elapsed")
    first, since = hms_seconds(elapsed.inner_text()), time.monotonic()
    # Two ticks on the page's own timer (awaited: a loaded machine may render a tick late), and no
    # more seconds than really passed.
    tablet.wait_for_function(
        """([sel, first]) => {
            const el = document.querySelector(sel);
            if (!el) return false;
            const [h, m, s] = el.textContent.trim().split(":").map(Number);
            return h * 3600 + m * 60 + s - first >= 2;
        }""",
        arg=[f"#table-{TABLE} .timer.elapsed", first],
        timeout=6000,
    )
    assert hms_seconds(elapsed.inner_text()) - first <= time.monotonic() - since + 1.5
    size = float(elapsed.evaluate("el => parseFloat(getComputedStyle(el).fontSize)"))
    assert size >= 22, f"the timer is {size} px"

    # Prepaid: the time left counts down, and the card says when it ends.
    left = tablet.locator("#table-pool-01 .timer.left")
    before = hms_seconds(left.inner_text())
    assert 58 * 60 <= before <= 60 * 60
    tablet.wait_for_timeout(1100)
    assert hms_seconds(left.inner_text()) < before
    ends = tablet.locator("#table-pool-01 .ends").inner_text()
    until = lavos.api("GET", "/api/tables/pool-01", STAFF)["session"]["prepaid_until"]
    assert ends == f"končí {datetime.fromisoformat(until).astimezone(ZoneInfo('Europe/Bratislava')):%H:%M}", ends
    assert lavos.api("GET", f"/api/sessions/{sid}", STAFF)["state"] == "running"

    # The bill moves with the clock only (the next started minute); both pages follow it within
    # 30 s of their own time.
    shown = tablet.locator(f"#table-{TABLE} .amount").inner_text()
    wait_until(
        lambda: lavos.api("GET", f"/api/sessions/{sid}", STAFF)["amount"].replace("\u00a0", " ") != shown.replace("\u00a0", " "),
        timeout=75,
        interval=0.5,
        what="the next started minute on the bill",
    )
    for p in (tablet, panel):
        p.clock.run_for(REFRESH_S * 1000)
        p.wait_for_function(
            "([sel, old]) => { const el = document.querySelector(sel); return el && el.textContent.trim() !== old; }",
            arg=[f"#table-{TABLE} .amount", shown],
            timeout=FETCH_S * 1000,
        )
    print(f"\n{TABLE}: the amount on both pages followed the bill within {REFRESH_S} s of their time (no event at all)")
    assert (page_marker(tablet), page_marker(panel)) == loaded, "a page reloaded: the amount did not move by itself"
