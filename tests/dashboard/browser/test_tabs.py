"""Issue 12, the tab: in Chromium against the real `lavos server`, at tablet and phone size, in
Slovak (and English for the tab page). Start a game, put two drinks on its tab from the table page,
void one with a reason, read the tab with its VAT per rate; a walk-in tab at the bar merged onto a
table's tab; that bill split into two equal parts.

The server runs on the real clock; the tables here have no node (nothing waits for one).
"""

from __future__ import annotations

import re

import pytest

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import eur, log_in, unfold_menu
from tests.dashboard.conftest import STAFF

SIZES = {"tablet": (TABLET, False, "pool-06"), "phone": (PHONE, True, "pool-07")}


def _fits(page, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll} px wide in a {width} px viewport"


def _tap(page, locator) -> None:
    with page.expect_navigation():
        locator.tap()


def _product(page, name: str):
    return page.locator("button.product-btn", has_text=re.compile("^" + re.escape(name))).first


@pytest.mark.parametrize("size", SIZES)
def test_two_drinks_on_a_games_tab_one_voided_and_the_vat_per_rate(lavos, open_page, size):
    viewport, mobile, table = SIZES[size]
    page = open_page(viewport, mobile=mobile)
    log_in(page, lavos, STAFF, f"/tables/{table}")
    _tap(page, page.locator("#start"))  # the floor, then back to the table the guests are at
    page.goto(f"{lavos.base_url}/tables/{table}")
    assert page.locator("#table-tab").is_visible()
    _fits(page, viewport["width"])
    _tap(page, _product(page, "Pivo 0,5 l"))
    assert "Pridané: 1 × Pivo 0,5" in page.locator(".flash").inner_text()
    _tap(page, _product(page, "Kofola 0,5 l"))
    _tap(page, page.locator("#open-tab"))
    assert page.locator("tr.line-item").count() == 2
    _fits(page, viewport["width"])
    beer = page.locator("tr.line-item").filter(has=page.locator(".item-name", has_text=re.compile("^Pivo")))
    beer.locator("summary").tap()
    beer.locator("input[name=reason]").fill("zadané omylom")
    _tap(page, beer.locator("button.btn-danger"))
    assert "Položka stornovaná" in page.locator(".flash").inner_text()
    beer = page.locator("tr.line-item.voided")
    assert beer.count() == 1 and "zadané omylom" in beer.inner_text()
    assert page.locator(".line-item.voided .item-name").evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    rows = page.locator("#tab-vat tr.vat-row")
    assert rows.count() >= 1 and "23" in rows.first.inner_text()
    total = page.locator("#tab-total").inner_text()
    assert page.locator("#tab-owed").inner_text() == total and page.locator("#pay").is_visible()
    assert "Zaplatiť" in page.locator("#pay").inner_text()
    _fits(page, viewport["width"])
    # The same tab in English.
    unfold_menu(page)
    _tap(page, page.locator("form.lang button[value=en]"))
    assert "Left to pay" in page.locator("#tab-vat").inner_text() and "Voided" in page.locator("tr.line-item.voided").inner_text()
    assert "Pay" in page.locator("#pay").inner_text()
    _fits(page, viewport["width"])
    unfold_menu(page)
    _tap(page, page.locator("form.lang button[value=sk]"))


@pytest.mark.parametrize("size", SIZES)
def test_a_walk_in_tab_merged_onto_a_table_and_split_in_two(lavos, open_page, size):
    viewport, mobile, _ = SIZES[size]
    table = "pool-08" if size == "tablet" else "pool-09"
    page = open_page(viewport, mobile=mobile)
    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": table})["id"]
    tab = lavos.api("GET", f"/api/sessions/{sid}/tab", STAFF)["id"]
    log_in(page, lavos, STAFF, "/bills")
    _fits(page, viewport["width"])
    page.locator("#walk-in-form input[name=label]").fill(f"Peter pri bare {size}")
    _tap(page, page.locator("#walk-in"))
    assert f"Peter pri bare {size}" in page.locator("#tab-title").inner_text()
    _tap(page, _product(page, "Borovička"))
    walk = int(page.url.rsplit("/", 1)[1])
    page.goto(f"{lavos.base_url}/tabs/{tab}")
    page.locator("#tab-merge select[name=other]").select_option(str(walk))
    _tap(page, page.locator("#merge"))
    assert "Účty zlúčené" in page.locator(".flash").inner_text()
    assert f"Z účtu Peter pri bare {size}" in page.locator("#tab-bill").inner_text()
    _fits(page, viewport["width"])
    lavos.api("POST", f"/api/sessions/{sid}/stop", STAFF)
    page.reload()
    _tap(page, page.locator("#split-2"))
    parts = page.locator(".split-part")
    assert parts.count() == 2 and "prvé časti dostanú cent navyše" in page.locator("#tab-split").inner_text()
    bill = lavos.api("GET", f"/api/tabs/{tab}", STAFF)
    amounts = [p["amount_cents"] for p in bill["split"]["parts"]]
    assert sum(amounts) == bill["total_cents"] and eur(amounts[0]) in parts.first.inner_text()
    _fits(page, viewport["width"])
    page.goto(f"{lavos.base_url}/tabs/{walk}")
    assert "Zlúčené do účtu" in page.locator("#tab-merged").inner_text()
