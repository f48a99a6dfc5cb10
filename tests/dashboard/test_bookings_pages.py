"""The bookings on the pages and the API (dashboard.web.pages_bookings, pages_waiting, dashboard.api.bookings):
a phone booking from a table's page, the floor card from 15 min before, the walk-in's warning and
prepaid choices, the deposit asked for after no-shows, the day view, the waiting list on the floor,
the read-only API with availability, and the private iCal feed. The rules themselves are tested on
both databases in tests/broker/bookings/test_bookings.py; these test what the pages and the API do with them
(the API's and the feed's queries on both databases too)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from broker.bookings.bookings import BookTable, CancelBooking, MarkNoShow
from broker.bookings.waiting_list import JoinWaitingList, OfferTable
from broker.core.errors import ServiceError
from broker.floor.games import StartGame, StopGame
from broker.floor.table_service import SetOutOfService
from broker.hall.hub import Hub
from tests.dashboard.conftest import sqlite_only
from tests.support.sqlite_template import CHEAP
from tests.support.till_days import FakeClock, day_hub, local
from tests.support.web import Browser, add_users, bound_app

PASSWORD = "Rezervácia-20"
NOW = local(2026, 12, 4, 18)  # Friday 4 December 2026, 18:00


@dataclass
class Site:
    hub: Hub
    clock: FakeClock
    staff: Browser
    boss: Browser

    def at(self, h: int, mi: int = 0) -> None:
        self.clock.set(local(2026, 12, 4, h, mi))

    def api(self, method: str, path: str, user: str = "jana", **kw: Any) -> httpx.Response:
        result: httpx.Response = self.staff.client.request(method, path, auth=(user, PASSWORD), **kw)
        return result


@pytest.fixture
def site(db_url: str) -> Iterator[Site]:
    clock = FakeClock(NOW)
    with day_hub(db_url, clock) as (hub, _):
        add_users(hub, {"jana": "staff", "boss": "manager"}, PASSWORD, CHEAP)
        app = bound_app(hub)
        staff, boss = Browser(app), Browser(app)
        staff.login("jana", PASSWORD)
        boss.login("boss", PASSWORD)
        yield Site(hub, clock, staff, boss)


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split()).replace("\u00a0", " ")


def _book_form(site: Site, table: str = "pool-04", **fields: Any) -> httpx.Response:
    form = site.staff.get(f"/bookings/new?table={table}")
    key = re.search(r'name="form_key" value="([^"]+)"', form.text)
    assert key
    data = {
        "where": table,
        "day": "2026-12-04",
        "time": "20:00",
        "name": "Novák",
        "party_size": "4",
        "minutes": "120",
        "form_key": key.group(1),
    }
    data.update(fields)
    data["next"] = f"/tables/{table}"
    return site.staff.post("/bookings/new", data)


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_a_phone_booking_from_the_table_page_shows_on_its_card_from_15_minutes_before(site: Site) -> None:
    page = site.staff.get("/tables/pool-04")
    assert 'id="book-table" href="/bookings/new?table=pool-04"' in page.text  # "Rezervovať" on the table's page
    r = _book_form(site, phone="0903 123 456")
    assert r.status_code == 303 and r.headers["location"] == "/tables/pool-04"
    assert "Rezervované: Pool 4, 4. 12. 20:00 – 22:00, Novák (4)." in _text(site.staff.get("/tables/pool-04").text)
    site.at(19, 44)
    assert "Rezervované" not in _text(site.staff.get("/tables/pool-04/card").text)
    site.at(19, 45)
    assert "Rezervované 20:00 (Novák, 4)" in _text(site.staff.get("/tables/pool-04/card").text)
    assert "Rezervované 20:00 (Novák, 4)" in _text(site.staff.get("/floor/rooms").text)


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_a_refused_booking_comes_back_with_what_was_typed_and_the_free_tables(site: Site) -> None:
    _book_form(site)
    again = _book_form(site, name="Horák", time="21:00")
    assert again.status_code == 409
    said = _text(again.text)
    assert "Pool 4 je rezervovaný 20:00 – 22:00; v tom čase je voľný: Pool 1, Pool 2" in said
    assert 'value="Horák"' in again.text and 'value="21:00"' in again.text
    assert _book_form(site, time="25:00").status_code == 400  # not a time: bad input, the form again with the reason
    past = _book_form(site, name="Už sme tu", time="17:30")  # a guest ringing "we're already here" (18:00)
    assert past.status_code == 409
    assert "Čas 17:30 už prešiel: hostia, ktorí už prišli, nepotrebujú rezerváciu; zapnite im hru" in _text(past.text)


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_after_two_no_shows_the_form_asks_for_the_deposit(site: Site) -> None:
    for n in (1, 2):
        b = site.hub.execute(
            BookTable(
                table=f"pool-0{n}",
                start=local(2026, 12, 4, 18, 15),
                end=local(2026, 12, 4, 19),
                party_size=2,
                name="Neprišiel",
                phone="0905 000 111",
                actor="jana",
            )
        )
        site.at(18, 15)
        site.hub.execute(MarkNoShow(booking=b, actor="jana"))
    r = _book_form(site, name="Neprišiel", phone="0905 000 111")
    assert r.status_code == 409 and 'id="deposit"' in r.text
    assert "vyžiadajte si zálohu 10,00 €" in _text(r.text)
    key = re.search(r'name="form_key" value="([^"]+)"', r.text)
    assert key
    done = site.staff.post(
        "/bookings/new",
        {
            "where": "pool-04",
            "day": "2026-12-04",
            "time": "20:00",
            "name": "Neprišiel",
            "phone": "0905 000 111",
            "party_size": "2",
            "minutes": "120",
            "deposit": "10,00",
            "form_key": key.group(1),
            "next": "/bookings",
        },
    )
    assert done.status_code == 303
    day = _text(site.staff.get("/bookings").text)
    assert "čaká na zálohu" in day and "Záloha 10,00 €: na zaplatenie" in day


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_the_start_form_warns_a_walk_in_and_offers_prepaid_time_only_up_to_the_booking(site: Site) -> None:
    _book_form(site)
    site.at(19, 15)
    page = _text(site.staff.get("/tables/pool-04").text)
    assert "Rezervované od 20:00 (Novák, 4). Hra na 60 min by do nej zasiahla o 15 min. Predplatiť sa tu dá najviac 45 min." in page
    assert "Na dlhšie je voľný: Pool 1 Pool 2 Pool 3" in page
    html = site.staff.get("/tables/pool-04").text
    assert 'data-minutes="30"' in html and 'data-minutes="60"' not in html and 'max="45"' in html
    assert 'data-minutes="60"' in site.staff.get("/tables/pool-05").text  # nothing booked there


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_the_day_view_shows_the_grid_the_phones_and_prisli_starts_the_game(site: Site) -> None:
    _book_form(site, phone="0903 123 456")
    page = site.staff.get("/bookings")
    assert 'data-slot="pool-04 19:30"' in page.text and 'data-slot="pool-04 20:00"' not in page.text  # booked 20:00-22:00
    said = _text(page.text)
    assert "Novák (4)" in said and "+421 903 123 456" in said
    booking = re.search(r'data-booking="(\d+)"', page.text)
    assert booking
    site.at(19, 55)
    r = site.staff.post(f"/bookings/{booking.group(1)}/arrived", {"next": "/bookings"})
    assert r.status_code == 303 and r.headers["location"] == "/tables/pool-04"
    assert site.hub.open_game("pool-04") is not None
    assert site.staff.get("/waiting/link").text.strip() == "" and 'id="nav-waiting"' not in site.staff.get("/bills").text


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_the_day_grid_offers_a_slot_exactly_when_a_booking_of_it_is_taken(site: Site) -> None:
    """Issue 29's independent check: at 19:57, with a game on Pool 1 since 19:57, the grid offered
    "+" at 20:00 and 20:30 (a booking there: 409 "Pool 1 is being played until about 20:57"), and
    at every half hour since 16:00. Each cell of the grid against the rule itself, on a table with
    a game, one out of service, one offered to a waiting party and a free one: "+" exactly where a
    booking of that half hour is taken."""
    site.at(19, 57)
    site.hub.execute(StartGame(table="pool-01", actor="jana"))
    site.hub.execute(SetOutOfService(table="pool-03", out=True, reason="nové súkno", actor="boss"))
    party = site.hub.execute(JoinWaitingList(name="Kováč", party_size=3, kind="carom", actor="jana"))
    site.hub.execute(OfferTable(party=party, table="carom-01", actor="jana"))
    page = site.staff.get("/bookings").text
    offered = set(re.findall(r'data-slot="([\w-]+) (\d\d:\d\d)"', page))
    wrong = []
    for table in ("pool-01", "pool-02", "pool-03", "carom-01"):
        for minutes in range(16 * 60, 24 * 60, 30):
            start = local(2026, 12, 4, 16) + timedelta(minutes=minutes - 16 * 60)
            try:
                booking = site.hub.execute(
                    BookTable(table=table, start=start, end=start + timedelta(minutes=30), party_size=2, name="Skúška", actor="jana")
                )
            except ServiceError:
                taken = False
            else:
                taken = True
                site.hub.execute(CancelBooking(booking=booking, reason="skúška", actor="jana"))
            if ((table, f"{minutes // 60:02d}:{minutes % 60:02d}") in offered) != taken:
                wrong.append((table, minutes // 60, minutes % 60, taken))
    assert not wrong, f"the grid and the booking rule disagree (table, h, min, taken): {wrong}"
    assert ("pool-01", "20:30") not in offered and ("pool-01", "21:00") in offered and ("pool-02", "19:30") not in offered
    said = _text(page)
    assert "Hrá sa" in said and "Mimo prevádzky" in said and "Ponúknutý čakajúcim" in said


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_blocks_are_the_managers_and_list_the_guests_to_call(site: Site) -> None:
    site.hub.execute(
        BookTable(
            table="carom-01",
            start=local(2026, 12, 4, 20),
            end=local(2026, 12, 4, 22),
            party_size=2,
            name="Karambolista",
            phone="0911 222 333",
            actor="jana",
        )
    )
    form = {"kind": "tournament", "day": "2026-12-04", "start": "19:00", "end": "23:00", "label": "Lavosliga", "where": "carom-01"}
    assert site.staff.post("/bookings/blocks", form).status_code == 403
    r = site.boss.post("/bookings/blocks", form)
    assert r.status_code == 303
    said = _text(site.boss.get("/bookings").text)
    assert "Zavolajte: Karambolista (+421 911 222 333), rezervácia na stole Karambol o 20:00 teraz nemá voľný stôl." in said
    assert "Lavosliga" in said


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_the_waiting_list_on_the_floor_and_an_offer_taken(site: Site) -> None:
    for n in range(1, 9):
        site.hub.execute(StartGame(table=f"pool-0{n}", actor="jana"))
    assert 'id="nav-waiting"' not in site.boss.get("/reports").text  # nobody waits: no link in the top bar
    r = site.staff.post(
        "/waiting", {"name": "Kováč", "party_size": "2", "kind": "pool9", "phone": "0903 555 666", "sms_ok": "true", "next": "/"}
    )
    assert r.status_code == 303
    assert "Kováč , 2 · pool 9 stôp" in _text(site.staff.get("/").text)
    # Issue 29, item 40: while a party waits, the top bar of every page leads to the list, saying how many wait.
    for browser, path in ((site.boss, "/reports"), (site.staff, "/bills"), (site.staff, "/waiting/link")):
        link = re.search(r'<a href="/waiting" id="nav-waiting">(.*?)</a>', browser.get(path).text)
        assert link and _text(link.group(1)) == "Poradie 1", (path, link)
    game = site.hub.open_game("pool-04")
    assert game is not None
    site.hub.execute(StopGame(game=game.id, actor="jana"))
    site.hub.watchdog.tick()
    panel = _text(site.staff.get("/waiting/panel").text)
    assert "Pool 4 voľný → Kováč, 2" in panel
    assert "voľný → Kováč, 2" in _text(site.staff.get("/tables/pool-04/card").text)
    party = re.search(r'data-take="(\d+)"', site.staff.get("/waiting/panel").text)
    assert party
    r = site.staff.post(f"/waiting/{party.group(1)}/take", {"next": "/"})
    assert r.status_code == 303 and r.headers["location"] == "/tables/pool-04"
    assert site.hub.open_game("pool-04") is not None
    assert site.staff.get("/waiting/link").text.strip() == "" and 'id="nav-waiting"' not in site.staff.get("/bills").text


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_a_stale_beru_on_the_floor_says_why_on_the_floor(site: Site) -> None:
    """Issue 29's independent check: "Berú" on an offer withdrawn meanwhile answered 303 with no
    message. The floor redraws its waiting panel live from /waiting/panel, whose forms went back to
    that fragment (no page, so no message); they go back to the page the panel is part of, which
    says the refusal in Slovak."""
    for n in range(1, 9):
        site.hub.execute(StartGame(table=f"pool-0{n}", actor="jana"))
    site.staff.post("/waiting", {"name": "Kováč", "party_size": "2", "kind": "pool9", "next": "/"})
    game = site.hub.open_game("pool-04")
    assert game is not None
    site.hub.execute(StopGame(game=game.id, actor="jana"))
    site.hub.watchdog.tick()  # Pool 4 offered to Kováč; the floor's panel is redrawn (app.js fetches it from the floor)
    party = ""
    for page in ("/", "/waiting"):
        panel = site.staff.get("/waiting/panel", headers={"Referer": f"http://testserver{page}"}).text
        form = re.search(r'action="/waiting/(\d+)/take"[^>]*>.*?name="next" value="([^"]*)"', panel, re.S)
        assert form and form.group(2) == page, (page, form)
        party = form.group(1)
    site.hub.execute(SetOutOfService(table="pool-04", out=True, reason="rozliaty nápoj", actor="boss"))  # meanwhile, on another tablet
    r = site.staff.post(f"/waiting/{party}/take", {"next": "/"})
    assert r.status_code == 303 and r.headers["location"] == "/"
    said = _text(site.staff.get("/").text)
    assert "Nedá sa vykonať: Pool 4 medzitým obsadili; ponuka sa ruší a Kováč čaká ďalej" in said, said[:600]
    assert site.hub.open_game("pool-04") is None


def test_the_api_lists_bookings_with_phones_books_and_says_when_tables_are_free(site: Site) -> None:
    r = site.api(
        "POST",
        "/api/bookings",
        json={
            "table": "carom-01",
            "start": "2026-12-04T20:00",
            "end": "2026-12-04T22:00",
            "party_size": 2,
            "name": "Api",
            "phone": "0903 123 456",
        },
    )
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["start"].startswith("2026-12-04T19:00") and made["phone"] == "+421 903 123 456"
    listed = site.api("GET", "/api/bookings").json()
    assert [b["name"] for b in listed] == ["Api"]
    free = site.api("GET", "/api/availability?kind=carom&from=2026-12-04&to=2026-12-04").json()
    assert [(s["start"][11:16], s["end"][11:16]) for s in free["tables"][0]["free"]] == [("17:00", "19:00"), ("21:00", "23:00")]
    assert "phone" not in str(free) and "Api" not in str(free)
    clash = site.api(
        "POST",
        "/api/bookings",
        json={"table": "carom-01", "start": "2026-12-04T21:00", "end": "2026-12-04T22:00", "party_size": 2, "name": "Druhý"},
    )
    assert clash.status_code == 409 and "Carom is booked 20:00–22:00" in clash.json()["detail"]
    wrong = site.api(
        "POST",
        "/api/bookings",
        json={"table": "pool-06", "kind": "carom", "start": "2026-12-04T20:00", "end": "2026-12-04T22:00", "party_size": 2, "name": "Druh"},
    )
    assert wrong.status_code == 409 and "Pool 6 is a 9-ft pool table, not the carom table" in wrong.json()["detail"]
    assert site.api("POST", f"/api/bookings/{made['id']}/cancel", json={"reason": "zmena plánov"}).json()["state"] == "cancelled"
    assert TestClient(site.staff.client.app).get("/api/bookings").status_code == 401  # no login, no phone numbers


def test_the_private_ical_feed_shows_bookings_cancelled_ones_as_cancelled_and_no_phone(site: Site) -> None:
    kept = site.hub.execute(
        BookTable(
            table="pool-02",
            start=local(2026, 12, 4, 20),
            end=local(2026, 12, 4, 22),
            party_size=3,
            name="Zostáva",
            phone="0903 123 456",
            actor="jana",
        )
    )
    gone = site.hub.execute(
        BookTable(table="pool-03", start=local(2026, 12, 4, 20), end=local(2026, 12, 4, 22), party_size=2, name="Zrušil", actor="jana")
    )
    site.hub.execute(CancelBooking(booking=gone, actor="jana"))
    r = site.staff.post("/bookings/calendar")
    assert r.status_code == 303
    page = site.staff.get("/bookings").text
    link = re.search(r"(/api/calendar/[A-Za-z0-9_-]+\.ics)", page)
    assert link
    ics = site.staff.client.get(link.group(1))
    assert ics.status_code == 200 and ics.headers["content-type"].startswith("text/calendar")
    body = ics.text.replace("\r\n ", "")
    assert f"UID:booking-{kept}@lavos.lavos" in body and "SUMMARY:Pool 2: Zostáva (3)" in body
    assert "DTSTART:20261204T190000Z" in body
    assert "STATUS:CANCELLED" in body and "SUMMARY:Pool 3: Zrušil (2)" in body
    assert "903" not in body
    site.staff.post("/bookings/calendar/revoke")
    assert site.staff.client.get(link.group(1)).status_code == 404
    assert site.staff.client.get("/api/calendar/not-a-real-token-at-all.ics").status_code == 404


def _my_feed(site: Site) -> str:
    site.staff.login("jana", PASSWORD)
    assert site.staff.post("/bookings/calendar").status_code == 303
    link = re.search(r"(/api/calendar/[A-Za-z0-9_-]+\.ics)", site.staff.get("/bookings").text)
    assert link
    assert site.staff.client.get(link.group(1)).status_code == 200
    return link.group(1)


@sqlite_only  # an UPDATE in the account's own transaction; the feed's query runs on both in the test above
def test_a_disabled_or_demoted_accounts_ical_link_ends_and_stays_ended(site: Site) -> None:
    """The link shows every booking with the guests' names to whoever has it, without a login: it
    is the account's, so disabling the account or changing its role ends it (on the manager's page)."""
    site.hub.execute(
        BookTable(table="pool-02", start=local(2026, 12, 4, 20), end=local(2026, 12, 4, 22), party_size=3, name="Hosť", actor="jana")
    )
    link = _my_feed(site)
    assert site.boss.post("/users/jana/active", {"active": "0"}).status_code == 303
    assert site.staff.client.get(link).status_code == 404
    assert site.boss.post("/users/jana/active", {"active": "1"}).status_code == 303
    assert site.staff.client.get(link).status_code == 404  # enabled again: the old link stays ended
    link = _my_feed(site)
    assert site.boss.post("/users/jana/role", {"role": "manager"}).status_code == 303
    assert site.staff.client.get(link).status_code == 404
    link = _my_feed(site)  # a manager's own link now; and back to staff ends it too
    assert site.boss.post("/users/jana/role", {"role": "staff"}).status_code == 303
    assert site.staff.client.get(link).status_code == 404


@sqlite_only  # the pages over rules tested on both databases (tests/broker/bookings/test_bookings.py)
def test_a_table_taken_out_of_service_lists_its_bookings_to_call(site: Site) -> None:
    _book_form(site, phone="0903 123 456")
    r = site.staff.post("/tables/pool-04/out-of-service", {"reason": "oprava"})
    assert r.status_code == 303
    said = _text(site.staff.get("/tables/pool-04").text)
    assert "Zavolajte: Novák (+421 903 123 456), rezervácia na stole Pool 4 o 20:00 teraz nemá voľný stôl." in said
