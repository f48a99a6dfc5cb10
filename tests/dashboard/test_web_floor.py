"""The floor view, the table panel, the bill and language, through HTTP against a real service and Mosquitto."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from broker.floor.games import PauseGame, StartGame
from broker.hall.read_models import HallReads
from broker.storage.members import add_member, assign_card, record_fee
from broker.till.tabs import AddTabItem
from tests.dashboard.conftest import CHEAP, PASSWORD, STAFF, sqlite_only
from tests.support.hub import on_writer
from tests.support.matching import found
from tests.support.waiting import wait_until
from tests.support.web import Browser, add_users, bound_app, event, light, node_link, status

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto
    from tests.dashboard.conftest import FakeClock


pytestmark = sqlite_only


@pytest.fixture
def browser(service: Hub) -> Browser:
    add_users(service, {STAFF: "staff"}, PASSWORD, CHEAP)
    b = Browser(bound_app(service))
    b.login(STAFF, PASSWORD)
    return b


def card_states(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-table-card="([\w-]+)" data-src="[^"]+" data-state="(\w+)"', html))


def card(html: str, table: str) -> str:
    m = re.search(rf'<a class="table-card[^"]*" href="/tables/{table}".*?</a>', html, re.S)
    assert m, f"no card for {table}"
    return m.group(0)


def test_every_table_by_room_with_its_state_in_colour_and_word(
    browser: Browser, service: Hub, clock: FakeClock, mosquitto: Mosquitto
) -> None:
    tables = ["pool-01", "pool-02", "pool-03", "pool-04", "pool-05", "pool-06", "pool-07", "pool-08"]
    with (
        node_link(mosquitto, tables[0]) as n1,
        node_link(mosquitto, tables[1]) as n2,
        node_link(mosquitto, tables[2]) as n3,
        node_link(mosquitto, tables[3]) as n4,
        node_link(mosquitto, tables[4]) as n5,
        node_link(mosquitto, tables[5]) as n6,
        node_link(mosquitto, tables[6]) as n7,
        node_link(mosquitto, tables[7]) as n8,
    ):
        nodes = dict(zip(tables, (n1, n2, n3, n4, n5, n6, n7, n8)))
        for t, n in nodes.items():
            status(n, t, "online")
        wait_until(lambda: card_states(browser.get("/").text).get("pool-08") == "free", what="nodes online")

        idle_sid = service.execute(StartGame(table="pool-05", actor="test"))
        clock.advance(minutes=21)
        service.watchdog.tick()  # no drop for 21 min: the idle alert
        service.execute(StartGame(table="pool-02", actor="test"))
        paused = service.execute(StartGame(table="pool-03", actor="test"))
        service.execute(PauseGame(game=paused, actor="test"))
        service.execute(StartGame(table="pool-04", prepaid_minutes=4, actor="test"))
        light(nodes["pool-06"], "pool-06", True, "button")
        status(nodes["pool-07"], "pool-07", "offline")
        event(nodes["pool-08"], "pool-08", "sensor_fault", 1, {"sensor": "pocket-2", "kind": "stuck"})
        expected = {
            "pool-01": "free",
            "pool-02": "playing",
            "pool-03": "paused",
            "pool-04": "prepaid_ending",
            "pool-05": "idle",
            "pool-06": "light_no_game",
            "pool-07": "offline",
            "pool-08": "sensor_fault",
        }
        wait_until(lambda: {t: card_states(browser.get("/").text).get(t) for t in expected} == expected, what="every state on the floor")
        html = browser.get("/").text
        assert idle_sid

    # Every table of the venue, once, in its room's section, rooms in the venue file's order.
    states = card_states(html)
    assert sorted(states) == sorted(service.tables)
    rooms = list(re.findall(r'<details class="room" id="room-(\w+)"', html))
    assert rooms == ["main", "salonik", "games"]
    salonik = html[html.index('id="room-salonik"') : html.index('id="room-games"')]
    assert "pool-09" in salonik and "pool-10" in salonik and "pool-01" not in salonik
    words = {
        "free": "Voľný",
        "playing": "Hrá sa",
        "paused": "Pozastavený",
        "prepaid_ending": "Končí predplatený čas",
        "idle": "Nehrá sa",
        "light_no_game": "Svetlo bez hry",
        "offline": "Modul odpojený",
        "sensor_fault": "Porucha senzora",
    }
    for table, state in expected.items():
        c = card(html, table)
        assert f"state-{state}" in c and words[state] in c, (table, c)
    # A never-seen node (no status ever) is offline too; a running table shows amount, time and tariff.
    assert states["darts-01"] == "offline"
    playing = card(html, "pool-02")
    assert "0,00\u00a0€" in playing and "Štandard" in playing and "18:21" in playing  # venue time, not UTC


def test_panel_actions_then_the_itemised_bill_with_vat(browser: Browser, service: Hub, clock: FakeClock) -> None:
    def _write(db: Any) -> int:
        m = add_member(db, "Zadražil Miro", actor="test")
        assign_card(db, m.id, "0a1b2c3d", actor="test")
        record_fee(db, m.id, 2026, actor="test")
        member_id = m.id
        return member_id

    member_id = on_writer(service, _write)
    r = browser.post("/tables/pool-05/start", {"member_id": str(member_id), "tariff": "", "card_uid": "", "prepaid_minutes": ""})
    assert r.status_code == 303 and r.headers["location"] == "/"
    sid = service.open["pool-05"].id
    assert "Hra spustená" in browser.get("/").text  # the flash message, once
    clock.advance(minutes=30)
    assert browser.post(f"/sessions/{sid}/extras", {"extra": "topping", "quantity": "2", "next": "/tables/pool-05"}).status_code == 303
    assert browser.post(f"/sessions/{sid}/pause", {"next": "/tables/pool-05"}).status_code == 303
    clock.advance(minutes=10)
    assert browser.post(f"/sessions/{sid}/resume", {"next": "/tables/pool-05"}).status_code == 303
    r = browser.post(f"/sessions/{sid}/transfer", {"table": "pool-06", "next": "/"})
    assert r.status_code == 303 and "pool-06" in service.open
    clock.advance(minutes=15)
    assert browser.post(f"/sessions/{sid}/extend", {"minutes": "30", "next": "/"}).status_code == 303
    panel = browser.get("/tables/pool-06").text
    assert "Zadražil Miro" in panel and "Klubová karta" in panel
    r = browser.post(f"/sessions/{sid}/stop", {"next": "/tables/pool-06"})
    # Stopping lands on the tab's pay page (issue 19, item 9): what the guests owe in full is its headline.
    assert r.headers["location"] == f"/tabs/{HallReads(service).till.tab_of_game(sid)}/pay"
    assert found(r'id="pay-owed">([^<]+)<', browser.get(r.headers["location"]).text).group(1) == "4,20\u00a0€"  # the game and the toppings
    bill = browser.get(f"/sessions/{sid}/bill").text
    # 30 min on Pool 5 + 15 min on Pool 6 at 4 €/h (paid-up club card): 2,00 + 1,00; the two toppings are on the tab.
    assert "Pool 5: Klubová karta, 4,00\u00a0€/h, 30 min" in bill and "Pool 6: Klubová karta, 4,00\u00a0€/h, 15 min" in bill
    total = found(r'id="bill-total">([^<]+)<', bill).group(1)
    assert total == "3,00\u00a0€"
    assert "DPH 23 %" in bill and "0,56\u00a0€" in bill and "2,44\u00a0€" in bill  # VAT contained in 3,00 €, and the net
    assert found(r'id="bill-tab-total">([^<]+)<', bill).group(1) == "4,20\u00a0€"  # the whole tab: the game and the toppings
    assert "10.\u00a011.\u00a02026 18:00" in bill  # started, venue time, Slovak format
    assert 'href="/static/print.css" media="print"' in bill and "data-print" in bill


def test_a_refused_action_says_why_and_changes_nothing(browser: Browser, service: Hub) -> None:
    sid = service.execute(StartGame(table="pool-01", actor="test"))
    service.execute(StartGame(table="pool-02", actor="test"))
    r = browser.post(f"/sessions/{sid}/transfer", {"table": "pool-02", "next": "/tables/pool-01"})
    assert r.status_code == 303 and r.headers["location"] == "/tables/pool-01"
    assert "Nedá sa vykonať: Na stole Pool 2 sa hrá" in browser.get("/tables/pool-01").text
    assert service.open["pool-01"].id == sid
    r = browser.post("/tables/pool-01/start", {})
    assert "Hru sa nepodarilo spustiť: Na stole Pool 1 už beží hra č." in browser.get(r.headers["location"]).text


@pytest.mark.parametrize(
    "path, data",
    [
        ("/tables/pool-03/start", {"prepaid_minutes": "abc"}),
        ("/tables/pool-03/start", {"prepaid_minutes": "-5"}),
        ("/tables/pool-03/start", {"member_id": "99999999999999999999"}),
        ("/tables/pool-03/start", {"card_uid": "x" * 5000}),
        ("/tables/pool-03/start", {"member_id": "424242"}),
        ("/tables/pool-03/start", {"card_uid": "\u0000\u0007"}),
        ("/tables/nosuch-99/start", {}),
        ("/sessions/abc/stop", {}),
        ("/sessions/0/pause", {}),
        ("/sessions/99999/resume", {}),
        ("/sessions/1/extend", {"minutes": "1e9"}),
        ("/sessions/1/extras", {"extra": "champagne", "quantity": "1"}),
        ("/sessions/1/extras", {"extra": "topping", "quantity": "0"}),
        ("/sessions/1/transfer", {"table": ""}),
        ("/alerts/abc/ack", {}),
        ("/alerts/999/ack", {}),
        ("/lang", {"lang": "de"}),
    ],
)
def test_garbage_form_input_is_a_4xx_page_or_a_refusal_never_a_500(browser: Browser, service: Hub, path: Any, data: Any) -> None:
    service.execute(StartGame(table="pool-01", actor="test"))  # session 1 exists, so its routes see real state
    r = browser.post(path, {"next": "/", **data})
    assert r.status_code in (303, 400, 403, 404, 409, 422), f"{path} {data} → {r.status_code}"
    if r.status_code != 303:
        assert r.headers["content-type"].startswith("text/html") and "<h1>" in r.text
    assert not service.open.get("pool-03")


def test_unknown_pages_are_404_pages_and_unknown_api_paths_stay_json(browser: Browser) -> None:
    r = browser.get("/no/such/page")
    assert r.status_code == 404 and "Takáto stránka neexistuje" in r.text
    assert browser.get("/tables/nosuch-99").status_code == 404
    assert browser.get("/sessions/424242/bill").status_code == 404
    r = browser.client.get("/api/no-such-route")
    assert r.status_code == 404 and r.json()["detail"]


def test_language_switch_is_remembered_and_formats_follow(browser: Browser, service: Hub, clock: FakeClock) -> None:
    sid = service.execute(StartGame(table="pool-01", actor="test"))
    clock.advance(minutes=90)
    reads = HallReads(service)
    tab = reads.till.game_tab(sid)
    service.execute(AddTabItem(tab=tab, product=reads.till.product_of_extra("entry_guest").id, actor="test"))
    slovak = browser.get("/").text
    assert '<html lang="sk">' in slovak and "Modul odpojený" in slovak and "9,00\u00a0€" in slovak  # the game's time
    r = browser.post("/lang", {"lang": "en", "next": "/tables/pool-01"})
    assert r.status_code == 303 and r.headers["location"] == "/tables/pool-01"
    assert "lavos_lang=en" in r.headers["set-cookie"]
    english = browser.get("/").text
    assert '<html lang="en">' in english and "Node offline" in english and "€9.00" in english and "Modul odpojený" not in english
    bill = browser.get(f"/sessions/{sid}/bill").text
    assert "€14.00" in bill and "10\u00a0Nov\u00a02026, 18:00" in bill  # the whole tab: 9,00 + the entry 5,00
    assert "Tournament entry (non-member)" in browser.get(f"/tabs/{tab}").text
    browser.post("/lang", {"lang": "sk"})
    assert "Modul odpojený" in browser.get("/").text


def test_alert_banner_and_acknowledgement(browser: Browser, service: Hub, mosquitto: Mosquitto) -> None:
    with node_link(mosquitto, "foos-01") as node:
        event(node, "foos-01", "goal", 1, {"side": "home"})
        wait_until(lambda: "alert-loud" in browser.get("/").text, what="the foosball alert in the banner")
    page = browser.get("/foosball").text
    assert "Hrá sa bez prihláseného člena" in page and "alert-loud" in page
    alert_id = int(found(r'data-alert-id="(\d+)"', page).group(1))
    r = browser.post(f"/alerts/{alert_id}/ack", {"next": "/foosball"})
    assert r.status_code == 303 and r.headers["location"] == "/foosball"
    assert 'data-alert-id="' not in browser.get("/alerts/banner").text
    assert "Potvrdené" in browser.get("/alerts").text or "✓" in browser.get("/alerts").text


def test_every_running_amount_says_when_it_changes_by_itself(browser: Browser, service: Hub, clock: FakeClock) -> None:
    """Issue 19, item 20: the card, the table page's tab button, the game's bill, its tab and its pay
    page say in how many ms their amount changes with no event (app.js fetches them again then);
    a paused game's never does."""
    sid = service.execute(StartGame(table="carom-01", actor=STAFF))
    clock.advance(seconds=30.5)
    tab = found(r'href="/tabs/(\d+)"', browser.get("/tables/carom-01").text).group(1)
    due = {
        "/": r'id="table-carom-01"[^>]*data-moves-ms="(\d+)"',
        "/tables/carom-01": r'id="open-tab" data-moves-ms="(\d+)"',
        f"/sessions/{sid}/bill": r'id="bill-lines" data-moves-ms="(\d+)"',
        f"/tabs/{tab}": r'id="tab-vat" data-moves-ms="(\d+)"',
        f"/tabs/{tab}/pay": r'id="pay-owed-line" data-moves-ms="(\d+)"',
    }
    for path, pattern in due.items():
        assert int(found(pattern, browser.get(path).text).group(1)) == 29_500, path  # the second minute starts at 60 s
    service.execute(PauseGame(game=sid, actor=STAFF))
    for path in due:
        assert "data-moves-ms" not in browser.get(path).text, path
