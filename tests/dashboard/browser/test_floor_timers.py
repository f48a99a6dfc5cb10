"""Issue 11, item 7, and issue 19, item 20: timers that tick and amounts that move without any event.

The carom table has no pockets and here no node at all: nothing at the table ever announces
anything, so only the clock moves its bill. Its card must still show the time ticking every
second (large) and its amount following the bill as it changes (the server says when: the next
started minute), on the floor and on the table's own page, the tab button there too; a prepaid
game shows the time left counting down and when it ends ("končí 19:30").

The hub runs in this process on a clock the test moves (tests/dashboard/conftest.py ShiftedClock):
the games start 45 s in the hub's past, so the next billed minute is a quarter of a minute away
instead of up to a whole one (the test took 65 s waiting for it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest

from tests.dashboard.browser.conftest import TABLET
from tests.dashboard.browser.web import log_in, page_marker, wait_live
from tests.dashboard.conftest import CHEAP, MANAGER, PASSWORD, STAFF, ShiftedClock
from tests.support.hub import fresh_login, started_hub
from tests.support.sqlite_template import migrated_sqlite
from tests.support.waiting import HANG_S, wait_until
from tests.support.web import served_hub

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto
    from tests.support.web import ServedHub


TABLE = "carom-01"
PLAYED_S = 45  # how long the games have run when the pages open: the next minute is 15 s away


@pytest.fixture(scope="module")
def hall_clock() -> ShiftedClock:
    return ShiftedClock(timedelta(seconds=-PLAYED_S))


@pytest.fixture(scope="module")
def lavos(mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory, hall_clock: ShiftedClock) -> Iterator[ServedHub]:
    """The hub of this module: in this process, on `hall_clock`, served on a real socket."""
    db = migrated_sqlite(tmp_path_factory.mktemp("hub") / "lavos.db")
    with (
        started_hub(db, mosquitto=mosquitto, clock=hall_clock, client_id=fresh_login()) as hub,
        served_hub(hub, {STAFF: ("staff", PASSWORD), MANAGER: ("manager", PASSWORD)}, CHEAP) as served,
    ):
        yield served


def hms_seconds(text: str) -> int:
    h, m, s = (int(x) for x in text.strip().split(":"))
    return h * 3600 + m * 60 + s


def test_timers_tick_and_the_amount_moves_without_events(
    lavos: ServedHub, hall_clock: ShiftedClock, tablet: Any, open_page: Callable[..., Any]
) -> None:
    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": TABLE})["id"]
    lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-01", "prepaid_minutes": 60})
    hall_clock.jump(seconds=PLAYED_S)  # the hub's clock is now: the games have run 45 s
    panel = open_page(TABLET)
    log_in(tablet, lavos, STAFF)
    log_in(panel, lavos, STAFF, f"/tables/{TABLE}")
    for p in (tablet, panel):
        wait_live(p)
    loaded = (page_marker(tablet), page_marker(panel))

    # Elapsed time ticks every second, in large type.
    elapsed = tablet.locator(f"#table-{TABLE} .timer.elapsed")
    first, since = hms_seconds(elapsed.inner_text()), time.monotonic()
    assert first >= PLAYED_S
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
        timeout=HANG_S * 1000,
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

    # The bill moves with the clock only (the next started minute); both pages follow it, and the
    # tab button on the table's page too.
    shown = tablet.locator(f"#table-{TABLE} .amount").inner_text()
    api_amount = lavos.api("GET", f"/api/sessions/{sid}", STAFF)["amount"]
    assert api_amount.replace("\u00a0", " ") == shown.replace("\u00a0", " "), "the pages took longer than the quarter minute to open"
    assert panel.locator("#open-tab .money").inner_text() == shown
    wait_until(
        lambda: lavos.api("GET", f"/api/sessions/{sid}", STAFF)["amount"].replace("\u00a0", " ") != shown.replace("\u00a0", " "),
        timeout=HANG_S,  # a minute of the bill is at most 60 s away: only a hang fails here
        interval=0.1,
        what="the next started minute on the bill",
    )
    changed_at = time.monotonic()
    now = lavos.api("GET", f"/api/sessions/{sid}", STAFF)["amount"]
    for p, sel in ((tablet, f"#table-{TABLE} .amount"), (panel, f"#table-{TABLE} .amount"), (panel, "#open-tab .money")):
        p.wait_for_function(
            "([sel, old]) => { const el = document.querySelector(sel); return el && el.textContent.trim() !== old; }",
            arg=[sel, shown],
            timeout=HANG_S * 1000,  # with no event at all, only the page's own timing moves it
        )
        assert p.locator(sel).inner_text().replace("\u00a0", " ") == now.replace("\u00a0", " "), sel
    lag = time.monotonic() - changed_at
    print(f"\n{TABLE}: the amount on both pages followed the bill {lag:.1f} s after it changed (no event at all)")
    assert (page_marker(tablet), page_marker(panel)) == loaded, "a page reloaded: the amount did not move by itself"


def _cents(text: str) -> int:
    return int("".join(ch for ch in text if ch.isdigit()))


def test_in_a_sped_up_hall_the_amount_moves_and_the_timers_keep_the_halls_pace(
    lavos: ServedHub, hall_clock: ShiftedClock, tablet: Any
) -> None:
    """Issue 29, item 39: in the demo (`--speed 20`) the table page's running amount froze: the
    server said when it moves in the hall's milliseconds, and the browser waited that long in its
    own (a minute of the hall is 3 s there). The page says how fast the hall's clock runs; the
    amount follows each started minute and the timers count the hall's seconds."""
    sid = next(s["id"] for s in lavos.api("GET", "/api/sessions?open=true", STAFF) if s["table"] == TABLE)  # left running above
    # A hall minute is 0.1 s of the browser's: five started minutes in a row on the card and on the
    # tab button come within a moment of each other, where a page waiting the hall's milliseconds
    # in its own would show one a minute. Only a hang's deadline: the count is the property.
    hall_clock.speed = 600
    try:
        log_in(tablet, lavos, STAFF, f"/tables/{TABLE}")
        wait_live(tablet)
        for sel in (f"#table-{TABLE} .amount", "#open-tab .money"):
            tablet.wait_for_function(
                """(sel) => {
                    const text = document.querySelector(sel)?.textContent.trim();
                    const seen = (window.__amounts ??= {})[sel] ??= [];
                    if (text && seen[seen.length - 1] !== text) seen.push(text);
                    return seen.length >= 6;
                }""",
                arg=sel,
                polling=20,
                timeout=HANG_S * 1000,
            )
            seen = tablet.evaluate("(sel) => window.__amounts[sel]", sel)
            assert [_cents(t) for t in seen] == sorted(_cents(t) for t in seen), (sel, seen)  # only ever up
        # What the server drew, never a guess made ahead of it in the browser.
        shown_cents = _cents(tablet.locator(f"#table-{TABLE} .amount").inner_text())
        assert shown_cents <= _cents(lavos.api("GET", f"/api/sessions/{sid}", STAFF)["amount"])
        # The elapsed time counts the hall's seconds: an hour of them, where the browser's own pace
        # would take an hour.
        elapsed = f"#table-{TABLE} .timer.elapsed"
        first = hms_seconds(tablet.locator(elapsed).inner_text())
        tablet.wait_for_function(
            """([sel, first]) => {
                const [h, m, s] = document.querySelector(sel).textContent.trim().split(':').map(Number);
                return h * 3600 + m * 60 + s - first >= 3600;
            }""",
            arg=[elapsed, first],
            timeout=HANG_S * 1000,
        )
    finally:
        hall_clock.speed = 1
