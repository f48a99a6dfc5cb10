"""Issue 12, must-show 2: an evening at the till in Chromium against the real `lavos server`, at
tablet size, in Slovak, the way a bartender does it and only through the pages (the API only reads
state for the assertions): a game on a pool table with two drinks on its tab from the product
buttons, the tab split between two players, part 1 in cash with change and part 2 by card, each
receipt; a walk-in tab at the bar paid in cash with the exact amount; the day opened with a float
and closed with the counted cash, the Z report's figures equal to what was paid, and a second close
refused. The amounts are read from the pages and worked out here to the cent.

The server runs on the real clock: the game plays a few seconds, billed as its first started minute.
The close-out at 01:30 with a game from before midnight is tests/till (a fake clock, the real close-out).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import eur, log_in
from tests.dashboard.conftest import MANAGER, STAFF

if TYPE_CHECKING:
    from tests.support.web import ServedHub


TABLE, TABLE_NAME = "pool-04", "Pool 4"
BEER, KOFOLA, BOROVICKA = 250, 200, 250  # the seeded product list (broker/till/tabs.py), all at 23 %
RATE = 600  # Štandard, 6,00 €/h (deploy/venues/lavos.toml)
FLOAT = 5000
TENDERED = 2000  # part 1: the player hands over a 20 € note


def _tap(page: Any, locator: Any) -> None:
    with page.expect_navigation():
        locator.tap()


def _product(page: Any, name: str) -> Any:
    return page.locator("button.product-btn", has_text=re.compile("^" + re.escape(name))).first


def _money(page: Any, selector: str) -> str:
    """Money as the page shows it, with its no-break space (inner_text may give a plain one)."""
    result: str = page.locator(selector).inner_text().replace(" ", "\u00a0")
    return result


def _cents(text: str) -> int:
    return int(text.replace("\u00a0", "").replace(" ", "").replace("€", "").replace(",", ""))


def _fits(page: Any, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll} px wide in a {width} px viewport"


def _vat(gross: int, percent: int = 23) -> int:
    """The VAT in a VAT-inclusive amount, half-up to the cent."""
    return (2 * gross * percent + (100 + percent)) // (2 * (100 + percent))


def _check_receipt(page: Any, amount: int, method: str) -> str:
    """The receipt page just opened: its total, VAT at 23 %, the method, the non-fiscal line; its text."""
    assert "/receipts/" in page.url, page.url
    text = page.locator("#receipt").inner_text().replace("\u00a0", " ")
    assert _money(page, "#receipt-total") == eur(amount)
    assert method in page.locator("#receipt-method").inner_text()
    vat = _vat(amount)
    assert f"Základ DPH 23 %\t{eur(amount - vat)}".replace("\u00a0", " ") in text, text
    assert f"DPH 23 %\t{eur(vat)}".replace("\u00a0", " ") in text, text
    assert "Toto nie je pokladničný doklad" in text and "Obsluha: jana" in text
    rows = page.locator("#receipt table.lines tbody tr")
    assert rows.count() >= 1
    assert sum(_cents(rows.nth(i).locator("td").nth(2).inner_text()) for i in range(rows.count())) == amount  # the lines sum to it
    result: str = text
    return result


def test_an_evening_at_the_till_from_the_first_game_to_the_closed_day(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    page = open_page(TABLET)
    log_in(page, lavos, STAFF, "/day")

    # The evening starts at the close-out page: the drawer's float.
    day = page.locator("#zreport").get_attribute("data-day")
    page.locator("#float-eur").fill("50,00")
    _tap(page, page.locator("#open-day"))
    assert page.locator("#day-open").count() == 0 and lavos.api("GET", "/api/days/current", STAFF)["opened"] is True

    # 1. A game on Pool 4, two drinks from the product buttons, a few seconds of play, stop.
    page.goto(f"{lavos.base_url}/tables/{TABLE}")
    _tap(page, page.locator("#start"))
    page.goto(f"{lavos.base_url}/tables/{TABLE}")
    _tap(page, _product(page, "Pivo 0,5 l"))
    assert "Pridané: 1 × Pivo 0,5" in page.locator(".flash").inner_text()
    _tap(page, _product(page, "Kofola 0,5 l"))
    sid = lavos.api("GET", f"/api/tables/{TABLE}", STAFF)["session"]["id"]
    time.sleep(3)
    _tap(page, page.locator("#stop"))
    tab = lavos.api("GET", f"/api/sessions/{sid}/tab", STAFF)["id"]
    assert page.url.endswith(f"/tabs/{tab}/pay"), page.url  # the stop lands on paying the whole tab

    # 2. The tab: the pay page leads on to it (the game's time and the two drinks); split in two equal parts.
    _tap(page, page.locator("#pay-tab-link"))
    assert page.url.endswith(f"/tabs/{tab}"), page.url
    assert page.locator("tr.line-game").count() == 1 and page.locator("tr.line-item").count() == 2
    total = _cents(page.locator("#tab-total").inner_text())
    game = _cents(page.locator("tr.line-game td").last.inner_text())
    session = lavos.api("GET", f"/api/sessions/{sid}", MANAGER)
    played = datetime.fromisoformat(session["stopped_at"]) - datetime.fromisoformat(session["started_at"])
    minutes = max(1, math.ceil(played.total_seconds() / 60))  # every started minute
    assert game == RATE * minutes // 60 and total == game + BEER + KOFOLA
    assert page.locator("#tab-vat tr.vat-row").locator("td").all_inner_texts() == [
        "23\u00a0%",
        eur(total - _vat(total)),
        eur(_vat(total)),
        eur(total),
    ]
    _tap(page, page.locator("#split-2"))
    parts = page.locator(".split-part")
    assert parts.count() == 2
    first, second = (total + 1) // 2, total // 2  # odd cents: the first part gets the extra one
    assert [_cents(parts.nth(i).locator("strong.money").inner_text()) for i in range(2)] == [first, second]

    # Part 1 in cash: the player hands over 20 €, one tap; the change is on the button and on the receipt.
    _tap(page, parts.first.locator("a.btn"))
    assert page.url.endswith(f"/tabs/{tab}/pay?part=1"), page.url
    assert "asked" in (page.locator("#part-1").get_attribute("class") or "")
    note = page.locator(f"#part-1 button[data-note='{TENDERED}']")
    change = TENDERED - first
    assert note.locator(".quick-change").inner_text().replace("\u00a0", " ") == f"vydať {eur(change)}".replace("\u00a0", " ")
    _tap(page, note)
    text = _check_receipt(page, first, "Hotovosť")
    assert f"{TABLE_NAME}, časť 1" in text, text
    assert _money(page, "#receipt-tendered") == eur(TENDERED) and _money(page, "#receipt-change") == eur(change)

    # Part 2 by card, from the tab's split list.
    page.goto(f"{lavos.base_url}/tabs/{tab}")
    assert page.locator("#tab-status").inner_text() == "čiastočne zaplatený"
    assert "Časť 1 zaplatená" in page.locator(".split-part").first.inner_text()
    _tap(page, page.locator(".split-part").nth(1).locator("a.btn"))
    card = page.locator("#part-2 button[data-method=card]")
    assert _cents(card.locator(".money").inner_text()) == second
    _tap(page, card)
    text = _check_receipt(page, second, "Karta")
    assert f"{TABLE_NAME}, časť 2" in text, text
    assert page.locator("#receipt-change").count() == 0

    # Paid in full: the tab says so, and it is gone from the unpaid list on the bills page.
    page.goto(f"{lavos.base_url}/tabs/{tab}")
    assert page.locator("#tab-status").inner_text() == "zaplatený"
    assert _money(page, "#tab-owed") == eur(0) and page.locator("#pay").count() == 0
    page.goto(f"{lavos.base_url}/tabs/{tab}/pay")
    assert "Zaplatené v plnej výške" in page.locator("#pay-nothing").inner_text()
    view = lavos.api("GET", f"/api/tabs/{tab}/payments", STAFF)
    assert (view["status"], view["owed_cents"]) == ("paid", 0)
    assert [(p["method"], p["amount_cents"], p["tendered_cents"], p["change_cents"], p["part"]) for p in view["payments"]] == [
        ("cash", first, TENDERED, change, 1),
        ("card", second, None, 0, 2),
    ]
    page.goto(f"{lavos.base_url}/bills")
    assert page.locator(f"#unpaid-tabs tr.unpaid-row[data-tab='{tab}']").count() == 0

    # 3. A walk-in tab at the bar: one Borovička, paid in cash with the exact amount (one tap, on the tab).
    page.locator("#walk-in-form input[name=label]").fill("Hosť pri bare")
    _tap(page, page.locator("#walk-in"))
    assert "Hosť pri bare" in page.locator("#tab-title").inner_text()
    walk = int(page.url.rsplit("/", 1)[1])
    _tap(page, _product(page, "Borovička"))
    assert _cents(page.locator("#tab-total").inner_text()) == BOROVICKA
    cash = page.locator(".quick-pay button[data-method=cash]")
    assert _cents(cash.locator(".money").inner_text()) == BOROVICKA
    _tap(page, cash)
    assert "Borovička 4 cl" in _check_receipt(page, BOROVICKA, "Hotovosť")
    assert page.locator("#receipt-change").count() == 0  # exact: no change line
    assert lavos.api("GET", f"/api/tabs/{walk}/payments", STAFF)["status"] == "paid"
    page.goto(f"{lavos.base_url}/bills")
    assert page.locator("#unpaid-tabs tr.unpaid-row").count() == 0 and page.locator("#no-unpaid").is_visible()

    # 4. The close-out: counted = float + the cash taken; the Z report agrees with what was paid.
    cash, card = first + BOROVICKA, second
    stale = open_page(PHONE, mobile=True)  # the phone behind the bar has the close-out open too
    log_in(stale, lavos, STAFF, "/day")
    _fits(stale, PHONE["width"])
    assert stale.locator("#z-blind").count() == 1 and stale.locator("#z-expected").count() == 0  # staff count blind
    _tap(page, page.locator("#to-day"))
    assert page.locator("#z-blind").count() == 1 and page.locator("#z-total").count() == 0
    page.locator("#counted-eur").fill(f"{(FLOAT + cash) // 100},{(FLOAT + cash) % 100:02d}")
    _tap(page, page.locator("#close-day"))
    assert page.url.endswith(f"/day/{day}/report"), page.url
    assert "Deň je uzavretý" in page.locator(".flash").inner_text()
    assert _money(page, "#z-counted") == eur(FLOAT + cash) and _money(page, "#z-variance") == eur(0)
    assert "even" in (page.locator(".z-variance").get_attribute("class") or "")
    methods = page.locator("#z-methods")
    assert methods.locator("tr[data-method=cash] td").all_inner_texts() == ["Hotovosť", "2", eur(cash)]
    assert methods.locator("tr[data-method=card] td").all_inner_texts() == ["Karta", "1", eur(card)]
    assert _money(page, "#z-total") == eur(cash + card)
    z = lavos.api("GET", f"/api/days/{day}", STAFF)
    assert (z["counted_cents"], z["expected_cash_cents"], z["variance_cents"], z["total_cents"]) == (
        FLOAT + cash,
        FLOAT + cash,
        0,
        cash + card,
    )
    assert {m["method"]: (m["count"], m["net_cents"]) for m in z["by_method"]} == {"cash": (2, cash), "card": (1, card)}

    # The day cannot be closed twice: the phone's page from before the close sends it again; nothing changes.
    stale.locator("#counted-eur").fill("1,00")
    _tap(stale, stale.locator("#close-day"))
    assert "je už uzavretý" in stale.locator(".flash").inner_text()
    _fits(stale, PHONE["width"])
    again = lavos.api("GET", f"/api/days/{day}", STAFF)
    assert (again["counted_cents"], again["closed_at"]) == (FLOAT + cash, z["closed_at"])
