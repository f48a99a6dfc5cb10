"""Issue 11, item 8 (alerts): "Potvrdiť" and "Vyriešené" side by side with a gap, each saying what
it does, and who acknowledged an alert and when, on the tablet and the phone."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.hall import drop_balls
from tests.dashboard.browser.web import log_in
from tests.dashboard.conftest import MANAGER, STAFF
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from edge.agent import EdgeNode
    from tests.support.web import ServedHub


NODE_TABLES = ("pool-01", "pool-02")
GAP_PX = 8


@pytest.fixture(scope="module")
def alerts(lavos: ServedHub, nodes: dict[str, tuple[EdgeNode, Any]]) -> Any:
    drop_balls(nodes, "pool-01", 0, 1)
    drop_balls(nodes, "pool-02", 0, 1)
    wait_until(lambda: len(lavos.api("GET", "/api/alerts", STAFF)) >= 2, timeout=10, what="two open alerts")
    first = min(a["id"] for a in lavos.api("GET", "/api/alerts", STAFF))
    lavos.api("POST", f"/api/alerts/{first}/ack", STAFF, json={})
    return first


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_alert_buttons_are_apart_explained_and_the_acknowledgement_is_shown(
    lavos: ServedHub, alerts: Any, open_page: Callable[..., Any], size: Any
) -> None:
    page = open_page(TABLET if size == "tablet" else PHONE, mobile=size == "phone")
    log_in(page, lavos, MANAGER, "/alerts")
    acked = page.locator(f"tr[data-alert-id='{alerts}']")
    assert STAFF in acked.locator("td.acked").inner_text()
    assert any(ch.isdigit() for ch in acked.locator("td.acked").inner_text())  # when: date and time
    row = page.locator(f"tr[data-alert-id]:not([data-alert-id='{alerts}'])").first
    ack, resolved = row.locator(".btn-ack"), row.locator(".btn-resolve")
    assert ack.inner_text() == "Potvrdiť" and resolved.inner_text() == "Vyriešené"
    assert ack.get_attribute("title") and resolved.get_attribute("title")
    a, r = ack.bounding_box(), resolved.bounding_box()
    apart = max(r["x"] - (a["x"] + a["width"]), r["y"] - (a["y"] + a["height"]))
    assert apart >= GAP_PX, f"the buttons are {apart:.0f} px apart ({a}, {r})"
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
