"""Issue 11, item 6: the dashboard on a phone (390x844).

No page reachable from the top bar is wider than the phone (nothing clipped, nothing scrolls
sideways); the top bar keeps sound, language and logout within reach (a Menu unfolds them); an
alert takes at most two lines; money ("0,60 €") and dates ("1. 12. 2026") never break across
lines. In Slovak and in English. Issue 19, item 18: on the till's pages every button and link is
at least 44 px high, and the unpaid list's buttons fit the phone. Issue 21: a tournament's score
tapped in on a phone while the TV page follows (in this module for its server: no new set-up).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.hall import drop_balls
from tests.dashboard.browser.web import log_in, wait_live
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from edge.agent import EdgeNode
    from tests.support.web import ServedHub


NODE_TABLES = ("pool-01", "pool-02")

# Every money or date text in the page that the browser drew on more than one line.
BROKEN_TEXTS = r"""
() => {
  const pattern = /(-?\d[\d\s]*,\d\d\s€|€\d[\d,]*\.\d\d|\d{1,2}\.\s\d{1,2}\.\s\d{4}|\d{1,2}\s[A-Z][a-z]{2}\s\d{4})/g;
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement || !node.parentElement.offsetParent) continue;  // not shown
    for (const m of node.data.matchAll(pattern)) {
      const r = document.createRange();
      r.setStart(node, m.index);
      r.setEnd(node, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
      if (tops.size > 1) out.push(m[0]);
    }
  }
  return out;
}
"""


@pytest.fixture(scope="module")
def evening(lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]]) -> dict[str, Any]:
    """A game playing, one billed (a bill with money and dates), and an alert in the banner."""
    lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-01"})
    billed = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "carom-01"})["id"]
    lavos.api("POST", f"/api/sessions/{billed}/extras", STAFF, json={"extra": "topping", "quantity": 2})
    lavos.api("POST", f"/api/sessions/{billed}/stop", STAFF)
    # The till: a game's tab with a drink paid in cash (a receipt), a sale at the bar left unpaid.
    paid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-03"})["id"]
    tab = lavos.api("GET", f"/api/sessions/{paid}/tab", STAFF)["id"]
    beer = next(p["id"] for p in lavos.api("GET", "/api/products", STAFF) if p["name"] == "Pivo 0,5 l")
    lavos.api("POST", f"/api/tabs/{tab}/items", STAFF, status=201, json={"product_id": beer})
    lavos.api("POST", f"/api/sessions/{paid}/stop", STAFF)
    owed = lavos.api("GET", f"/api/tabs/{tab}/payments", STAFF)["owed_cents"]
    body = {"method": "cash", "amount_cents": owed, "tendered_cents": 1000}
    payment = lavos.api("POST", f"/api/tabs/{tab}/payments", STAFF, status=201, json=body)["id"]
    bar = lavos.api("POST", "/api/tabs", STAFF, status=201, json={})["id"]
    lavos.api("POST", f"/api/tabs/{bar}/items", STAFF, status=201, json={"product_id": beer})
    drop_balls(nodes, "pool-02", 0, 1)
    wait_until(lambda: lavos.api("GET", "/api/alerts", STAFF), timeout=10, what="an open alert")
    unpaid = lavos.api("GET", f"/api/sessions/{billed}/tab", STAFF)["id"]
    return {"bill": billed, "unpaid": unpaid, "bar": bar, "payment": payment}


def width(page: Any) -> int:
    result: int = page.evaluate("document.documentElement.scrollWidth")
    return result


def nav_paths(page: Any) -> list[str]:
    result: list[str] = page.eval_on_selector_all(".topbar .nav a", "links => links.map(a => a.getAttribute('href'))")
    return result


@pytest.mark.parametrize("lang", ["sk", "en"])
def test_no_page_is_wider_than_the_phone_and_no_money_or_date_breaks(
    lavos: ServedHub, evening: dict[str, Any], phone: Any, lang: Any
) -> None:
    log_in(phone, lavos, MANAGER)
    if lang == "en":
        phone.locator("#menu-toggle").tap()
        with phone.expect_navigation():
            phone.locator(".lang button[value=en]").tap()
    paths = nav_paths(phone)
    assert len(paths) >= 6, paths  # a manager's links: tables, foosball, alerts, members, reports, monitoring, accounts
    paths += ["/tables/pool-01", f"/sessions/{evening['bill']}/bill"]
    problems = {}
    for path in paths:
        phone.goto(lavos.base_url + path)
        phone.wait_for_load_state("load")
        w, broken = width(phone), phone.evaluate(BROKEN_TEXTS)
        if w > PHONE["width"] or broken:
            problems[path] = {"width": w, "broken": broken}
    assert not problems, f"at {PHONE['width']} px wide: {problems}"


def test_the_phone_top_bar_keeps_sound_language_and_logout_within_reach(lavos: ServedHub, evening: dict[str, Any], phone: Any) -> None:
    log_in(phone, lavos, STAFF)
    wait_live(phone)
    vw = PHONE["width"]

    def on_screen(selector: str) -> bool:
        box = phone.locator(selector).bounding_box()
        return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= vw and box["y"] >= 0

    assert on_screen("#mute") and on_screen("#menu-toggle")
    bar = phone.locator(".topbar").bounding_box()
    assert bar["height"] <= 70, f"the closed top bar is {bar['height']} px tall"
    assert not phone.locator(".lang button[value=en]").is_visible()
    phone.locator("#menu-toggle").tap()
    for selector in (".lang button[value=sk]", ".lang button[value=en]", ".logout button", ".nav a[href='/alerts']"):
        assert phone.locator(selector).is_visible() and on_screen(selector), selector
    assert width(phone) <= vw
    # The sound switch says what it is doing now.
    assert phone.locator("#mute").inner_text() == "Zvuk: zapnutý"
    phone.locator("#mute").tap()
    assert phone.locator("#mute").inner_text() == "Zvuk: vypnutý"
    phone.locator("#mute").tap()


def test_an_alert_takes_at_most_two_lines_on_the_phone(lavos: ServedHub, evening: dict[str, Any], phone: Any) -> None:
    log_in(phone, lavos, STAFF)
    alert = phone.locator("#alert-banner .alert").first
    alert.wait_for()
    # Measured in one go on one element: the live script may redraw the strip between two calls,
    # and a detached element has no computed line height.
    measure = """el => {
        const text = el.querySelector('.alert-text');
        return el.isConnected ? [parseFloat(getComputedStyle(text).lineHeight), text.getBoundingClientRect().height,
                                 el.getBoundingClientRect().height] : null;
    }"""
    sizes: list[list[float]] = []

    def measured() -> bool:
        m = alert.evaluate(measure)
        sizes.append(m or [float("nan")])
        return m is not None and m[0] > 0  # NaN > 0 is false: not laid out yet

    wait_until(measured, what="the alert measured")
    line, text_h, alert_h = sizes[-1]
    assert text_h <= 2 * line + 1, "the alert's text runs over two lines"
    assert alert_h <= 2 * line + 24


# Every visible thing a finger taps, with its height; a radio or checkbox counts through its label.
TOUCH_TARGETS = """() => {
  const sel = 'a, button, summary, select, label.method, label.choice, input:not([type=hidden]):not([type=radio]):not([type=checkbox])';
  return [...document.querySelectorAll(sel)].map(el => {
    const r = el.getBoundingClientRect();
    const text = (el.innerText || el.value || el.getAttribute('aria-label') || el.getAttribute('placeholder') || el.tagName).trim();
    return {text: text.replace(/\\s+/g, ' ').slice(0, 40), h: r.height, w: r.width, right: r.right};
  }).filter(t => t.h > 0 && t.w > 0);
}"""
MIN_TOUCH_PX = 44


def test_every_touch_target_on_the_till_pages_is_at_least_44_px_and_the_unpaid_list_fits(
    lavos: ServedHub, evening: dict[str, Any], phone: Any, open_page: Callable[..., Any]
) -> None:
    """Issue 19, item 18: "Potvrdiť" was 41 px high, the bills' row buttons 40 px, "Položky účtu" 21 px."""
    log_in(phone, lavos, STAFF, "/bills")
    unpaid = phone.locator("#unpaid-tabs .links .btn")
    assert unpaid.count() >= 4
    for box in (unpaid.nth(i).bounding_box() for i in range(unpaid.count())):
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], f"an unpaid tab's button at {box}"
    pages = {
        "/bills": STAFF,
        f"/tabs/{evening['bar']}": STAFF,  # a sale at the bar: its one-tap payment buttons and the products
        f"/tabs/{evening['unpaid']}": STAFF,
        f"/tabs/{evening['unpaid']}/pay": STAFF,
        f"/receipts/{evening['payment']}": STAFF,
        "/tables/pool-01": STAFF,  # a game playing: pause, stop, the products, move
        "/closing": MANAGER,
    }
    boss = open_page(PHONE, mobile=True)
    log_in(boss, lavos, MANAGER)
    small = {}
    for path, who in pages.items():
        page = phone if who == STAFF else boss
        page.goto(lavos.base_url + path)
        if path.endswith("/pay"):
            page.locator("#pay-other-toggle").tap()  # the full form too
        low = [t for t in page.evaluate(TOUCH_TARGETS) if t["h"] < MIN_TOUCH_PX]
        if low:
            small[path] = [f"{t['text']!r} {t['h']:.0f} px" for t in low]
        assert width(page) <= PHONE["width"], f"{path} is {width(page)} px wide"
    assert not small, f"touch targets under {MIN_TOUCH_PX} px high at 390x844: {small}"


TABLET_HEIGHT = TABLET["height"]
PLAYERS = ("Novák", "Kováč", "Horváth", "Varga", "Tóth", "Nagy", "Baláž", "Molnár")
TV = {"width": 1920, "height": 1080}


def test_a_tournament_checked_in_drawn_and_scored_on_a_phone_while_the_tv_follows_to_the_standings(
    lavos: ServedHub, open_page: Callable[..., Any]
) -> None:
    """Issue 21: a Lavosliga evening. Staff check in 8 players on the tablet and draw; the matches go
    to the tables; a result is tapped in on a phone, rack by rack, and the TV page (no login, dark,
    1920x1080) shows it by itself; the tournament ends with the standings on the TV and the
    tablet. Last in the module: its entry fees and calls change the pages the tests above walk."""
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
            "tables": ["pool-06", "pool-07", "pool-08", "pool-09"],  # clear of the evening's tables
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

    # A phone at the table: a tap a rack (2 racks), then the confirmation; the TV shows it by itself
    # (how soon: bench/tournament.py, a result to the TV's new board).
    phone = open_page({"width": 390, "height": 844}, mobile=True)
    log_in(phone, lavos, STAFF, f"/tournaments/{tid}/matches/{match}")
    for side in ("a", "b", "a"):
        with phone.expect_navigation():
            phone.locator(f"#rack-{side}").tap()
    assert phone.locator("#score-a").inner_text() == "2" and phone.locator("#score-b").inner_text() == "1"
    assert phone.evaluate("document.documentElement.scrollWidth <= innerWidth"), "the score page fits the phone"
    with phone.expect_navigation():
        phone.locator("#confirm-result").tap()
    tv.wait_for_selector(f'#tv-results .tv-result[data-match="{match}"]')

    # The rest through the API, the final again on the phone; the TV ends with the standings.
    def ready() -> list[dict[str, Any]]:
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
    tv.wait_for_selector("#tv-standings")
    assert tv.locator("#tv-champion").is_visible()
    tablet.reload()
    assert tablet.locator("#standings tbody tr").count() == 8 and tablet.locator("#champion").is_visible()


def settled(page: Any) -> None:
    """Until the live board has been fetched once after its stream opened (app.js does that on
    every open): measured before, it could be redrawn under the test (what is typed into it stays)."""
    wait_live(page)
    page.wait_for_selector("#board[data-stamp]", state="attached")


# The scores (the tables now, the results, the bracket) the browser drew on more than one line.
SPLIT_SCORES = """() => [...document.querySelectorAll('.tv-score, .tv-result b, .tv-match b, .call-score, .match-list .score')]
  .filter(el => {
    const r = document.createRange();
    r.selectNodeContents(el);
    return new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top))).size > 1;
  }).map(el => el.textContent.trim())"""


# Every visible control on the page that sits past the screen's left or right edge (inside a table
# that scrolls sideways, say): (what it is, where its right edge is).
OFF_THE_EDGE = """() => {
  const sel = 'a, button, summary, select, input:not([type=hidden])';
  return [...document.querySelectorAll(sel)].map(el => {
    const r = el.getBoundingClientRect();
    const text = (el.innerText || el.value || el.getAttribute('aria-label') || el.tagName).trim().slice(0, 30);
    return {text, left: r.left, right: r.right, w: r.width, h: r.height};
  }).filter(t => t.w > 0 && t.h > 0 && (t.left < -0.5 || t.right > innerWidth + 0.5));
}"""


def test_a_32_player_double_elimination_on_the_directors_tablet_a_phone_and_the_tv(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """Issue 29, item 33: on the director's tablet (1280x800) the tables are above the fold and a
    result keeps the page where it was; on a phone no control sits past the right edge; the TV
    (1920x1080) shows the whole bracket, scaled to the screen. Last in the module, after the
    tournament above: its tables are free again."""
    t = lavos.api(
        "POST",
        "/api/tournaments",
        MANAGER,
        status=201,
        json={
            "name": "Lavosliga II",
            "starts_at": "2026-12-06T14:00:00+01:00",
            "league_group": "II",
            "format": "double",
            "tables": ["pool-06", "pool-07", "pool-08", "pool-09", "pool-10"],
        },
    )
    tid = t["id"]
    for i in range(1, 33):
        lavos.api("POST", f"/api/tournaments/{tid}/entrants", STAFF, status=201, json={"name": f"Hráč {i:02d}", "check_in": True})
    lavos.api("POST", f"/api/tournaments/{tid}/draw", STAFF)
    tv_path = lavos.api("POST", f"/api/tournaments/{tid}/tv-link", STAFF, status=201)["path"]

    tablet = open_page()
    log_in(tablet, lavos, STAFF, f"/tournaments/{tid}")
    settled(tablet)
    top, bottom = tablet.evaluate(
        "() => [document.getElementById('on-tables').getBoundingClientRect().top, document.querySelector('#on-tables .call').getBoundingClientRect().bottom]"
    )
    assert bottom <= TABLET_HEIGHT, f"the tables start at {top} px"
    # A result typed into the list far down the page: the page comes back where it was.
    row = tablet.locator("#m-W1-12")
    row.scroll_into_view_if_needed()
    before = tablet.evaluate("document.getElementById('m-W1-12').getBoundingClientRect().top")
    assert tablet.evaluate("scrollY") > 800
    row.locator("input[name=score_a]").fill("5")
    row.locator("input[name=score_b]").fill("2")
    with tablet.expect_navigation():
        row.locator("button").tap()
    tablet.wait_for_load_state("load")
    tablet.wait_for_function("top => Math.abs(document.getElementById('m-W1-12').getBoundingClientRect().top - top) < 2", arg=before)
    assert "Výsledok uložený" in tablet.locator(".flash-ok").inner_text()

    phone = open_page(PHONE, mobile=True)
    log_in(phone, lavos, STAFF, f"/tournaments/{tid}")
    settled(phone)
    phone.locator(".entrants-fold > summary").tap()  # the players (and their fees to pay) too
    phone.locator("#m-W1-12 details.correct > summary").tap()  # and a correction's boxes
    off = phone.evaluate(OFF_THE_EDGE)
    assert not off, f"controls past the edge of a {PHONE['width']} px phone: {off[:8]}"
    assert phone.locator(".fee-pay").count() == 32 and phone.evaluate("document.documentElement.scrollWidth <= innerWidth")

    tv = open_page(TV)
    tv.goto(lavos.base_url + tv_path)
    tv.wait_for_function("() => document.querySelector('.tv-rounds') && document.querySelector('.tv-rounds').dataset.scale")
    shown = tv.evaluate(
        """() => [...document.querySelectorAll('.tv-match')].map(el => el.getBoundingClientRect())
                  .filter(r => r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight && r.height > 0).length"""
    )
    assert shown == tv.locator(".tv-match").count() == 63, f"{shown} of the bracket's 63 matches on the TV's screen"
    assert tv.locator(".tv-call").count() == 5 and tv.evaluate("document.documentElement.scrollHeight <= innerHeight")
    # Issue 29: a score is one word, never "1 :" above "0": on the TV, the players' phones and the tablet.
    assert tv.evaluate(SPLIT_SCORES) == []
    phone.goto(lavos.base_url + tv_path)
    phone.wait_for_selector(".tv-call")
    assert phone.evaluate(SPLIT_SCORES) == [], "the TV's page on a phone"
    assert tablet.evaluate(SPLIT_SCORES) == []


def test_a_score_typed_on_the_directors_tablet_survives_the_live_board_and_is_saved(
    lavos: ServedHub, open_page: Callable[..., Any]
) -> None:
    """Follow-up of issue 29: the board of the tournament's page is redrawn on every rack tapped in
    the hall; what the director is typing into a match's result boxes stays (the focus too), the
    rest of the board follows (the other table's score), and the result typed is the one saved. A
    result another tablet enters for the match being typed into waits while the director is in its
    boxes, then shows. Last in the module, after the tournaments above, on tables of its own."""
    t = lavos.api(
        "POST",
        "/api/tournaments",
        MANAGER,
        status=201,
        json={
            "name": "Lavosliga III",
            "starts_at": "2026-12-06T14:00:00+01:00",
            "format": "single",
            "race_winners": 3,
            "tables": ["pool-04", "pool-05"],
        },
    )
    tid = t["id"]
    for name in PLAYERS[:4]:
        lavos.api("POST", f"/api/tournaments/{tid}/entrants", STAFF, status=201, json={"name": name, "check_in": True})
    lavos.api("POST", f"/api/tournaments/{tid}/draw", STAFF)
    typed, other = (m["id"] for m in lavos.api("GET", f"/api/tournaments/{tid}", STAFF)["matches"] if m["status"] == "called")

    def score_shown(match: str, text: str) -> None:
        tablet.wait_for_function(
            "([m, t]) => { const s = document.querySelector(`#call-${m} .call-score`); return s && s.textContent.replace(/\\s+/g, ' ').trim() === t; }",
            arg=[match, text],
        )

    tablet = open_page()
    log_in(tablet, lavos, STAFF, f"/tournaments/{tid}")
    settled(tablet)
    row = tablet.locator(f"#m-{typed}")
    row.locator("input[name=score_a]").fill("3")
    row.locator("input[name=score_b]").fill("1")  # the focus stays in the second box
    lavos.api("POST", f"/api/tournaments/{tid}/matches/{other}/rack", STAFF, json={"side": "a", "seen": [0, 0]})
    score_shown(other, "1 : 0")  # the board was redrawn around the form
    assert (row.locator("input[name=score_a]").input_value(), row.locator("input[name=score_b]").input_value()) == ("3", "1")
    assert tablet.evaluate("document.activeElement.name") == "score_b"
    with tablet.expect_navigation():
        row.locator("button").tap()
    done = {m["id"]: m for m in lavos.api("GET", f"/api/tournaments/{tid}", STAFF)["matches"]}[typed]
    assert (done["status"], done["score_a"], done["score_b"]) == ("done", 3, 1)

    # The other match: its boxes being typed into when another tablet enters its result.
    settled(tablet)
    row = tablet.locator(f"#m-{other}")
    row.locator("input[name=score_a]").fill("2")
    lavos.api("POST", f"/api/tournaments/{tid}/matches/{other}/result", STAFF, json={"score_a": 3, "score_b": 0})
    tablet.wait_for_selector("#board[data-held]", state="attached")  # the fresh board came and waits
    assert row.locator("input[name=score_a]").input_value() == "2"
    tablet.locator("h1").click()  # the director leaves the boxes: the board catches up
    tablet.wait_for_selector(f"#m-{other}.status-done")
    assert tablet.locator("#board[data-held]").count() == 0
