"""Issue 20's browser checks, in Chromium at tablet (1280×800) and phone (390×844) size, in Slovak:
a phone booking entered from the floor in three taps plus typing (the table's card, "Rezervovať",
"Rezervovať" again after the time and the name); its floor card says "Rezervované 20:00 (Novák, 4)"
from 15 minutes before the booking, not earlier; and a waiting party's offer appears on the open
floor, live, when a game stops.

The hub runs in this process on a clock the test sets (a booking's "15 minutes before" is the
hall's evening, whatever the hour the suite runs at), behind the same app and uvicorn server as
`lavos server`'s (sim.demo.start_http); no table node is needed for bookings. Its watchdog runs as
it does at the club, once a second: the no-shows and the offers are its work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from broker.bookings.bookings import BookTable
from broker.floor.games import StartGame, StopGame
from broker.hall.hub import Hub
from sim.demo import start_http
from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.conftest import MANAGER, PASSWORD, STAFF
from tests.support.hub import started_hub
from tests.support.sqlite_template import sqlite_with_users
from tests.support.till_days import FakeClock, local

EVENING = local(2026, 12, 4, 19, 30)  # Friday 4 December 2026, 19:30 at the hall


@dataclass
class Hall:
    hub: Hub
    clock: FakeClock
    url: str


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hall]:
    tmp = tmp_path_factory.mktemp("bookings")
    db = sqlite_with_users(tmp / "lavos.db", {STAFF: ("staff", PASSWORD), MANAGER: ("manager", PASSWORD)})
    clock = FakeClock(EVENING)
    with started_hub(db, clock=clock, data_dir=tmp) as hub:
        http = start_http(hub, "127.0.0.1:0", tmp)
        try:
            yield Hall(hub, clock, http.url.rstrip("/"))
        finally:
            http.stop()


def _log_in(page: Any, hall: Hall) -> None:
    page.goto(hall.url + "/")
    page.fill("input[name=username]", STAFF)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.locator(".login-box button[type=submit]").tap()


def _tap(page: Any, locator: Any) -> None:
    with page.expect_navigation():
        locator.tap()


def _card(page: Any, table: str) -> str:
    return " ".join(page.locator(f"#table-{table}").inner_text().split())


@pytest.mark.parametrize(("size", "table", "name"), [(TABLET, "pool-04", "Novák"), (PHONE, "pool-05", "Kováčová")], ids=["tablet", "phone"])
def test_a_phone_booking_in_three_taps_shows_on_the_floor_from_15_minutes_before(
    hall: Hall, open_page: Callable[..., Any], size: Any, table: Any, name: Any
) -> None:
    hall.clock.set(EVENING)
    page = open_page(size, mobile=size is PHONE)
    _log_in(page, hall)
    taps = 0
    _tap(page, page.locator(f"#table-{table}"))  # 1: the table on the floor
    taps += 1
    _tap(page, page.locator("#book-table"))  # 2: "Rezervovať"
    taps += 1
    assert page.locator("#where").input_value() == table  # the table is filled in
    page.fill("#time", "20:00")  # typing: the time and the name
    page.fill("#name", name)
    page.fill("input[name=party_size]", "4")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= size["width"], f"the booking form is {width} px wide"
    _tap(page, page.locator("#book"))  # 3: "Rezervovať"
    taps += 1
    assert taps == 3
    assert page.url == f"{hall.url}/tables/{table}"
    assert f"{name} (4)" in page.locator("#table-bookings").inner_text()

    page.goto(hall.url + "/")
    assert "Rezervované" not in _card(page, table)  # 30 minutes before: not yet
    hall.clock.set(local(2026, 12, 4, 19, 45))
    page.reload()
    assert f"Rezervované 20:00 ({name}, 4)" in _card(page, table)


LONG_NAMES = (
    "Alexandra Konštantínová-Šťastná s kolegami z účtovného oddelenia",
    "Maximilián Bartolomej Hrnčiarik a jeho spolužiaci z gymnázia",
    "Firemný večierok spoločnosti Stredoslovenská energetika",
)


def test_the_day_grid_shows_the_whole_evening_on_the_tablet_with_long_names_and_tomorrow_is_one_tap(
    hall: Hall, open_page: Callable[..., Any]
) -> None:
    """Issue 29, item 40: long names booked widened the grid until 20:30–24:00 scrolled off the
    tablet; the day view had no way to tomorrow but the arrow and a date."""
    hall.clock.set(EVENING)
    for n, name in enumerate(LONG_NAMES):
        start = local(2026, 12, 4, 20 + n, 30)
        hall.hub.execute(
            BookTable(start=start, end=start + timedelta(hours=2 - n // 2), party_size=6, name=name, table=f"pool-0{6 + n}", actor=STAFF)
        )
    page = open_page(TABLET)
    _log_in(page, hall)
    page.goto(hall.url + "/bookings")
    grid = page.evaluate(
        """() => {
          const wrap = document.querySelector('.day-grid-wrap'), heads = [...document.querySelectorAll('#day-grid thead th')];
          return {scroll: wrap.scrollWidth, shown: wrap.clientWidth, right: document.getElementById('day-grid').getBoundingClientRect().right,
                  hours: heads.filter(th => th.textContent.trim()).map(th => [th.textContent.trim(), th.getBoundingClientRect().right])};
        }"""
    )
    hours = [h for h, _ in grid["hours"][1:]]
    assert hours == [f"{h}:00" for h in range(16, 24)], hours  # the whole evening, 16:00-24:00
    assert grid["scroll"] <= grid["shown"] and grid["right"] <= TABLET["width"], f"the day grid scrolls sideways on the tablet: {grid}"
    assert all(right <= TABLET["width"] for _, right in grid["hours"]), grid["hours"]
    for name in LONG_NAMES:  # each booking on the grid, its whole name on a long press and in the list below
        assert page.locator(f"#day-grid a[title^='{name}']").count() == 1
        assert name in page.locator("#day-bookings").inner_text()
    _tap(page, page.locator("#day-tomorrow"))
    assert page.url.endswith("/bookings?day=2026-12-05") and "5.\u00a012.\u00a02026" in page.locator("h1").inner_text()
    assert page.locator("#day-tomorrow").count() == 0 and page.locator("#day-today").is_visible()


def test_the_waiting_list_offer_appears_on_the_floor_when_a_game_stops(hall: Hall, open_page: Callable[..., Any]) -> None:
    hall.clock.set(local(2026, 12, 4, 19, 50))
    for n in range(1, 11):
        table = f"pool-{n:02d}"
        if hall.hub.open_game(table) is None:
            hall.hub.execute(StartGame(table=table, actor=STAFF))
    page = open_page(TABLET)
    _log_in(page, hall)
    page.goto(hall.url + "/waiting")
    page.fill("#party-name", "Horváth")
    page.fill("input[name=party_size]", "2")
    _tap(page, page.locator("#join"))
    assert "Horváth" in page.locator("#waiting-panel").inner_text()
    page.goto(hall.url + "/")
    page.wait_for_function("() => (window.__lavosStreams || []).some(es => es.readyState === 1)")
    assert page.locator("#waiting-region .offer-text").count() == 0  # every pool table played: nothing to offer
    game = hall.hub.open_game("pool-01")
    assert game is not None
    hall.hub.execute(StopGame(game=game.id, actor=STAFF))  # the game on Pool 1 ends
    page.locator("#waiting-region .offer-text", has_text="Pool 1 voľný → Horváth, 2").wait_for()
    page.locator("#table-pool-01 [data-booking-mark=offer]", has_text="voľný → Horváth, 2").wait_for()
