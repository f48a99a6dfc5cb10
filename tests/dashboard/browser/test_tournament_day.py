"""Issue 21: a Lavosliga evening in Chromium against `lavos server`. Staff check in 8 players on
the tablet and draw; the matches go to the tables; a result is tapped in on a phone, rack by rack,
and the TV page (no login, dark, 1920×1080) shows it within a second; the tournament ends with the
standings on the TV and the tablet.
"""

from __future__ import annotations

import re
import time

from tests.dashboard.browser.web import log_in
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.waiting import wait_until

NODE_TABLES: tuple[str, ...] = ()  # no node needed: the hub commands the lights all the same
PLAYERS = ("Novák", "Kováč", "Horváth", "Varga", "Tóth", "Nagy", "Baláž", "Molnár")
TV = {"width": 1920, "height": 1080}


def test_check_in_draw_score_on_a_phone_and_the_tv_follows_to_the_standings(lavos, open_page):
    t = lavos.api(
        "POST",
        "/api/tournaments",
        MANAGER,
        status=201,
        json={
            "name": "Lavosliga I",
            "starts_at": "2026-12-06T14:00:00+01:00",
            "league_group": "I",
            "discipline": "8-ball",
            "format": "single",
            "race_winners": 2,
            "race_final": 3,
            "tables": ["pool-01", "pool-02", "pool-03", "pool-04"],
        },
    )
    tid = t["id"]
    for name in PLAYERS:
        lavos.api("POST", f"/api/tournaments/{tid}/entrants", STAFF, status=201, json={"name": name})

    # The tablet behind the bar: check the eight in (each fee goes on their tab), then draw.
    tablet = open_page()
    log_in(tablet, lavos, STAFF, f"/tournaments/{tid}")
    for _ in PLAYERS:
        with tablet.expect_navigation():
            tablet.locator(".entrant-list button.check-in").first.tap()
    assert tablet.locator(".fee-pay").count() == 8, "each checked-in player's entry fee is waiting at the till"
    with tablet.expect_navigation():
        tablet.locator("#draw").tap()
    assert tablet.locator("#on-tables .call").count() == 4
    with tablet.expect_navigation():
        tablet.locator("#new-tv-link").tap()
    link = re.search(r"https?://\S+/tv/[A-Za-z0-9_-]+", tablet.locator(".flash-ok").inner_text())
    assert link, tablet.locator(".flash-ok").inner_text()

    # The TV: no login, dark, the four tables as called.
    tv = open_page(TV)
    tv.goto(link.group(0))
    tv.wait_for_function("() => (window.__lavosStreams || []).some(es => es.readyState === 1)")
    assert tv.locator(".tv-call").count() == 4
    assert tv.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(11, 18, 32)"
    assert tv.evaluate("document.documentElement.scrollWidth <= innerWidth && document.documentElement.scrollHeight <= innerHeight")
    first = tv.locator(".tv-call").first
    match = first.get_attribute("data-match")

    # A phone at the table: a tap a rack (2 racks), then the confirmation; the TV shows it within a second.
    phone = open_page({"width": 390, "height": 844}, mobile=True)
    log_in(phone, lavos, STAFF, f"/tournaments/{tid}/matches/{match}")
    for side in ("a", "b", "a"):
        with phone.expect_navigation():
            phone.locator(f"#rack-{side}").tap()
    assert phone.locator("#score-a").inner_text() == "2" and phone.locator("#score-b").inner_text() == "1"
    assert phone.evaluate("document.documentElement.scrollWidth <= innerWidth"), "the score page fits the phone"
    with phone.expect_navigation():
        phone.locator("#confirm-result").tap()
    shown = time.monotonic()
    tv.wait_for_selector(f'#tv-results .tv-result[data-match="{match}"]', timeout=5000)
    assert time.monotonic() - shown < 1.0, "the TV shows a result within a second"

    # The rest through the API, the final again on the phone; the TV ends with the standings.
    def ready() -> list[dict]:
        v = lavos.api("GET", f"/api/tournaments/{tid}", STAFF)
        return [m for m in v["matches"] if m["status"] in ("called", "playing") and m["id"] != "W3-1"]

    while todo := ready():
        for m in todo:
            lavos.api("POST", f"/api/tournaments/{tid}/matches/{m['id']}/result", STAFF, json={"score_a": 2, "score_b": 0})
    wait_until(
        lambda: any(m["id"] == "W3-1" and m["status"] == "called" for m in lavos.api("GET", f"/api/tournaments/{tid}", STAFF)["matches"]),
        timeout=10,
        what="the final called to a table",
    )
    phone.goto(f"{lavos.base_url}/tournaments/{tid}/matches/W3-1")
    for _ in range(3):
        with phone.expect_navigation():
            phone.locator("#rack-b").tap()
    with phone.expect_navigation():
        phone.locator("#confirm-result").tap()
    tv.wait_for_selector("#tv-standings", timeout=5000)
    assert tv.locator("#tv-champion").is_visible()
    tablet.reload()
    assert tablet.locator("#standings tbody tr").count() == 8 and tablet.locator("#champion").is_visible()
