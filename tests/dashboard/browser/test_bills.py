"""Issue 11, bills and reports: voiding an extra and correcting a bill on the bill page, the list of
today's bills to reprint one, and the reports' day arrows, in Chromium against the real server, at
tablet and phone size, in Slovak and English.

The server runs on the real clock, so every game here is on today's business day.
"""

from __future__ import annotations

import pytest

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import eur, eur_en, log_in, unfold_menu
from tests.dashboard.conftest import MANAGER, STAFF

TOPPING = 60  # deploy/venues/lavos.toml


def _game(lavos, table: str, toppings: int = 2) -> int:
    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": table})["id"]
    lavos.api("POST", f"/api/sessions/{sid}/extras", STAFF, json={"extra": "topping", "quantity": toppings})
    return sid


def _stop(lavos, sid: int) -> dict:
    return lavos.api("POST", f"/api/sessions/{sid}/stop", STAFF)


def _fits(page, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll} px wide in a {width} px viewport"


def _english(page) -> None:
    unfold_menu(page)
    with page.expect_navigation():
        page.locator("form.lang button[value=en]").tap()


@pytest.mark.parametrize(("size", "table"), [("tablet", "pool-07"), ("phone", "pool-08")])
def test_staff_void_an_extra_on_the_running_games_bill(lavos, open_page, size, table):
    viewport = TABLET if size == "tablet" else PHONE
    page = open_page(viewport, mobile=size == "phone")
    sid = _game(lavos, table)
    log_in(page, lavos, STAFF, f"/sessions/{sid}/bill")
    _fits(page, viewport["width"])
    form = page.locator("#void-form")
    assert form.is_visible() and page.locator("#correct-form").count() == 0  # staff: no correction
    form.locator("select[name=extra_op]").select_option(index=0)
    # A too-short reason: the browser's own check stops it; the server's is tested in test_pages_bills.
    form.locator("input[name=reason]").fill("zadané dvakrát")
    with page.expect_navigation():
        form.locator("button[type=submit]").tap()
    assert "Položka stornovaná" in page.locator(".flash").inner_text()
    void = page.locator("tr.line-void")
    assert void.count() == 1 and "Storno" in void.inner_text() and "zadané dvakrát" in void.inner_text()
    assert ("-" + eur(2 * TOPPING)).replace(" ", "\u00a0") in void.inner_text().replace(" ", "\u00a0")
    assert page.locator("tr.line-extra").count() == 1  # the extra stays on the bill
    assert page.locator("#void-form").count() == 0  # nothing left to void
    _fits(page, viewport["width"])
    _stop(lavos, sid)


def test_staff_cannot_void_on_an_issued_bill_and_the_manager_can_in_english(lavos, open_page):
    sid = _game(lavos, "pool-09", toppings=1)
    bill = _stop(lavos, sid)["bill"]
    staff = open_page(PHONE, mobile=True)
    log_in(staff, lavos, STAFF, f"/sessions/{sid}/bill")
    assert staff.locator("#void-form").count() == 0
    assert "len vedúci" in staff.locator("#void-manager-only").inner_text()
    assert "Spolu na úhradu" in staff.inner_text("table.lines tfoot") and "Základ dane (bez DPH)" in staff.inner_text("table.lines tfoot")
    assert "Vystavené" in staff.inner_text(".receipt")

    manager = open_page(TABLET)
    log_in(manager, lavos, MANAGER, f"/sessions/{sid}/bill")
    _english(manager)
    assert f"Bill no. {sid}" in manager.inner_text("#bill-title")
    assert "Total to pay" in manager.inner_text("table.lines tfoot") and "Tax base (without VAT)" in manager.inner_text("table.lines tfoot")
    correct = manager.locator("#correct-form")
    correct.locator("input[name=amount]").fill("dve eurá")
    correct.locator("input[name=reason]").fill("the table was wobbly")
    with manager.expect_navigation():
        correct.locator("button[type=submit]").tap()
    assert "Give the amount in euros" in manager.inner_text("#bill-error")
    assert manager.locator("#correct-form input[name=reason]").input_value() == "the table was wobbly"  # kept
    manager.locator("#correct-form input[name=amount]").fill("1,50")  # e.g. a cue tip charged later
    with manager.expect_navigation():
        manager.locator("#correct-form button[type=submit]").tap()
    line = manager.locator("tr.line-correction")
    assert line.count() == 1 and "Correction" in line.inner_text() and "the table was wobbly" in line.inner_text()
    total = bill["total_cents"] + 150
    assert manager.inner_text("#bill-total").strip() == eur_en(total)
    manager.locator("#void-form input[name=reason]").fill("not ordered")
    with manager.expect_navigation():
        manager.locator("#void-form button[type=submit]").tap()
    assert "Voided" in manager.inner_text("tr.line-void") and manager.inner_text("#bill-total").strip() == eur_en(total - TOPPING)


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_todays_bills_to_find_one_again_and_reprint_it(lavos, open_page, size):
    viewport = TABLET if size == "tablet" else PHONE
    page = open_page(viewport, mobile=size == "phone")
    sid = _game(lavos, "pool-10", toppings=1)
    total = _stop(lavos, sid)["bill"]["total_cents"]
    log_in(page, lavos, STAFF)
    unfold_menu(page)
    page.locator("nav.nav a[href='/bills']").tap()
    page.wait_for_url("**/bills")
    assert "Dnešné účty" in page.inner_text("h1")
    row = page.locator(f"tr.bill-row[data-game='{sid}']")
    assert "Pool 10" in row.inner_text() and eur(total).replace(" ", "\u00a0") in row.inner_text().replace(" ", "\u00a0")
    assert row.locator(f"a[href='/sessions/{sid}/bill?print=1']").is_visible()
    _fits(page, viewport["width"])
    page.locator("select[name=table]").select_option("pool-10")
    with page.expect_navigation():
        page.locator(".bills-filter button[type=submit]").tap()
    tables = page.locator("tr.bill-row td:nth-child(2)").all_inner_texts()
    assert tables and all(t.strip() == "Pool 10" for t in tables)  # only that table's bills
    with page.expect_navigation():
        row = page.locator(f"tr.bill-row[data-game='{sid}']")
        row.locator(f"a[href='/sessions/{sid}/bill']").tap()
    assert f"Účet č. {sid}" in page.inner_text("#bill-title")
    _english(page)
    assert f"Bill no. {sid}" in page.inner_text("#bill-title")
    page.goto(lavos.base_url + "/bills")
    assert "Today's bills" in page.inner_text("h1") and page.locator(f"tr.bill-row[data-game='{sid}']").count() == 1


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_report_arrows_go_back_a_day_and_never_into_the_future(lavos, open_page, size):
    viewport = TABLET if size == "tablet" else PHONE
    page = open_page(viewport, mobile=size == "phone")
    log_in(page, lavos, MANAGER, "/reports")
    assert page.locator("a.period-next").count() == 0  # today: nothing to come
    assert page.locator("#report-xlsx").is_visible()
    today = page.inner_text("h1")
    with page.expect_navigation():
        page.locator("a.period-prev").tap()
    assert page.inner_text("h1") != today and page.locator("a.period-next").is_visible()
    with page.expect_navigation():
        page.locator("a.period-next").tap()
    assert page.inner_text("h1") == today and page.locator("a.period-next").count() == 0
    assert "čím tmavšie, tým vyťaženejšie" in page.inner_text("#utilisation")
    assert "Tržba podľa taríf" in page.inner_text("#revenue") and "Stolný futbal podľa členov" in page.inner_text("#foosball")
    _fits(page, viewport["width"])
    _english(page)
    assert "the darker, the busier" in page.inner_text("#utilisation") and "Balls potted" in page.inner_text("#drops")
