"""The payment page, the receipt page and the payments API over a real hub: forms with CSRF, Slovak
refusals that keep what was typed and change nothing, a resent form that pays once, the manager's
reversal, the receipt's legal content."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from broker.accounts.users import issue_token
from broker.hall.till.payments import PayTab
from dashboard.api import create_app
from tests.dashboard.conftest import MANAGER, STAFF, bearer, sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import on_writer
from tests.support.matching import found
from tests.till.payments_support import add_item, clock, facade, played_tab, rows, service  # noqa: F401

pytestmark = sqlite_only  # both backends' SQL is in test_payments_writer; these test the pages


def _key(html: str) -> str:
    return found(r'name="request_id" value="([^"]+)"', html).group(1)


def test_pay_cash_with_change_then_the_receipt_then_a_resent_form(pages, facade, clock):
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
def test_bad_forms_are_refused_in_slovak_keep_what_was_typed_and_change_nothing(pages, facade, clock, amount, tendered, method, says):
    tab = played_tab(facade, clock)
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff)
    before = rows(facade)
    r = pages.post(
        f"/tabs/{tab}/pay", {"method": method, "amount": amount, "tendered": tendered, "request_id": _key(html)}, client=pages.staff
    )
    assert r.status_code in (400, 409) and says in r.text, r.text[-3000:]
    assert f'value="{amount}"' in r.text
    assert rows(facade) == before


def test_a_paid_tab_and_the_manager_reversal(pages, facade, clock):
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


def test_the_receipt_in_english_says_it_is_not_fiscal_and_the_manager_sees_the_missing_ids(pages, facade, clock):
    tab = played_tab(facade, clock)
    taken = facade.execute(PayTab(tab=tab, method="cash", amount_cents=900, tendered_cents=1000, actor=STAFF))
    pages.post("/lang", {"lang": "en", "next": "/"}, client=pages.staff)
    html = pages.page(f"/receipts/{taken.payment_id}", client=pages.staff)
    assert "This is not a fiscal receipt" in html and "Toto nie je pokladničný doklad" in html and "Change" in html
    assert 'id="issuer-warning"' not in html
    assert 'id="issuer-warning"' in pages.page(f"/receipts/{taken.payment_id}")
    pages.page("/receipts/999999", 404)


def test_the_api_pays_once_per_request_id_and_reverses_as_manager(service, facade, clock):
    from broker.accounts.users import create_user, new_password
    from tests.dashboard.conftest import CHEAP, PASSWORD

    password = new_password(PASSWORD, CHEAP)

    def _write(db):
        create_user(db, STAFF, password, "staff", actor="test")
        create_user(db, MANAGER, password, "manager", actor="test")
        staff, manager = bearer(issue_token(db, STAFF, "t", actor="test")), bearer(issue_token(db, MANAGER, "t", actor="test"))
        return staff, manager

    staff, manager = on_writer(service, _write)
    tab = played_tab(facade, clock)
    with TestClient(create_app(service)) as c:
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
