"""Issue 12, the tab: in Chromium against the real `lavos server`, at tablet and phone size, in
Slovak (and English for the tab page). Start a game, put two drinks on its tab from the table page,
void one with a reason, read the tab with its VAT per rate; a walk-in tab at the bar merged onto a
table's tab; that bill split into two equal parts, part 1 paid (it says so and loses its button).
Issue 19: a sale at the bar in three taps from the floor (item 15); a playing table's actions and
products on screen at 1280×800 with 40 products, the most sold first, a search, and the manager's
"Ukončiť všetky hry" (item 10).

The server runs on the real clock; the tables here have no node (nothing waits for one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pytest

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import eur, log_in, unfold_menu
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.hub import REPO
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from tests.support.web import ServedHub


SIZES = {"tablet": (TABLET, False, "pool-06"), "phone": (PHONE, True, "pool-07")}
SHOTS = REPO / "docs" / "screenshots"  # the README's (tests/dashboard/browser/test_screenshots.py writes the others)


def _fits(page: Any, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{page.url} is {scroll} px wide in a {width} px viewport"


def _tap(page: Any, locator: Any) -> None:
    with page.expect_navigation():
        locator.tap()


def _product(page: Any, name: str) -> Any:
    return page.locator("button.product-btn", has_text=re.compile("^" + re.escape(name))).first


@pytest.mark.parametrize("size", SIZES)
def test_two_drinks_on_a_games_tab_one_voided_and_the_vat_per_rate(lavos: ServedHub, open_page: Callable[..., Any], size: Any) -> None:
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
def test_a_walk_in_tab_merged_onto_a_table_and_split_in_two(lavos: ServedHub, open_page: Callable[..., Any], size: Any) -> None:
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
    # Issue 19, item 12: part 1 paid in one tap from its row; it then shows paid ("Časť 1 zaplatená")
    # and has no pay button, on the tab page and on the pay page, which never offers part 2 for it.
    _tap(page, parts.first.locator("a.btn"))
    _tap(page, page.locator("#part-1 .quick-pay button[data-method=card]"))
    assert "/receipts/" in page.url
    page.goto(f"{lavos.base_url}/tabs/{tab}")
    first = page.locator(".split-part").first
    assert "Časť 1 zaplatená" in first.inner_text() and first.locator("a.btn").count() == 0
    page.goto(f"{lavos.base_url}/tabs/{tab}/pay?part=1")
    assert "Časť 1 účtu" in page.locator("#pay-notice").inner_text() and "je už zaplatená" in page.locator("#pay-notice").inner_text()
    assert page.locator("#part-1 .part-paid").inner_text() == "Časť 1 zaplatená" and page.locator("#part-1 button").count() == 0
    assert page.locator("#part-2 .quick-pay button").count() >= 2
    _fits(page, viewport["width"])
    page.goto(f"{lavos.base_url}/tabs/{walk}")
    assert "Zlúčené do účtu" in page.locator("#tab-merged").inner_text()


def test_a_sale_at_the_bar_is_three_taps_from_the_floor(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """Issue 19, item 15: "Predaj na bar" (no name to type), the product, the note the guest hands over."""
    page = open_page(TABLET)
    log_in(page, lavos, STAFF, "/")
    taps: list[str] = []

    def tap(what: str, locator: Any) -> None:
        taps.append(what)
        _tap(page, locator)

    tap("Predaj na bar", page.locator("#bar-sale"))
    assert re.fullmatch(r"Bar \d\d:\d\d( \(\d+\))?", page.locator("#tab-title").inner_text()), page.locator("#tab-title").inner_text()
    assert _product(page, "Kofola 0,5 l").is_visible()
    tap("Kofola", _product(page, "Kofola 0,5 l"))
    tap("5 €", page.locator(".quick-pay button[data-note='500']"))
    assert "/receipts/" in page.url and "Kofola 0,5 l" in page.locator("#receipt").inner_text()
    assert page.locator("#give-change-amount").inner_text().replace(" ", "\u00a0") == eur(300)
    assert len(taps) == 3, taps
    tab = int(page.locator("#receipt-back").get_attribute("href").split("/")[2])
    assert lavos.api("GET", f"/api/tabs/{tab}/payments", STAFF)["status"] == "paid"


PRODUCTS = 40  # a bar's whole list: the actions must stay on screen however many there are


def test_a_playing_tables_actions_are_on_screen_however_many_products(lavos: ServedHub, open_page: Callable[..., Any]) -> None:
    """Issue 19, item 10, at 1280×800: stop, pause and the products (a compact grid, the most sold
    first, a search) on screen without scrolling with 40 products and an alert in the strip; the
    manager's "Ukončiť všetky hry" too, with one confirmation. (Last in the module: its products
    would push the seeded drinks out of the other tests' first buttons.)"""

    def add(n: int) -> None:
        lavos.api("POST", "/api/products", MANAGER, status=201, json={"name": f"Sirup {n:02d}", "price_cents": 120, "vat_percent": 23})

    with ThreadPoolExecutor(6) as pool:  # the manager's list made at once: a request's round trip each is the cost here
        list(pool.map(add, range(PRODUCTS - len(lavos.api("GET", "/api/products", MANAGER)))))  # that call caches the login
    sid = lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "pool-10"})["id"]
    lavos.api("POST", "/api/sessions", STAFF, status=201, json={"table": "carom-01"})
    water = next(p["id"] for p in lavos.api("GET", "/api/products", STAFF) if p["name"] == "Minerálka 0,33 l")
    walk = lavos.api("POST", "/api/tabs", STAFF, status=201, json={})["id"]
    lavos.api("POST", f"/api/tabs/{walk}/items", STAFF, status=201, json={"product_id": water, "quantity": 20})  # tonight's favourite
    lavos.api("POST", "/api/tables/pool-01/light", STAFF, json={"on": True})  # a light without a game: an alert in the strip
    wait_until(lambda: lavos.api("GET", "/api/alerts", STAFF), timeout=10, what="an open alert")
    page = open_page(TABLET)
    log_in(page, lavos, STAFF, "/tables/pool-10")
    assert page.locator("#alert-banner .alert").count() >= 1
    screen = page.evaluate("window.innerHeight")
    for selector in (
        "#pause",
        "#stop",
        "#table-tab .product-filter",
        "#table-tab button.product-btn >> nth=0",
        "#table-tab button.product-btn >> nth=7",
    ):
        box = page.locator(selector).bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= screen, f"{selector} at {box} on a {screen} px screen"
    assert page.locator("#table-tab button.product-btn").first.locator(".product-name").inner_text() == "Minerálka 0,33 l"
    assert page.locator("#table-tab button.product-btn:visible").count() == 12  # the rest behind the search
    page.locator("#table-tab .product-filter").fill("boro")  # accents and case ignored
    assert [b.strip() for b in page.locator("#table-tab button.product-btn:visible .product-name").all_inner_texts()] == ["Borovička 4 cl"]
    with page.expect_navigation():
        page.locator("#table-tab .product-filter").press("Enter")  # the one found goes on the tab
    assert "Pridané: 1 × Borovička" in page.locator(".flash").inner_text()
    page.locator("#table-tab .product-filter").fill("sirup 2")  # Sirup 20 … 29
    assert page.locator("#table-tab button.product-btn:visible").count() == 10  # beyond the first 12 too
    _fits(page, TABLET["width"])

    boss = open_page(TABLET)
    log_in(boss, lavos, MANAGER, "/tables/pool-10")
    box = boss.locator("#stop-all").bounding_box()
    assert box and box["y"] + box["height"] <= screen
    playing = len(lavos.api("GET", "/api/sessions?open=true", STAFF))  # this module's other games too
    _tap(boss, boss.locator("#stop-all"))
    assert f"Hrajú sa {playing} hry." in boss.locator("#closing-confirm").inner_text()
    _tap(boss, boss.locator("#stop-all-confirm"))
    assert boss.url.endswith("/bills") and f"Ukončené {playing} hry." in boss.locator(".flash").inner_text()
    assert lavos.api("GET", "/api/sessions?open=true", STAFF) == []
    tab = lavos.api("GET", f"/api/sessions/{sid}/tab", STAFF)["id"]
    assert boss.locator(f"#unpaid-tabs tr.unpaid-row[data-tab='{tab}']").count() == 1  # left open to be paid


@pytest.mark.parametrize("size", SIZES)
def test_the_bar_sees_the_last_bottles_and_the_manager_counts_them(lavos: ServedHub, open_page: Callable[..., Any], size: Any) -> None:
    """Issue 32 §1: a tracked product's button says "posledné 3" and still sells; the stocktake page
    takes a count per item (the difference a movement), both fitting the tablet and the phone."""
    viewport, mobile, _ = SIZES[size]
    name = f"Bažant fľaša {size}"
    item = lavos.api("POST", "/api/stock/items", MANAGER, status=201, json={"name": name, "threshold_milli": 1000})["id"]
    product = lavos.api(
        "POST", "/api/products", MANAGER, status=201, json={"name": name, "price_cents": 250, "vat_percent": 23, "category": "drinks"}
    )["id"]
    lavos.api("PUT", f"/api/stock/recipes/{product}", MANAGER, json={"lines": [{"item": item, "quantity_milli": 1000}]})
    delivery = {"item": item, "quantity_milli": 4000, "price_cents": 492, "supplier": "Heineken SK"}
    lavos.api("POST", "/api/stock/deliveries", MANAGER, status=201, json=delivery)
    tab = lavos.api("POST", "/api/tabs", STAFF, status=201, json={"label": f"Bar {size}"})["id"]

    page = open_page(viewport, mobile=mobile)  # the manager, at the bar and then counting: one login per size
    log_in(page, lavos, MANAGER, f"/tabs/{tab}")
    page.locator(".product-filter").fill(name)
    _tap(page, _product(page, name))
    page.locator(".product-filter").fill(name)
    button = _product(page, name)
    assert "posledné 3" in button.inner_text() and button.is_enabled()
    _fits(page, viewport["width"])
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"stock-last-{size}.png"))  # the README's screenshots: the viewport, as on the device

    page.goto(f"{lavos.base_url}/stock/count")
    page.locator(f"[data-count-item='{item}'] input").fill("2")
    _tap(page, page.locator("#count-button"))
    assert "Inventúra uložená" in page.locator(".flash").inner_text()
    _fits(page, viewport["width"])
    page.screenshot(path=str(SHOTS / f"stock-count-{size}.png"))
    assert [i["level_milli"] for i in lavos.api("GET", "/api/stock/items", MANAGER) if i["id"] == item] == [2000]
