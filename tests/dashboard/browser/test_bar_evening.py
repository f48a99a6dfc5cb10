"""Issue 4, must-show 1: an evening at the bar on a tablet, against the real server, broker and nodes.

Two tablets are logged in: the bar's, which taps and types, and a second one that only watches the
floor view. Everything the watching tablet shows after its one page load arrives live (SSE), and
the test checks it never reloaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tests.dashboard.browser.conftest import TABLET
from tests.dashboard.browser.hall import drop_balls
from tests.dashboard.browser.web import eur, eur_en, log_in, page_marker, vat_in, wait_live
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.matching import some
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from edge.agent import EdgeNode
    from tests.support.web import ServedHub


TABLE, TABLE_NAME = "pool-01", "Pool 1"
QUIET_TABLE, QUIET_NAME = "pool-02", "Pool 2"  # balls drop here with no session: an alert for the bar
RATE_CENTS, TOPPING_CENTS, TOPPINGS, VAT = 600, 60, 2, 23  # deploy/venues/lavos.toml
LIVE_MS = 10_000  # the issue asks for a second; this is the give on a loaded 2-core machine


def _billed_minutes(session: dict[str, Any]) -> int:
    played = datetime.fromisoformat(session["stopped_at"]) - datetime.fromisoformat(session["started_at"])
    return max(1, math.ceil(played.total_seconds() / 60))


def test_an_evening_at_the_bar(
    lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]], tablet: Any, open_page: Callable[..., Any]
) -> None:
    bar, watcher = tablet, open_page(TABLET)
    log_in(bar, lavos, STAFF)
    log_in(watcher, lavos, STAFF)
    wait_live(watcher)
    loaded = page_marker(watcher)
    card = watcher.locator(f"#table-{TABLE}")
    assert card.get_attribute("data-state") == "free"
    assert card.locator(".light-dot.on").count() == 0

    # One tap on the table opens its panel; one tap on Start starts a session.
    bar.locator(f"#table-{TABLE}").tap()
    bar.wait_for_url(f"**/tables/{TABLE}")
    with bar.expect_navigation():
        bar.locator("#start").tap()
    sid = lavos.api("GET", f"/api/tables/{TABLE}", STAFF)["session"]["id"]

    # The node switches its relay and reports it; the watching tablet shows the light on.
    watcher.locator(f"#table-{TABLE} .light-dot.on").wait_for(timeout=LIVE_MS)
    assert some(nodes[TABLE][0].light).on, "the page shows the light on, the node's relay is off"
    assert watcher.locator(f"#table-{TABLE}").get_attribute("data-state") == "playing"

    drop_balls(nodes, TABLE, 2, 3)
    watcher.wait_for_function(
        "([sel, n]) => { const d = document.querySelector(sel); return d && d.textContent.trim() === n; }",
        arg=[f"#table-{TABLE} .drops", "3"],
        timeout=LIVE_MS,
    )

    # Two pizza toppings go on the table's tab (the product list; the venue's extras are on it), then
    # stop: the browser lands on the tab's pay page; the game's bill has its time, the tab the toppings.
    bar.goto(lavos.base_url + f"/tables/{TABLE}")
    bar.locator(".quantity-more > summary").tap()  # more than one at once: the quantity form
    add = bar.locator("#quantity-form")
    add.locator("select[name=product_id]").select_option(label="Prísada na pizzu navyše (0,60 €)")
    add.locator("input[name=quantity]").fill(str(TOPPINGS))
    with bar.expect_navigation():
        add.locator("button").tap()
    with bar.expect_navigation():
        bar.locator("#stop").tap()
    assert bar.url.endswith(f"/tabs/{lavos.api('GET', f'/api/sessions/{sid}/tab', STAFF)['id']}/pay"), bar.url  # what the table owes
    bar.goto(lavos.base_url + f"/sessions/{sid}/bill")
    watcher.locator(f"#table-{TABLE}[data-state=free]").wait_for(timeout=LIVE_MS)
    assert watcher.locator(f"#table-{TABLE} .light-dot.on").count() == 0
    wait_until(lambda: not some(nodes[TABLE][0].light).on, timeout=10, what="relay off after stop")

    # The bill, worked out here from the venue's prices: 6 €/h per started minute, 0,60 € a topping.
    minutes = _billed_minutes(lavos.api("GET", f"/api/sessions/{sid}", MANAGER))
    time_cents = RATE_CENTS * minutes // 60
    total = time_cents + TOPPINGS * TOPPING_CENTS
    vat = vat_in(total, VAT)
    rows = bar.locator(".receipt table.lines tbody tr")
    assert rows.count() == 1  # the game's own bill: its time
    assert rows.first.locator("td").all_inner_texts() == [f"{TABLE_NAME}: Štandard, 6,00 €/h, {minutes} min", eur(time_cents)]
    bar.goto(lavos.base_url + f"/sessions/{sid}/tab")
    time_row = bar.locator("#tab-bill tr.line-game td").all_inner_texts()
    assert time_row[0] == f"{TABLE_NAME}: Štandard, 6,00 €/h, {minutes} min" and time_row[-1] == eur(time_cents)
    extra_row = bar.locator("#tab-bill tr.line-item")
    assert extra_row.count() == 1 and "pizz" in extra_row.inner_text().lower()
    assert extra_row.locator("td").all_inner_texts()[1:] == [str(TOPPINGS), "23 %", eur(TOPPINGS * TOPPING_CENTS)]
    vat_row = bar.locator("#tab-vat tr.vat-row").locator("td").all_inner_texts()
    assert vat_row == ["23 %", eur(total - vat), eur(vat), eur(total)]
    assert bar.locator("#tab-total").inner_text() == eur(total)

    # Balls drop on a table nobody started: the alert reaches the watching tablet, one tap acknowledges it.
    drop_balls(nodes, QUIET_TABLE, 0, 1)
    alert = watcher.locator("#alert-banner .alert", has_text=QUIET_NAME + ":")  # the table as staff call it
    alert.wait_for(timeout=LIVE_MS)
    assert page_marker(watcher) == loaded, "the watching tablet reloaded: its updates were not live"
    alert_id = int(alert.get_attribute("data-alert-id"))
    with watcher.expect_navigation():
        alert.locator(".btn-ack").tap()
    watcher.locator(f"#alert-banner .alert[data-alert-id='{alert_id}']").wait_for(state="detached")
    acked = next(a for a in lavos.api("GET", "/api/alerts", MANAGER) if a["id"] == alert_id)
    assert acked["acked_by"] == STAFF and acked["table"] == QUIET_TABLE

    # English: the tab is the same tab, in English words and money.
    with bar.expect_navigation():
        bar.locator(".lang button[value=en]").tap()
    assert bar.locator("html").get_attribute("lang") == "en"
    assert bar.locator("#tab-total").inner_text() == eur_en(total)
    assert bar.locator("#tab-bill tr.line-game td").first.inner_text() == f"{TABLE_NAME}: Standard, €6.00/h, {minutes} min"
    assert bar.locator(".topbar nav a[href='/']").inner_text() == "Tables"
