"""The payment page, the receipt page and the payments API over a real hub: forms with CSRF, Slovak
refusals that keep what was typed and change nothing, a resent form that pays once, the manager's
reversal, the receipt's legal content."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient

from broker.accounts.users import issue_token
from broker.till.payments import PayTab
from tests.dashboard.conftest import MANAGER, STAFF, bearer, sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import on_writer
from tests.support.matching import found, some
from tests.support.web import bound_app
from tests.till.payments_support import add_item, clock, facade, played_tab, rows, service, set_split  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from broker.hall.hub import Hub
    from tests.dashboard.conftest import FakeClock
    from tests.dashboard.pages_client import Pages


pytestmark = sqlite_only  # both backends' SQL is in test_payments_writer; these test the pages


def _key(html: str) -> str:
    return found(r'name="request_id" value="([^"]+)"', html).group(1)


def test_pay_cash_with_change_then_the_receipt_then_a_resent_form(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)
    add_item(facade, tab, "Kofola", 250, 19)
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff)
    assert "11,50" in html and "Hotovosť" in html and "Karta" in html and "Prijaté" in html
    form = {"method": "cash", "amount": "11,50", "tendered": "20", "part": "", "request_id": _key(html)}
    r = pages.post(f"/tabs/{tab}/pay", form, client=pages.staff)
    assert r.status_code == 303 and r.headers["location"].endswith("?print=1")
    receipt = pages.follow(r)
    for text in (
        "Doklad",
        "Doklad</strong> č. 1",
        "Hotovosť",
        "Prijaté",
        "20,00",
        "Výdavok",
        "8,50",
        "Kofola",
        "Toto nie je pokladničný doklad",
        "ŠBK Lavos",
        "IČO",
        "chýba",
    ):
        assert text in receipt, (text, receipt[receipt.find("<article") :][:2500])
    assert "Základ DPH 23 %" in receipt and "DPH 19 %" in receipt
    before = rows(facade)
    again = pages.post(f"/tabs/{tab}/pay", form, client=pages.staff)  # the same form sent again
    assert again.headers["location"] == r.headers["location"].removesuffix("?print=1")  # the same receipt, not printed again
    assert "už bola prijatá" in pages.page(again.headers["location"], client=pages.staff) and rows(facade) == before


@pytest.mark.parametrize(
    ("amount", "tendered", "method", "says"),
    [
        ("-5", "", "cash", "Zadajte sumu v eurách"),
        ("1,234", "", "cash", "Zadajte sumu v eurách"),
        ("abc", "", "cash", "Zadajte sumu v eurách"),
        ("0", "", "card", "Zadajte sumu v eurách"),
        ("99", "", "card", "je viac ako"),
        ("9", "5", "cash", "je menej ako"),
        ("9", "xyz", "cash", "Zadajte prijatú hotovosť"),
        ("9", "", "bitcoin", "nie je spôsob platby"),
    ],
)
def test_bad_forms_are_refused_in_slovak_keep_what_was_typed_and_change_nothing(
    pages: Pages, facade: HubFacade, clock: FakeClock, amount: Any, tendered: Any, method: Any, says: Any
) -> None:
    tab = played_tab(facade, clock)
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff)
    before = rows(facade)
    r = pages.post(
        f"/tabs/{tab}/pay", {"method": method, "amount": amount, "tendered": tendered, "request_id": _key(html)}, client=pages.staff
    )
    assert r.status_code in (400, 409) and says in r.text, r.text[-3000:]
    assert f'value="{amount}"' in r.text
    assert rows(facade) == before


def test_a_paid_tab_and_the_manager_reversal(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)
    taken = facade.execute(PayTab(tab=tab, method="card", amount_cents=900, actor=STAFF))
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff)
    assert "Zaplatené v plnej výške" in html and "Vrátiť" not in html and 'id="pay-form"' not in html
    before = rows(facade)
    r = pages.post(f"/tabs/{tab}/pay", {"method": "card", "amount": "1", "request_id": "stale-form-123"}, client=pages.staff)
    assert r.status_code == 409 and "je už zaplatený" in r.text and rows(facade) == before
    staff_try = pages.post(f"/payments/{taken.payment_id}/reverse", {"reason": "omyl"}, client=pages.staff)
    assert staff_try.status_code == 403 and rows(facade) == before
    html = pages.page(f"/tabs/{tab}/pay")
    assert "Vrátiť" in html
    short = pages.post(f"/payments/{taken.payment_id}/reverse", {"reason": "x"})
    assert short.status_code == 409 and "Uveďte, prečo" in short.text and rows(facade) == before
    r = pages.post(f"/payments/{taken.payment_id}/reverse", {"reason": "platil dvakrát", "request_id": "rev-key-0001"})
    receipt = pages.follow(r)
    assert "Vrátenie k dokladu č. 1" in receipt and "-9,00" in receipt and "platil dvakrát" in receipt
    assert "Otvorený" in pages.page(f"/tabs/{tab}/pay", client=pages.staff)


def test_the_receipt_in_english_says_it_is_not_fiscal_and_the_manager_sees_the_missing_ids(
    pages: Pages, facade: HubFacade, clock: FakeClock
) -> None:
    tab = played_tab(facade, clock)
    taken = facade.execute(PayTab(tab=tab, method="cash", amount_cents=900, tendered_cents=1000, actor=STAFF))
    pages.post("/lang", {"lang": "en", "next": "/"}, client=pages.staff)
    html = pages.page(f"/receipts/{taken.payment_id}", client=pages.staff)
    assert "This is not a fiscal receipt" in html and "Toto nie je pokladničný doklad" in html and "Change" in html
    assert 'id="issuer-warning"' not in html
    assert 'id="issuer-warning"' in pages.page(f"/receipts/{taken.payment_id}")
    pages.page("/receipts/999999", 404)


def test_the_api_pays_once_per_request_id_and_reverses_as_manager(service: Hub, facade: HubFacade, clock: FakeClock) -> None:
    from broker.accounts.users import create_user, new_password
    from tests.dashboard.conftest import CHEAP, PASSWORD

    password = new_password(PASSWORD, CHEAP)

    def _write(db: Any) -> tuple[dict[str, str], dict[str, str]]:
        create_user(db, STAFF, password, "staff", actor="test")
        create_user(db, MANAGER, password, "manager", actor="test")
        staff, manager = bearer(issue_token(db, STAFF, "t", actor="test")), bearer(issue_token(db, MANAGER, "t", actor="test"))
        return staff, manager

    staff, manager = on_writer(service, _write)
    tab = played_tab(facade, clock)
    with TestClient(bound_app(service, pages=False)) as c:
        body = {"method": "cash", "amount_cents": 500, "tendered_cents": 1000, "request_id": "api-key-0001"}
        first = c.post(f"/api/tabs/{tab}/payments", json=body, headers=staff)
        assert first.status_code == 201 and first.json()["change_cents"] == 500 and not first.json()["repeated"]
        again = c.post(f"/api/tabs/{tab}/payments", json=body, headers=staff)
        assert again.status_code == 200 and again.json()["id"] == first.json()["id"] and again.json()["repeated"]
        over = c.post(f"/api/tabs/{tab}/payments", json={"method": "card", "amount_cents": 401}, headers=staff)
        assert over.status_code == 409 and "more than" in over.json()["detail"]
        assert c.post(f"/api/tabs/{tab}/payments", json={"method": "card", "amount_cents": "4"}, headers=staff).status_code == 422
        view = c.get(f"/api/tabs/{tab}/payments", headers=staff).json()
        assert (view["status"], view["owed_cents"], len(view["payments"])) == ("partly_paid", 400, 1)
        pid = first.json()["id"]
        assert c.post(f"/api/payments/{pid}/reverse", json={"reason": "omyl"}, headers=staff).status_code == 403
        back = c.post(f"/api/payments/{pid}/reverse", json={"reason": "omyl"}, headers=manager)
        assert back.status_code == 201 and back.json()["amount_cents"] == -500 and back.json()["reverses_no"] == 1
        receipt = c.get(f"/api/payments/{back.json()['id']}/receipt", headers=staff).json()
        assert receipt["reverses_number"] == 1 and not receipt["fiscal"] and receipt["missing_issuer"] == ["ico", "dic"]
        printed = c.post(f"/api/payments/{pid}/print", headers=staff)
        assert printed.status_code == 409 and "No receipt printer" in printed.json()["detail"]
        assert c.get("/api/payments/999999", headers=staff).status_code == 404


# -- issue 19: the bartender's fast path ------------------------------------------------------


def _quick_forms(html: str) -> list[dict[str, str]]:
    """The one-tap payment buttons' forms: each one's hidden fields."""
    forms = re.findall(r'<form method="post" action="/tabs/\d+/pay" class="quick-form">(.*?)</form>', html, re.S)
    return [dict(re.findall(r'name="(\w+)" value="([^"]*)"', f)) for f in forms]


def test_stop_lands_on_the_pay_page_with_the_whole_bill_and_one_tap_pays_it(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    from broker.floor.games import StartGame

    sid = facade.execute(StartGame(table="pool-02", actor=STAFF))
    tab = facade.reads.till.tab_of_game(sid)
    assert tab is not None
    add_item(facade, tab, "Kofola", 250, 19)
    clock.advance(minutes=90)  # 9,00 € of table time
    r = pages.post(f"/sessions/{sid}/stop", {"next": "/tables/pool-02"}, client=pages.staff)
    assert r.headers["location"] == f"/tabs/{tab}/pay"  # item 9: not the game's bill (its 9,00 € only)
    html = pages.page(r.headers["location"], client=pages.staff)
    assert found(r'id="pay-owed">([^<]+)<', html).group(1) == "11,50\u00a0€"
    quick = _quick_forms(html)
    cash, card = quick[0], quick[1]
    assert (cash["method"], cash["amount"], cash["expect"], card["method"]) == ("cash", "11,50", "1150", "card")
    notes = [q["tendered"] for q in quick if "tendered" in q]
    assert notes == ["20,00", "50,00", "100,00"] and len({q["request_id"] for q in quick}) == 1  # one key: one payment
    assert "vydať 8,50\u00a0€" in html  # the 20 € note's change, on its button
    before = rows(facade)
    r = pages.post(f"/tabs/{tab}/pay", quick[2], client=pages.staff)  # one tap: the guest hands over 20 €
    receipt = pages.follow(r)
    assert "Vydať" in receipt and "8,50\u00a0€" in receipt and "Kofola" in receipt
    again = pages.post(f"/tabs/{tab}/pay", card, client=pages.staff)  # a second tap, on another button
    assert again.status_code == 303 and "/receipts/" in again.headers["location"]
    assert len(rows(facade)[0]) == len(before[0]) + 1 and some(facade.reads.till.tab_payments(tab)).status == "paid"


def test_a_one_tap_button_drawn_before_a_drink_was_added_is_refused(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)  # 9,00 €
    quick = _quick_forms(pages.page(f"/tabs/{tab}", client=pages.staff))  # the tab page's buttons (a sale at the bar pays there)
    assert quick[0]["expect"] == "900"
    add_item(facade, tab, "Pivo", 250, 23)  # another tablet, meanwhile
    before = rows(facade)
    r = pages.post(f"/tabs/{tab}/pay", quick[0], client=pages.staff)
    assert r.status_code == 409 and "Účet sa medzitým zmenil: Pool 1 teraz dlží 11,50\u00a0€, nie 9,00\u00a0€." in r.text
    assert rows(facade) == before and found(r'id="pay-owed">([^<]+)<', r.text).group(1) == "11,50\u00a0€"


def test_a_paid_part_shows_paid_loses_its_button_and_is_refused_again(
    pages: Pages, facade: HubFacade, clock: FakeClock, service: Hub
) -> None:
    tab = played_tab(facade, clock)
    line = {"description": "Čas", "description_en": "Time", "quantity": 1, "unit_cents": 450, "amount_cents": 450, "vat_percent": 23,
            "category": "table_time"}  # fmt: skip
    vat = [{"vat_percent": 23, "gross_cents": 450, "vat_cents": 84}]
    set_split(facade, tab, {"mode": "equal", "parts": [{"n": n, "amount_cents": 450, "lines": [line], "vat": vat} for n in (1, 2)]})
    html = pages.page(f"/tabs/{tab}/pay?part=1", client=pages.staff)
    stale = next(q for q in _quick_forms(html) if q["part"] == "1" and q["method"] == "card")
    pages.post(f"/tabs/{tab}/pay", stale, client=pages.staff)
    # The pay page asked for part 1 again (an older tab page's link): said so, and no other part chosen for it.
    html = pages.page(f"/tabs/{tab}/pay?part=1", client=pages.staff)
    assert "Časť 1 účtu Pool 1 je už zaplatená" in html and "Časť 1 zaplatená" in html and "Časť 1 zaplatený" not in html
    assert {q["part"] for q in _quick_forms(html)} == {"2"}
    assert 'value="2" data-owed="450" required checked' not in html
    tab_page = pages.page(f"/tabs/{tab}", client=pages.staff)
    assert "Časť 1 zaplatená" in tab_page and f"/tabs/{tab}/pay?part=1" not in tab_page and f"/tabs/{tab}/pay?part=2" in tab_page
    before = rows(facade)
    r = pages.post(f"/tabs/{tab}/pay", {**stale, "request_id": "another-form-1"}, client=pages.staff)
    assert r.status_code == 409 and "Časť 1 účtu Pool 1 je už zaplatená" in r.text and rows(facade) == before
    staff_token = on_writer(service, lambda db: issue_token(db, STAFF, "t", actor="test"))
    with TestClient(bound_app(service, pages=False)) as c:
        api = c.post(f"/api/tabs/{tab}/payments", json={"method": "card", "amount_cents": 450, "part": 1}, headers=bearer(staff_token))
    assert api.status_code == 409 and api.json()["detail"] == "Part 1 of Pool 1 is paid already; choose a part still to pay."
    assert rows(facade) == before


def test_the_pay_page_of_a_part_has_that_part_as_its_headline(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    """Issue 29, item 37: "Zaplatiť časť 2" led to a page whose biggest figure was the whole bill
    left (11,51 €), not the part being paid (5,75 €); so did a refused form for that part."""
    from broker.till.tabs import SplitTab

    tab = played_tab(facade, clock)  # 9,00 €
    add_item(facade, tab, "Kofola", 251, 19)
    facade.execute(SplitTab(tab=tab, mode="equal", parts=2, actor=STAFF))  # 5,76 € and 5,75 €
    html = pages.page(f"/tabs/{tab}/pay?part=2", client=pages.staff)
    assert found(r'id="pay-owed">([^<]+)<', html).group(1) == "5,75\u00a0€"
    assert "Časť 2 na úhradu" in html and "celý účet: zostáva zaplatiť 11,51\u00a0€" in html
    refused = pages.post(f"/tabs/{tab}/pay", {"method": "card", "amount": "99", "part": "2", "request_id": _key(html)}, client=pages.staff)
    assert refused.status_code == 409 and found(r'id="pay-owed">([^<]+)<', refused.text).group(1) == "5,75\u00a0€"
    assert 'class="error-box pay-error" role="alert" id="pay-error"' in refused.text  # styled as an error (app.css)
    whole = pages.page(f"/tabs/{tab}/pay", client=pages.staff)  # no part asked: the whole bill
    assert found(r'id="pay-owed">([^<]+)<', whole).group(1) == "11,51\u00a0€" and "Spolu na úhradu" in whole


def test_closing_stops_every_game_after_one_confirmation(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    from broker.floor.games import StartGame

    one = facade.execute(StartGame(table="pool-01", actor=STAFF))
    two = facade.execute(StartGame(table="carom-01", actor=STAFF))
    clock.advance(minutes=30)
    table = pages.page("/tables/pool-01")
    assert 'href="/closing" id="stop-all"' in table and 'id="stop-all"' not in pages.page("/tables/pool-01", client=pages.staff)
    assert pages.staff.get("/closing").status_code == 403
    assert pages.post("/closing", {}, client=pages.staff).status_code == 403 and len(facade.reads.floor.hall_snapshot().open) == 2
    html = pages.page("/closing")
    assert "Hrajú sa 2 hry." in html and "Karambol" in html and "3,00\u00a0€" in html and "Ukončiť 2 hry" in html
    r = pages.post("/closing", {})
    assert r.headers["location"] == "/bills"
    bills = pages.follow(r)
    assert "Ukončené 2 hry. 2 účty ostali otvorené na zaplatenie." in bills
    assert facade.reads.floor.hall_snapshot().open == {} and {u.game_id for u in facade.reads.till.unpaid_tabs()} == {one, two}
    assert "Nehrá sa žiadna hra." in pages.page("/closing")


def test_a_sale_at_the_bar_is_one_tap_from_any_page_without_a_name(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    floor = pages.page("/", client=pages.staff)
    key = found(r'<form method="post" action="/tabs" class="bar-sale">.*?name="form_key" value="(\w+)"', floor).group(1)
    assert 'id="bar-sale"' not in pages.page("/")  # the manager's top bar is full: they sell from the bills page
    first = pages.post("/tabs", {"form_key": key}, client=pages.staff)
    again = pages.post("/tabs", {"form_key": key}, client=pages.staff)  # a double tap
    assert first.headers["location"] == again.headers["location"]
    html = pages.page(first.headers["location"], client=pages.staff)
    assert '<h1 id="tab-title">Bar 18:00</h1>' in html and 'class="btn product-btn"' in html and "flash-ok" not in html
    named = pages.post("/tabs", {"form_key": "named-key-01", "label": "Peter"}, client=pages.staff)
    assert "Peter" in pages.page(named.headers["location"], client=pages.staff)


def test_the_one_tap_cash_buttons_take_the_cash_rounded_to_five_cents(pages: Pages, facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)  # 9,00 €
    add_item(facade, tab, "Pizza", 833, 19)  # 17,33 € owed: 17,35 € in cash, 17,33 € by card
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff)
    buttons = re.findall(r'data-(?:method="(\w+)"|note="(\d+)")>(.*?)</button>', html, re.S)
    words = {m or n: " ".join(re.sub(r"<[^>]+>", " ", text).split()) for m, n, text in buttons}  # no-break spaces as spaces
    assert words["cash"] == "Hotovosť 17,35 €" and words["card"] == "Karta 17,33 €"
    assert words["2000"] == "20,00 € vydať 2,65 €"
    note = next(q for q in _quick_forms(html) if q.get("tendered") == "20,00")
    assert (note["amount"], note["expect"]) == ("17,33", "1733")  # what counts against the bill; the hub rounds the cash
    receipt = pages.follow(pages.post(f"/tabs/{tab}/pay", note, client=pages.staff))
    assert found(r'id="give-change-amount">([^<]+)<', receipt).group(1) == "2,65\u00a0€"
    p = some(facade.reads.till.tab_payments(tab)).payments[0]
    assert (p.amount_cents, p.rounding_cents, p.tendered_cents, p.change_cents) == (1733, 2, 2000, 265)
