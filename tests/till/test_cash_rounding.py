"""Cash rounding to 0,05 € (issue 19, item 2; zákon 18/1996 Z. z. o cenách, § 3 ods. 4, since
1 July 2022): 1-2 cents down, 3-4 up, 6-7 down, 8-9 up; cards never; in a mixed payment only the cash
part. The till keeps the bill exact (17,33 €) and the rounding beside it (+0,02 €: 17,35 € in cash,
0,65 € back from 18,00 €): its own receipt line outside the VAT base, a line of the Z report, in the
drawer's expected cash. A venue setting: `[till] cash_rounding = 5` (the shipped venue), 1 = none.

The rule itself (pure), then the hub on SQLite and PostgreSQL, then the pages and the API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.domain.cash_rounding import STEPS, cash_due, rounding_of
from broker.domain.euros import MAX_AMOUNT_CENTS
from broker.domain.till.money import vat_rows
from broker.domain.till.payment_rules import PaymentRefused, check_payment
from broker.domain.till.receipt import lines_from_json
from broker.domain.venue import Till, load_venue
from broker.hall.facade import HubFacade, ServiceError
from broker.storage.models import Payment
from broker.till.closeout import OpenDay
from broker.till.payments import PayTab, ReversePayment
from broker.till.tabs import OpenWalkInTab, SplitTab
from devices.tomlfile import ConfigError, load_toml
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import VENUE, fresh_login, started_hub
from tests.support.matching import found, some
from tests.till.payments_support import MANAGER, STAFF, add_item, clock, facade, service  # noqa: F401

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto
    from tests.dashboard.conftest import Api, FakeClock
    from tests.dashboard.pages_client import Pages


FLOAT = 5000

# --- the rule ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("last", "in_cash"),
    [(0, 1730), (1, 1730), (2, 1730), (3, 1735), (4, 1735), (5, 1735), (6, 1735), (7, 1735), (8, 1740), (9, 1740)],
)
def test_every_last_digit_rounds_as_the_law_says(last: Any, in_cash: Any) -> None:
    cents = 1730 + last
    assert cash_due(cents, 5) == in_cash and rounding_of(cents, 5) == in_cash - cents
    assert cash_due(-cents, 5) == -in_cash  # a reversal gives back what was taken
    assert cash_due(cents, 1) == cents and rounding_of(cents, 1) == 0  # off: nothing changes


def test_one_or_two_cents_in_cash_are_five_cents_never_nothing() -> None:
    assert [cash_due(c, 5) for c in range(8)] == [0, 5, 5, 5, 5, 5, 5, 5]
    with pytest.raises(ValueError, match="not one of"):
        cash_due(1733, 10)


@given(st.integers(-MAX_AMOUNT_CENTS, MAX_AMOUNT_CENTS))
def test_cash_is_the_nearest_five_cents_half_up_and_rounding_it_again_changes_nothing(cents: Any) -> None:
    due = cash_due(cents, 5)
    assert due % 5 == 0 and cash_due(due, 5) == due and cash_due(-cents, 5) == -due
    if abs(cents) > 2:
        nearest = min((due - 5, due, due + 5), key=lambda m: (abs(m - cents), -abs(m)))  # a tie goes up (away from 0)
        assert due == nearest and abs(due - cents) <= 2
    assert cash_due(cents, 1) == cents


def test_a_cash_payment_is_rounded_a_card_payment_never() -> None:
    t = check_payment(1733, 1733, cash=True, tendered_cents=1800, what="Účet", rounding=5)
    assert (t.amount_cents, t.rounding_cents, t.due_cents, t.tendered_cents, t.change_cents) == (1733, 2, 1735, 1800, 65)
    exact = check_payment(1733, 1733, cash=True, tendered_cents=None, what="Účet", rounding=5)
    assert (exact.tendered_cents, exact.change_cents) == (1735, 0)
    card = check_payment(1733, 1733, cash=False, tendered_cents=None, what="Účet", rounding=5)
    assert (card.amount_cents, card.rounding_cents, card.due_cents) == (1733, 0, 1733)
    off = check_payment(1733, 1733, cash=True, tendered_cents=1800, what="Účet", rounding=1)
    assert (off.rounding_cents, off.change_cents) == (0, 67)  # cash_rounding = 1: as before rounding
    # The cash to pay as the page shows it pays what is owed, rounded up or down; by card it is too much.
    assert check_payment(1735, 1733, cash=True, tendered_cents=2000, what="Účet", rounding=5).amount_cents == 1733
    down = check_payment(1735, 1737, cash=True, tendered_cents=None, what="Účet", rounding=5)
    assert (down.amount_cents, down.rounding_cents, down.tendered_cents) == (1737, -2, 1735)
    with pytest.raises(PaymentRefused, match="is more than"):
        check_payment(1735, 1733, cash=False, tendered_cents=None, what="Účet", rounding=5)
    with pytest.raises(PaymentRefused) as e:
        check_payment(1733, 1733, cash=True, tendered_cents=1734, what="Účet", rounding=5)
    assert e.value.params["amount"] == "17,35\u00a0€"  # less than the cash to pay, not the bill
    # A part in cash (the rest by card): only that part is rounded.
    part = check_payment(733, 1733, cash=True, tendered_cents=1000, what="Účet", rounding=5)
    assert (part.amount_cents, part.rounding_cents, part.change_cents) == (733, 2, 265)


@given(
    owed=st.integers(1, 100_000),
    amount=st.integers(1, 100_000),
    over=st.integers(-10, 5000),
    cash=st.booleans(),
    step=st.sampled_from(STEPS),
)
def test_whatever_is_taken_the_bill_counts_the_amount_and_the_drawer_the_rounding(
    owed: Any, amount: Any, over: Any, cash: Any, step: Any
) -> None:
    try:
        t = check_payment(amount, owed, cash=cash, tendered_cents=amount + over if cash else None, what="Účet", rounding=step)
    except PaymentRefused:
        return
    assert 0 < t.amount_cents <= owed
    assert t.rounding_cents == (cash_due(t.amount_cents, step) - t.amount_cents if cash else 0)
    if cash:
        assert t.tendered_cents is not None and t.change_cents == t.tendered_cents - t.due_cents >= 0
        assert t.due_cents % step == 0
    else:
        assert t.change_cents == 0 and t.tendered_cents is None


def test_the_venue_file_says_how_cash_is_rounded_and_refuses_anything_else() -> None:
    assert load_venue(VENUE).till.cash_rounding == 5  # the shipped venue (Slovak law)
    assert Till().cash_rounding == 1  # a venue file without it: no rounding
    text = VENUE.read_text(encoding="utf-8")
    assert "cash_rounding = 5" in text
    for bad in ("0", "2", "10", '"5"', "5.0", "true"):
        with pytest.raises(ConfigError, match=r"cash_rounding") as e:
            load_toml(VENUE, type(load_venue(VENUE)), text=text.replace("cash_rounding = 5", f"cash_rounding = {bad}"))
        assert "lavos.toml:" in str(e.value)  # the message names the file and the line to fix
    assert load_toml(VENUE, type(load_venue(VENUE)), text=text.replace("cash_rounding = 5", "cash_rounding = 1")).till.cash_rounding == 1


# --- the hub (SQLite and PostgreSQL) -----------------------------------------------------------


def walk_in(facade: HubFacade, label: str, *amounts: tuple[int, int]) -> int:
    """A walk-in tab at the bar with one item per (cents, VAT %); its id."""
    tab = facade.execute(OpenWalkInTab(label=label, actor=STAFF))
    for n, (cents, vat) in enumerate(amounts):
        add_item(facade, tab, f"Položka {n + 1}", cents, vat)
    return tab


def _row(facade: HubFacade, payment_id: int) -> Payment:
    with facade._hub.store.reader() as db:
        p = db.get(Payment, payment_id)
        assert p is not None
        db.expunge(p)
        return p


def test_17_33_paid_from_18_00_gives_0_65_back_the_bill_stays_exact_and_the_drawer_counts_the_rounding(facade: HubFacade) -> None:
    facade.execute(OpenDay(float_cents=FLOAT, actor=STAFF))
    tab = walk_in(facade, "Hosť pri bare", (900, 23), (833, 19))  # 17,33 €
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert (view.owed_cents, view.cash_due(view.owed_cents)) == (1733, 1735)
    pid = facade.execute(PayTab(tab=tab, method="cash", amount_cents=1733, tendered_cents=1800, actor=STAFF)).payment_id
    p = _row(facade, pid)
    assert (p.amount_cents, p.rounding_cents, p.tendered_cents, p.change_cents) == (1733, 2, 1800, 65)
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert (view.status, view.total_cents, view.paid_cents, view.owed_cents) == ("paid", 1733, 1733, 0)
    # The receipt: the bill's lines and VAT untouched, the rounding a line of its own after them.
    r = facade.reads.till.receipt_of(pid)
    assert r is not None
    assert (r.total_cents, r.rounding_cents, r.paid_cents, r.change_cents) == (1733, 2, 1735, 65)
    assert sum(x.amount_cents for x in r.lines) == 1733 and r.vat == vat_rows(view.lines)
    # The Z report: takings and VAT are the bill's; the rounding is its own line, in the expected cash.
    z = facade.reads.till.day_overview().report
    assert (z.total_cents, z.cash_cents, z.rounding_cents, z.expected_cash_cents) == (1733, 1733, 2, FLOAT + 1735)
    assert {v.vat_percent: v.gross_cents for v in z.by_vat} == {23: 900, 19: 833}
    # Given back: the guest gets the 17,35 € they paid; the rounding is reversed with it.
    back = facade.execute(ReversePayment(payment=pid, reason="omyl obsluhy", actor=MANAGER)).payment_id
    b = _row(facade, back)
    assert (b.amount_cents, b.rounding_cents, b.change_cents) == (-1733, -2, 0)
    rb = facade.reads.till.receipt_of(back)
    assert rb is not None
    assert (rb.total_cents, rb.rounding_cents, rb.paid_cents) == (-1733, -2, -1735)
    z = facade.reads.till.day_overview().report
    assert (z.total_cents, z.rounding_cents, z.expected_cash_cents) == (0, 0, FLOAT)
    assert some(facade.reads.till.tab_payments(tab)).owed_cents == 1733


def test_every_last_digit_in_cash_and_by_card(facade: HubFacade) -> None:
    facade.execute(OpenDay(float_cents=FLOAT, actor=STAFF))
    cash = card = rounding = 0
    for last in range(10):
        amount = 1230 + last
        due = cash_due(amount, 5)
        tab = walk_in(facade, f"Hosť {last}", (amount, 23))
        pid = facade.execute(PayTab(tab=tab, method="cash", amount_cents=amount, tendered_cents=2000, actor=STAFF)).payment_id
        p = _row(facade, pid)
        assert (p.amount_cents, p.rounding_cents, p.change_cents) == (amount, due - amount, 2000 - due), last
        assert some(facade.reads.till.tab_payments(tab)).status == "paid"
        cash, rounding = cash + amount, rounding + due - amount
        by_card = walk_in(facade, f"Karta {last}", (amount, 23))
        pid = facade.execute(PayTab(tab=by_card, method="card", amount_cents=amount, actor=STAFF)).payment_id
        assert (_row(facade, pid).rounding_cents, _row(facade, pid).amount_cents) == (0, amount)  # a card is never rounded
        card += amount
    z = facade.reads.till.day_overview().report
    assert (z.cash_cents, z.total_cents, z.rounding_cents) == (cash, cash + card, rounding)
    assert z.expected_cash_cents == FLOAT + cash + rounding


def test_a_split_tab_rounds_each_cash_part_and_a_mixed_payment_only_its_cash(facade: HubFacade) -> None:
    tab = walk_in(facade, "Dvaja hráči", (900, 23), (833, 19))  # 17,33 €: parts of 8,67 € and 8,66 €
    facade.execute(SplitTab(tab=tab, mode="equal", parts=2, actor=STAFF))
    first = facade.execute(PayTab(tab=tab, method="card", amount_cents=867, part=1, actor=STAFF)).payment_id
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert (view.parts[1].owed_cents, view.cash_due(view.parts[1].owed_cents)) == (866, 865)
    # The last part in cash, the amount typed as the page shows it in cash: 8,65 € pays the 8,66 €.
    last = facade.execute(PayTab(tab=tab, method="cash", amount_cents=865, tendered_cents=1000, part=2, actor=STAFF)).payment_id
    a, b = _row(facade, first), _row(facade, last)
    assert (a.amount_cents, a.rounding_cents) == (867, 0)
    assert (b.amount_cents, b.rounding_cents, b.change_cents) == (866, -1, 135)
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert (view.status, view.owed_cents) == ("paid", 0)
    # The receipts add up to the bill per VAT rate, to the cent: the rounding is in none of them.
    paid = [x for p in (a, b) for x in lines_from_json(p.lines)]
    assert vat_rows(paid) == vat_rows(view.lines)

    # Not split: 7,33 € in cash (7,35 € handed over), the rest by card, exact.
    mixed = walk_in(facade, "Platí napoly", (900, 23), (833, 19))
    cash = facade.execute(PayTab(tab=mixed, method="cash", amount_cents=733, tendered_cents=735, actor=STAFF)).payment_id
    card = facade.execute(PayTab(tab=mixed, method="card", amount_cents=1000, actor=STAFF)).payment_id
    assert (_row(facade, cash).rounding_cents, _row(facade, cash).change_cents, _row(facade, card).rounding_cents) == (2, 0, 0)
    view = facade.reads.till.tab_payments(mixed)
    assert view is not None
    assert (view.status, view.paid_cents, view.owed_cents) == ("paid", 1733, 0)


@pytest.fixture
def unrounded(mosquitto: Mosquitto, db_url: str, clock: FakeClock) -> Iterator[HubFacade]:
    """A hall whose venue file says cash_rounding = 1."""
    venue = load_venue(VENUE)
    venue = venue.model_copy(update={"till": venue.till.model_copy(update={"cash_rounding": 1})})
    with started_hub(db_url, mosquitto=mosquitto, clock=clock, venue=venue, client_id=fresh_login(), watchdog=False) as svc:
        yield HubFacade(svc)


@sqlite_only
def test_without_rounding_nothing_changes(unrounded: HubFacade) -> None:
    tab = walk_in(unrounded, "Hosť", (900, 23), (833, 19))
    assert some(unrounded.reads.till.tab_payments(tab)).cash_due(1733) == 1733
    pid = unrounded.execute(PayTab(tab=tab, method="cash", amount_cents=1733, tendered_cents=1800, actor=STAFF)).payment_id
    p = _row(unrounded, pid)
    assert (p.amount_cents, p.rounding_cents, p.tendered_cents, p.change_cents) == (1733, 0, 1800, 67)
    assert unrounded.reads.till.day_overview().report.rounding_cents == 0
    with pytest.raises(ServiceError, match="is more than"):
        unrounded.execute(PayTab(tab=walk_in(unrounded, "Iný", (1733, 23)), method="cash", amount_cents=1735, actor=STAFF))


# --- the pages and the API (SQLite: both backends' SQL is above) -------------------------------


def _key(html: str) -> str:
    return found(r'name="request_id" value="([^"]+)"', html).group(1)


@sqlite_only
def test_the_pay_page_shows_the_cash_to_pay_the_receipt_and_the_z_report_the_rounding(pages: Pages, facade: HubFacade) -> None:
    facade.execute(OpenDay(float_cents=FLOAT, actor=STAFF))
    tab = walk_in(facade, "Hosť pri bare", (900, 23), (833, 19))
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff)
    assert 'id="pay-owed">17,33\u00a0€' in html and "v hotovosti 17,35\u00a0€" in html  # card: 17,33 €, cash: 17,35 €
    assert found(r'id="pay-cash-due"[^>]*>([^<]+)<', html).group(1) == "17,35\u00a0€" and "zaokrúhlenie +0,02\u00a0€" in html
    refused = pages.post(
        f"/tabs/{tab}/pay", {"method": "card", "amount": "17,35", "request_id": _key(html)}, client=pages.staff
    )  # by card there is nothing to round: 17,35 € is too much
    assert refused.status_code == 409 and "je viac ako" in refused.text
    form = {"method": "cash", "amount": "17,35", "tendered": "18", "part": "", "request_id": _key(html)}
    receipt = pages.follow(pages.post(f"/tabs/{tab}/pay", form, client=pages.staff))
    assert found(r'id="receipt-total">([^<]+)<', receipt).group(1) == "17,33\u00a0€"
    assert found(r'id="receipt-rounding">([^<]+)<', receipt).group(1) == "+0,02\u00a0€"
    assert found(r'id="receipt-paid">([^<]+)<', receipt).group(1) == "17,35\u00a0€"
    assert found(r'id="receipt-change">([^<]+)<', receipt).group(1) == "0,65\u00a0€"
    assert "Zaokrúhlenie" in receipt and "Spolu po zaokrúhlení" in receipt
    # The rounding stands after the VAT rows: outside the VAT base.
    assert receipt.index("Základ DPH 19") < receipt.index("Zaokrúhlenie")
    day = pages.page("/day", client=pages.manager)  # staff count blind (issue 19, item 8): the manager sees the drawer
    assert found(r'id="z-rounding">([^<]+)<', day).group(1) == "0,02\u00a0€" and "Zaokrúhlenie hotovosti" in day
    assert found(r'id="z-expected">([^<]+)<', day).group(1) == "67,35\u00a0€"  # 50,00 € float + 17,35 € in cash
    z = facade.reads.till.day_overview().report
    csv = pages.manager.get(f"/days/{z.day.isoformat()}.csv")
    assert csv.status_code == 200 and "Zaokrúhlenie hotovosti" in csv.text and "0.02" in csv.text.replace(",", ".")


@sqlite_only
def test_the_api_answers_the_cash_to_pay_and_the_rounding(api: Api) -> None:
    facade = HubFacade(api.service)
    tab = walk_in(facade, "Hosť pri bare", (900, 23), (833, 19))
    view = api.ok("GET", f"/api/tabs/{tab}/payments")
    assert (view["owed_cents"], view["cash_owed_cents"], view["cash_rounding"]) == (1733, 1735, 5)
    p = api.ok("POST", f"/api/tabs/{tab}/payments", 201, json={"method": "cash", "amount_cents": 1733, "tendered_cents": 1800})
    assert (p["amount_cents"], p["rounding_cents"], p["change_cents"]) == (1733, 2, 65)
    r = api.ok("GET", f"/api/payments/{p['id']}/receipt")
    assert (r["total_cents"], r["rounding_cents"], r["paid_cents"]) == (1733, 2, 1735)
    day = api.ok("GET", "/api/days/current", as_manager=True)["report"]  # staff count blind (issue 19, item 8)
    assert (day["rounding_cents"], day["expected_cash_cents"], day["total_cents"]) == (2, 1735, 1733)
