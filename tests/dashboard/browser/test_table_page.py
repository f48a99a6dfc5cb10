"""Issue 11: the table page's forms (item 8), a table out of service, the light by hand, staff
check-in and check-out at foosball, and a darts table page that is not a dead end.

At the tablet behind the bar (1280×800) and on a phone (390×844), Slovak unless said otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from sim.pins import PulseScript, drive_pulses
from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.hall import drop_balls, goal
from tests.dashboard.browser.web import log_in, unfold_menu, wait_live
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.matching import some
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from edge.agent import EdgeNode
    from tests.support.web import ServedHub


# pool-01..04 have no club-card rate in the shipped venue; pool-05 on do.
NODE_TABLES = ("pool-02", "pool-03", "foos-01", "darts-01")
SIZES = [pytest.param(TABLET, id="tablet"), pytest.param(PHONE, id="phone")]


@pytest.fixture(scope="module")
def members(lavos: ServedHub) -> dict[str, Any]:
    """A paid-up member and one who has not paid this year."""
    paid = lavos.api("POST", "/api/members", MANAGER, status=201, json={"name": "Ambra Tomáš"})
    lavos.api("POST", f"/api/members/{paid['id']}/fees", MANAGER, status=201, json={"year": paid["fee_year"]})
    unpaid = lavos.api("POST", "/api/members", MANAGER, status=201, json={"name": "Zadražil Miro"})
    return {"paid": paid["id"], "unpaid": unpaid["id"]}


@pytest.fixture
def page(open_page: Callable[..., Any], request: pytest.FixtureRequest) -> Any:
    size = request.param
    return open_page(size, mobile=size is PHONE)


def _stop_all(lavos: Any) -> None:
    for s in lavos.api("GET", "/api/sessions?open=true", STAFF):
        lavos.api("POST", f"/api/sessions/{s['id']}/stop", STAFF)


@pytest.fixture(autouse=True)
def clean_hall(lavos: ServedHub) -> Iterator[None]:
    yield
    _stop_all(lavos)
    for t in lavos.api("GET", "/api/tables", STAFF):
        if t["out_of_service"]:
            lavos.api("DELETE", f"/api/tables/{t['id']}/out-of-service", STAFF)


def _session_on(lavos: Any, table: str) -> Any:
    return lavos.api("GET", f"/api/tables/{table}", STAFF)["session"]


def _choose_member(page: Any, name: str, scope: str = "") -> None:
    page.locator(f"{scope} [data-member-pick] input[data-search]").fill(name[:5])
    page.locator(f"{scope} .member-results button", has_text=name).click()


def _to_english(page: Any) -> None:
    """The language switch; on a phone it is in the menu, which opens first."""
    unfold_menu(page)
    with page.expect_navigation():
        page.locator(".lang button[value=en]").click()


def _flash(page: Any) -> str:
    return " ".join(page.locator(".flash").all_inner_texts())


@pytest.fixture
def usual_alerts(lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]]) -> Iterator[None]:
    """The alerts of an ordinary evening open in the banner: balls potted with no game, foosball without a member."""
    drop_balls(nodes, "pool-02", 0, 1)
    drop_balls(nodes, "pool-03", 1, 1)
    goal(nodes, "foos-01")
    wait_until(lambda: len(lavos.api("GET", "/api/alerts", STAFF)) >= 3, timeout=10, what="three alerts open")
    yield
    for a in lavos.api("GET", "/api/alerts", STAFF):
        lavos.api("POST", f"/api/alerts/{a['id']}/ack", STAFF, json={"close": True})


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_start_is_in_reach_with_a_member_chip_and_prepaid_presets(
    lavos: ServedHub, members: dict[str, Any], usual_alerts: None, page: Any
) -> None:
    log_in(page, lavos, STAFF, "/tables/pool-05")
    assert page.locator("#alert-banner .alert").count() >= 3
    # On screen without scrolling: within the layout viewport (on the phone, wider content, like a
    # too wide top bar, zooms the page out and makes it taller than 844 CSS px; still all on screen).
    screen = page.evaluate("window.innerHeight")
    box = page.locator("#start").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= screen, (
        f"Spustiť at y={box and box['y']:.0f}..{box and box['y'] + box['height']:.0f} on a {screen} px screen"
    )
    chip = page.locator("#start-form .chip")
    assert chip.is_hidden()
    _choose_member(page, "Ambra Tomáš")
    assert chip.is_visible() and "Ambra Tomáš" in chip.inner_text()
    assert page.locator("#start-form input[name=member_id]").input_value() == str(members["paid"])
    page.locator("#start-form .chip-clear").click()  # chose the wrong one: clear it
    assert chip.is_hidden() and page.locator("#start-form input[name=member_id]").input_value() == ""
    _choose_member(page, "Ambra Tomáš")
    page.locator(".preset[data-minutes='60']").click()
    assert page.locator("input[name=prepaid_minutes]").input_value() == "60"
    assert page.locator(".preset[data-minutes='60']").get_attribute("aria-pressed") == "true"
    page.locator("#start").click()
    page.wait_for_url(lavos.base_url + "/")
    assert "Hra spustená na stole Pool 5." in _flash(page) or "Pool 5" in _flash(page)
    s = _session_on(lavos, "pool-05")
    assert s["member"]["name"] == "Ambra Tomáš" and s["prepaid_left_s"] > 59 * 60


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_the_club_rate_is_known_before_the_start_and_said_again_at_it(lavos: ServedHub, members: dict[str, Any], page: Any) -> None:
    """Issue 19, item 16: the floor marks the club-rate tables, the start form says what this table
    gives, and choosing a member who will not get the club rate warns before the game starts."""
    log_in(page, lavos, STAFF, "/")
    assert page.locator("#table-pool-05 .club-mark").inner_text() == "klubová zľava"
    assert page.locator("#table-pool-01 .club-mark").count() == 0
    page.goto(lavos.base_url + "/tables/pool-01")
    assert page.locator("#club-note").inner_text() == "Na tomto stole klubová zľava neplatí."
    warning = page.locator("#club-warning")
    expect(warning).to_be_hidden()
    _choose_member(page, "Ambra Tomáš")
    expect(warning).to_be_visible()  # before the start, not after
    assert "štandardnú sadzbu 6,00\u00a0€/h" in warning.inner_text()
    page.locator("#start-form .chip-clear").click()
    expect(warning).to_be_hidden()
    page.fill("#start-form input[name=card_uid]", "0a1b2c3d")  # a card typed is a member too
    expect(warning).to_be_visible()
    page.fill("#start-form input[name=card_uid]", "")
    _choose_member(page, "Ambra Tomáš")
    page.locator("#start").click()
    page.wait_for_url(lavos.base_url + "/")
    assert "Na stole Pool 1 klubová zľava neplatí: Ambra Tomáš hrá za štandardnú sadzbu." in _flash(page)

    page.goto(lavos.base_url + "/tables/pool-06")
    assert "Na tomto stole platí klubová zľava: 4,00\u00a0€/h" in page.locator("#club-note").inner_text()
    _choose_member(page, "Zadražil Miro")
    expect(page.locator("#fee-warning")).to_be_visible()
    page.locator("#start").click()
    page.wait_for_url(lavos.base_url + "/")
    assert "Zadražil Miro nemá zaplatený členský príspevok" in _flash(page)

    _stop_all(lavos)  # one member, one table
    # The API's start answers with the same warning (in English), and says none when the rate is the club's.
    started = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-02", "member_id": members["paid"]})
    assert started["warning_code"] == "card_table_not_eligible"
    assert started["warning"] == "The club discount does not apply on Pool 2: Ambra Tomáš plays at the standard rate."
    _stop_all(lavos)
    club = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-08", "member_id": members["paid"]})
    assert club["warning"] is None and club["warning_code"] is None
    _stop_all(lavos)
    _to_english(page)
    page.goto(lavos.base_url + "/tables/pool-04")
    _choose_member(page, "Ambra Tomáš")
    expect(page.locator("#club-warning")).to_be_visible()
    page.locator("#start").click()
    page.wait_for_url(lavos.base_url + "/")
    assert "The club discount does not apply on Pool 4: Ambra Tomáš plays at the standard rate." in _flash(page)


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_a_running_game_extend_only_when_prepaid_stop_far_from_pause_move_explicitly(
    lavos: ServedHub, members: dict[str, Any], page: Any
) -> None:
    lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-07", "member_id": members["paid"]})
    log_in(page, lavos, STAFF, "/tables/pool-07")
    assert page.locator("#extend").count() == 0, "Predĺžiť offered for a game without prepaid time"
    pause, stop = page.locator("#pause").bounding_box(), page.locator("#stop").bounding_box()
    assert pause and stop
    gap = stop["y"] - (pause["y"] + pause["height"])
    assert gap >= 24, f"Ukončiť is {gap:.0f} px from Pozastaviť"
    assert "btn-danger" in (page.locator("#stop").get_attribute("class") or "")
    assert page.locator("#stop").inner_text().strip() == "Ukončiť a vystaviť účet"

    # No table is chosen for staff: Presunúť without a choice moves nothing.
    select = page.locator("#transfer-form select")
    assert select.input_value() == ""
    page.locator("#transfer-form button").click()
    assert _session_on(lavos, "pool-07") is not None
    # A table without the club rate: said before the move and after it.
    warning = page.locator("#rate-warning")
    assert warning.is_hidden()
    select.select_option("pool-08")
    assert warning.is_hidden()
    select.select_option("pool-04")
    assert warning.is_visible()
    page.locator("#transfer-form button").click()
    page.wait_for_url(lavos.base_url + "/")
    text = _flash(page)
    assert "Hra presunutá na stôl Pool 4." in text and "Pozor, tu platí iná sadzba" in text
    assert _session_on(lavos, "pool-04") is not None

    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-09", "prepaid_minutes": 30})["id"]
    page.goto(lavos.base_url + "/tables/pool-09")
    page.locator("#extend").click()
    page.wait_for_url(lavos.base_url + "/tables/pool-09")
    assert lavos.api("GET", f"/api/sessions/{sid}", STAFF)["prepaid_left_s"] > 59 * 60


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_out_of_service_from_the_table_page(lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]], page: Any) -> None:
    log_in(page, lavos, STAFF, "/tables/pool-03")
    page.locator("#oos-form input[name=reason]").fill("čistenie")
    page.locator("#take-out").click()
    page.wait_for_url(lavos.base_url + "/tables/pool-03")
    panel = page.locator("#out-of-service")
    assert panel.count() == 1, _flash(page) + page.content()[:3000]
    assert "Mimo prevádzky" in panel.inner_text() and "čistenie" in panel.inner_text()
    assert page.locator("#start-form").count() == 0 and page.locator("#light-on").count() == 0
    t = lavos.api("GET", "/api/tables/pool-03", STAFF)
    assert (t["out_of_service"], t["out_of_service_reason"]) == (True, "čistenie")
    refused = lavos.api("POST", "/api/sessions", STAFF, status=409, json={"table": "pool-03"})
    assert "out of service" in refused["detail"]
    node, _ = nodes["pool-03"]
    assert not some(node.light).on
    _to_english(page)  # and in English
    assert "Out of service" in panel.inner_text() and page.locator("#in-service").inner_text().strip() == "Back in service"
    page.locator("#in-service").click()
    page.wait_for_url(lavos.base_url + "/tables/pool-03")
    assert page.locator("#start-form").is_visible() and "pool-03 is back in service." not in _flash(page)
    assert "Pool 3 is back in service." in _flash(page)
    assert lavos.api("GET", "/api/tables/pool-03", STAFF)["out_of_service"] is False


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_out_of_service_shows_live_on_the_floor_of_another_tablet(
    lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]], page: Any, open_page: Callable[..., Any]
) -> None:
    """The floor open on one device (tablet or phone); a bartender takes Pool 3 out of service at
    another tablet: the card says "Mimo prevádzky" (its own calm look, not an alarm) without a
    reload, and "Voľný" again once it is put back (how soon another tablet sees a staff action:
    bench/staff_action.py)."""
    log_in(page, lavos, STAFF, "/")
    wait_live(page)
    card = page.locator('[data-table-card="pool-03"]')
    assert card.get_attribute("data-state") != "out_of_service"
    other = open_page(TABLET)
    log_in(other, lavos, STAFF, "/tables/pool-03")
    other.locator("#oos-form input[name=reason]").fill("oprava")
    other.locator("#take-out").click()
    other.wait_for_url(lavos.base_url + "/tables/pool-03")
    expect(card).to_have_attribute("data-state", "out_of_service")
    expect(card.locator(".state-word")).to_have_text("Mimo prevádzky")
    other.locator("#in-service").click()
    other.wait_for_url(lavos.base_url + "/tables/pool-03")
    expect(card).to_have_attribute("data-state", "free")
    expect(card.locator(".state-word")).to_have_text("Voľný")


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_light_by_hand_raises_the_light_alert_like_the_button(lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]], page: Any) -> None:
    node, _ = nodes["pool-02"]
    log_in(page, lavos, STAFF, "/tables/pool-02")
    page.locator("#light-on").click()
    page.wait_for_url(lavos.base_url + "/tables/pool-02")
    wait_until(lambda: some(node.light).on, what="the relay on")
    alerts = [a for a in lavos.api("GET", "/api/alerts", STAFF) if a["table"] == "pool-02" and a["kind"] == "light_without_session"]
    assert len(alerts) == 1
    wait_until(lambda: lavos.api("GET", "/api/tables/pool-02", STAFF)["light"]["on"], what="the node reported the light")
    page.reload()
    page.locator("#light-off").click()
    page.wait_for_url(lavos.base_url + "/tables/pool-02")
    wait_until(lambda: not some(node.light).on, what="the relay off")
    assert not [a for a in lavos.api("GET", "/api/alerts", STAFF) if a["table"] == "pool-02" and a["kind"] == "light_without_session"]


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_foosball_staff_check_in_shows_until_when_and_check_out(
    lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]], members: dict[str, Any], page: Any
) -> None:
    log_in(page, lavos, STAFF, "/tables/foos-01")
    _choose_member(page, "Ambra Tomáš", "#checkin-form")
    assert page.locator("#checkin-form .chip").is_visible()
    page.locator("#checkin").click()
    page.wait_for_url(lavos.base_url + "/tables/foos-01")
    until = lavos.api("GET", "/api/foosball", STAFF)[0]["checkins"][0]["active_until"]
    assert until
    row = page.locator(".checkins li", has_text="Ambra Tomáš")
    assert "prihlásený do " in row.inner_text()
    page.goto(lavos.base_url + "/foosball")
    assert page.locator("#foos-foos-01 .checkin-until").count() == 1
    page.goto(lavos.base_url + "/tables/foos-01")
    page.locator(".checkins li", has_text="Ambra Tomáš").locator("button.checkout").click()
    page.wait_for_url(lavos.base_url + "/tables/foos-01")
    assert "Odhlásený člen Ambra Tomáš" in _flash(page)
    assert lavos.api("GET", "/api/foosball", STAFF)[0]["checkins"] == []
    assert "Nikto nie je prihlásený" in page.locator(".foos-panel").inner_text() or page.locator(".checkins li").count() == 0


@pytest.mark.parametrize("page", SIZES, indirect=True)
def test_darts_page_has_the_light_out_of_service_and_todays_use(
    lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]], page: Any
) -> None:
    node, factory = nodes["darts-01"]
    drive_pulses(factory.pin(node.config.pins.activity), 1, PulseScript(duration_s=0.05, chatter_edges=0))
    log_in(page, lavos, STAFF, "/tables/darts-01")
    page.locator("#light-on").click()
    page.wait_for_url(lavos.base_url + "/tables/darts-01")
    wait_until(lambda: some(node.light).on, what="the darts light on")
    log = page.locator("#use-log")
    assert "Svetlo zapnuté z obrazovky" in log.inner_text()
    wait_until(
        lambda: page.reload() or "Hralo sa" in page.locator("#use-log").inner_text(), timeout=10, what="the machine's use in the log"
    )
    assert page.locator("#take-out").is_visible()
    page.locator("#take-out").click()
    page.wait_for_url(lavos.base_url + "/tables/darts-01")
    wait_until(lambda: not some(node.light).on, what="out of service: dark")
    assert "Vyradený z prevádzky" in page.locator("#use-log").inner_text()
