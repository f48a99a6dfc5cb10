"""Issue 12, the close-out in Chromium against the real server, at tablet and phone size: staff reach
Uzávierka from the bills page, open the day with the float (a wrong amount refused in place, what
was typed kept), see the running figures (blind: not the expected cash), close with the counted cash, see the variance, and print
the Z report (A4 and the 80 mm roll); in Slovak, and the Z report in English. Screenshots
docs/screenshots/zreport-{tablet,phone}.png.

The payments are put in the database directly (the payments part is built beside this one): the
close-out only reads them. The server runs on the real clock; the close-out at 01:30 with a game
from before midnight is tests/till/test_closeout.py (a fake clock, the real close-out).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from broker.domain.till.receipt import ReceiptLine, lines_json
from broker.storage.engine import open_store
from broker.storage.models import Payment, Tab
from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import eur, log_in, unfold_menu
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.hub import REPO
from tests.support.server import Served

if TYPE_CHECKING:
    from tests.support.web import ServedHub


SHOTS = REPO / "docs" / "screenshots"
SIZES = {"tablet": (TABLET, False), "phone": (PHONE, True)}
_receipt = iter(range(9000, 10000))


def _fits(page: Any, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll} px wide in a {width} px viewport"


def _text(page: Any, selector: str) -> str:
    result: str = page.locator(selector).inner_text().replace("\u00a0", " ")
    return result


@pytest.fixture(autouse=True)
def a_fresh_day(lavos: Served) -> None:
    """Each test starts on today's business day, not opened and without money. The server runs on
    the real clock, and a day that has not begun cannot be closed: without this, a test after one
    that closed today would find only tomorrow, which it may not close. The module puts its money
    into the database directly anyway (see above); this takes it out again."""
    from sqlalchemy import delete, update

    from broker.storage.models import BusinessDay, TabItem

    store = open_store(lavos.db_url)
    try:
        with store.session() as db:
            db.execute(update(Payment).values(reverses_id=None))
            db.execute(delete(Payment))
            db.execute(delete(TabItem))
            db.execute(update(Tab).values(merged_into=None))
            db.execute(delete(Tab))
            db.execute(delete(BusinessDay))
    finally:
        store.close()


def _pay(lavos: Any, day: date, cents: int, method: str, category: str, vat: int, tendered: int | None = None) -> None:
    """A payment as the payments part stores one, on the day the page shows."""
    store = open_store(lavos.db_url)
    try:
        with store.session() as db:
            now = datetime.now(UTC)
            tab = Tab(table_id=None, label="Bar", opened_at=now, opened_by=STAFF, business_day=day, settled_at=now)
            db.add(tab)
            db.flush()
            line = ReceiptLine("Pivo" if category != "table_time" else "Čas pri stole", "Beer", 1, cents, cents, vat, category)
            db.add(
                Payment(
                    tab_id=tab.id,
                    method=method,
                    amount_cents=cents,
                    tendered_cents=tendered,
                    change_cents=(tendered - cents) if tendered else 0,
                    staff=STAFF,
                    at=now,
                    business_day=day,
                    receipt_no=next(_receipt),
                    lines=lines_json([line]),
                )
            )
    finally:
        store.close()


@pytest.mark.parametrize("size", SIZES)
def test_staff_open_the_day_with_a_float_and_close_it_with_the_counted_cash(
    lavos: ServedHub, open_page: Callable[..., Any], size: Any
) -> None:
    viewport, mobile = SIZES[size]
    page = open_page(viewport, mobile=mobile)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    log_in(page, lavos, STAFF, "/bills")
    with page.expect_navigation():
        page.locator("#to-day").tap()  # Uzávierka is reached from the bills page
    assert page.url.endswith("/day") and "Uzávierka" in page.locator("h1").inner_text()
    _fits(page, viewport["width"])
    day = date.fromisoformat(page.locator("#zreport").get_attribute("data-day"))

    # A wrong float: refused in place, in Slovak, what was typed kept; nothing opened.
    page.locator("#float-eur").fill("päťdesiat")
    with page.expect_navigation():
        page.locator("#open-day").tap()
    assert "Zadajte počiatočný stav pokladne v eurách" in page.locator("#form-error").inner_text()
    assert page.locator("#float-eur").input_value() == "päťdesiat"
    assert lavos.api("GET", "/api/days/current", STAFF)["opened"] is False
    page.locator("#float-eur").fill("50,00")
    with page.expect_navigation():
        page.locator("#open-day").tap()
    assert "je otvorený" in page.locator(".flash").inner_text() and page.locator("#day-open").count() == 0

    # The evening's money (cash with change, a card), then the running figures.
    _pay(lavos, day, 1230, "cash", "drinks", 19, tendered=2000)
    _pay(lavos, day, 600, "card", "table_time", 23)
    page.reload()
    # A blind count: staff count the drawer before they see what it should hold (issue 19, item 8).
    assert "naslepo" in page.locator("#z-blind").inner_text()
    assert page.locator("#z-expected").count() == 0 and page.locator("#z-total").count() == 0 and page.locator("#z-methods").count() == 0
    assert "Priebežný stav" in page.locator("#z-running").locator("xpath=..").inner_text()
    _fits(page, viewport["width"])

    # Counted garbage: refused in place; then the counted cash, 0,30 € short.
    page.locator("#counted-eur").fill("12,345")
    with page.expect_navigation():
        page.locator("#close-day").tap()
    assert "Zadajte napočítanú hotovosť" in page.locator("#form-error").inner_text()
    assert page.locator("#counted-eur").input_value() == "12,345"
    page.locator("#counted-eur").fill("62,00")
    with page.expect_navigation():
        page.locator("#close-day").tap()
    assert page.url.endswith(f"/day/{day.isoformat()}/report")
    assert "Deň je uzavretý" in page.locator(".flash").inner_text()
    assert _text(page, "#z-counted") == "62,00 €" and _text(page, "#z-variance") == "-0,30 €"  # closed: both show now
    assert _text(page, "#z-expected") == eur(5000 + 1230).replace("\u00a0", " ") and _text(page, "#z-total") == eur(1830).replace(
        "\u00a0", " "
    )
    assert "chýba" in page.locator(".z-variance").inner_text() and "Denná uzávierka (Z-report)" in page.locator("#zreport h2").inner_text()
    assert "23 %" in page.locator("#z-vat").inner_text() and "19 %" in page.locator("#z-vat").inner_text()
    _fits(page, viewport["width"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"zreport-{size}.png"))  # the viewport, as on the device

    # The print view: the report alone, no buttons; the 80 mm roll too.
    page.emulate_media(media="print")
    assert page.locator("#zreport").is_visible() and not page.locator("#print").is_visible() and not page.locator(".topbar").is_visible()
    page.emulate_media(media="screen")
    with page.expect_navigation():
        page.get_by_role("link", name="Kotúčik 80 mm").tap()
    assert "paper-80" in (page.locator("body").get_attribute("class") or "")
    page.emulate_media(media="print")
    width = page.locator("#zreport").evaluate("e => e.getBoundingClientRect().width")
    assert width <= 80 / 25.4 * 96, f"the 80 mm report is {width} px wide"
    page.emulate_media(media="screen")

    # The Z report in English.
    unfold_menu(page)
    with page.expect_navigation():
        page.locator("form.lang button[value=en]").tap()
    assert "Daily close-out (Z report)" in page.locator("#zreport h2").inner_text()
    assert "Difference" in page.locator("#z-cash").inner_text() and "missing" in page.locator(".z-variance").inner_text()
    assert "Cash" in page.locator("#z-methods").inner_text() and "Card" in page.locator("#z-methods").inner_text()
    # Back to Slovak for the next visitor of this browser context (and the manager's list).
    unfold_menu(page)
    with page.expect_navigation():
        page.locator("form.lang button[value=sk]").tap()
    # The two refused forms answer 400 on purpose (the browser logs that); nothing else may fail.
    assert [p for p in problems if "status of 400" not in p] == [] and len(problems) <= 2, problems
    summary = next(d for d in lavos.api("GET", "/api/days", MANAGER) if d["day"] == day.isoformat())
    assert (summary["counted_cents"], summary["expected_cents"], summary["variance_cents"]) == (6200, 6230, -30)


def test_the_manager_sees_the_closed_days_and_exports_them(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    closed = [d for d in lavos.api("GET", "/api/days", MANAGER) if d["closed_at"]]
    if not closed:  # run alone: close a day first
        lavos.api("POST", "/api/days/current/open", STAFF, json={"float_cents": 0})
        day = lavos.api("GET", "/api/days/current", STAFF)["day"]
        lavos.api("POST", f"/api/days/{day}/close", STAFF, json={"counted_cents": 0})
        closed = [d for d in lavos.api("GET", "/api/days", MANAGER) if d["closed_at"]]
    page = open_page(TABLET)
    log_in(page, lavos, MANAGER, "/reports")
    with page.expect_navigation():
        page.locator("#to-days").tap()
    rows = page.locator("#days-list tr.day-row")
    assert rows.count() >= len(closed)
    first = closed[0]["day"]
    with page.expect_download() as got:
        page.locator(f'tr[data-day="{first}"] a[href$=".csv"]').tap()
    data = Path(got.value.path()).read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and ";" in data.decode("utf-8-sig")
    with page.expect_download() as got:
        page.locator(f'tr[data-day="{first}"] a[href$=".xlsx"]').tap()
    assert Path(got.value.path()).read_bytes()[:2] == b"PK"


def test_no_english_on_the_slovak_day_pages_with_voids_refunds_and_open_tabs(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    from tests.dashboard.browser.test_slovak_everywhere import Findings, _post_form

    day = date.fromisoformat(lavos.api("GET", "/api/days/current", STAFF)["day"])
    store = open_store(lavos.db_url)
    try:
        with store.session() as db:
            now = datetime.now(UTC)
            bar = Tab(table_id=None, label="", opened_at=now, opened_by=STAFF, business_day=day)
            db.add(bar)
            db.flush()
            from broker.storage.models import TabItem

            db.add(
                TabItem(
                    tab_id=bar.id,
                    name="Kofola",
                    name_en="Kofola",
                    category="drinks",
                    unit_cents=180,
                    vat_percent=19,
                    quantity=2,
                    added_by=STAFF,
                )
            )
            db.add(
                TabItem(
                    tab_id=bar.id,
                    name="Pivo",
                    category="drinks",
                    unit_cents=250,
                    vat_percent=19,
                    quantity=1,
                    added_by=STAFF,
                    voided_at=now,
                    voided_by=STAFF,
                    void_reason="omylom",
                )
            )
            paid = Payment(
                tab_id=bar.id,
                method="card",
                amount_cents=360,
                staff=STAFF,
                at=now,
                business_day=day,
                receipt_no=next(_receipt),
                lines=lines_json([ReceiptLine("Kofola", "Kofola", 2, 180, 360, 19, "drinks")]),
            )
            db.add(paid)
            db.flush()
            db.add(
                Payment(
                    tab_id=bar.id,
                    method="card",
                    amount_cents=-360,
                    staff=MANAGER,
                    at=now,
                    business_day=day,
                    reverses_id=paid.id,
                    reason="zlá karta",
                    receipt_no=next(_receipt),
                    lines={"lines": [{**paid.lines["lines"][0], "amount_cents": -360}], "vat": []},
                )
            )
    finally:
        store.close()
    findings = Findings()
    page = open_page(TABLET)
    log_in(page, lavos, MANAGER, "/day")
    findings.check(page, "/day")
    assert "Účet pri bare č." in page.locator("#z-open-tabs").inner_text() and "omylom" in page.locator("#z-voids").inner_text()
    assert "zlá karta" in page.locator("#z-refunds").inner_text()
    _post_form(page, "/day/close", {"day": day.isoformat(), "counted_eur": "0"})  # tabs open, not confirmed
    assert "Nezaplatené účty: 1" in page.locator("#form-error").inner_text()
    findings.check(page, "/day refused: tabs open")
    page.locator("#open-tabs-confirm input").check()
    page.locator("#counted-eur").fill("0")
    with page.expect_navigation():
        page.locator("#close-day").tap()
    findings.check(page, "the Z report")
    _post_form(page, "/day/close", {"day": day.isoformat(), "counted_eur": "0"})  # a second tap: the report again
    assert "je už uzavretý" in page.locator(".flash").inner_text()
    findings.check(page, "closed twice")
    page.goto(lavos.base_url + "/days")
    findings.check(page, "/days")
    assert not findings.found, "\n".join(findings.found)


def _one_row(page: Any, selector: str) -> None:
    """`selector` sits in the top bar's one row (beside the brand), not wrapped under it."""
    top = page.locator(".brand").evaluate("e => e.getBoundingClientRect().bottom")
    mine = page.locator(selector).evaluate("e => e.getBoundingClientRect().top")
    assert mine < top, f"{selector} wrapped to a second row of the top bar"


def test_a_shift_change_on_the_tablet_and_the_managers_shift_report_on_a_phone(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """Issue 32 §3: the bartender clocks in from the top bar (1280×800), counts the drawer at the
    shift change and clocks out (refusals in Slovak: tests/dashboard/test_pages_shifts.py); the manager reads
    the shift report on a phone (390×844) without sideways scrolling. Screenshots shifts-{tablet,phone}.png."""
    from tests.dashboard.browser.test_slovak_everywhere import Findings

    findings = Findings()
    lavos.api("POST", "/api/days/current/open", STAFF, json={"float_cents": 5000})
    day = date.fromisoformat(lavos.api("GET", "/api/days/current", STAFF)["day"])
    page = open_page(TABLET)
    log_in(page, lavos, STAFF, "/")
    _one_row(page, "#clock-in")
    with page.expect_navigation():
        page.locator("#clock-in").tap()
    assert page.url.endswith("/shift") and "Vaša zmena sa začala" in page.locator(".flash").inner_text()
    assert "Na zmene od" in page.locator("#shift-link").inner_text()
    _one_row(page, "#shift-link")
    _pay(lavos, day, 1230, "cash", "drinks", 19, tendered=2000)
    page.locator("#drawer-eur").fill("62,00")
    with page.expect_navigation():
        page.locator("#count-drawer").tap()
    assert "rozdiel -0,30 €" in page.locator(".flash").inner_text().replace("\u00a0", " ")
    _fits(page, TABLET["width"])
    findings.check(page, "/shift")
    page.screenshot(path=str(SHOTS / "shifts-tablet.png"))
    with page.expect_navigation():
        page.locator("#clock-out").tap()
    assert "odpracovali ste" in page.locator(".flash").inner_text() and page.locator("#clock-in").count() == 1

    phone = open_page(PHONE, mobile=True)
    log_in(phone, lavos, MANAGER, "/shifts")
    _fits(phone, PHONE["width"])
    assert STAFF in phone.locator("#shift-rows").inner_text()
    assert _text(phone, "#shift-total") == "12,30 €"
    assert "-0,30 €" in _text(phone, "#drawer-segments") and "62,00 €" in _text(phone, "#drawer-segments")
    findings.check(phone, "/shifts")
    phone.screenshot(path=str(SHOTS / "shifts-phone.png"))
    assert not findings.found, "\n".join(findings.found)
