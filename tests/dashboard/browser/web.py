"""What the browser tests do on the pages: log in, know the live stream is open, read money."""

from __future__ import annotations

import re
from typing import Any

from tests.dashboard.conftest import PASSWORD
from tests.support.server import Served

# Recorded before the page's own scripts run: every EventSource the page opens, so a test can
# wait until the live stream is really connected before it makes something happen at a table
# (otherwise a slow connect would be counted as update latency, or the update missed).
LIVE_PROBE = """
(() => {
  const Real = window.EventSource;
  if (!Real) return;
  window.__lavosStreams = [];
  window.EventSource = function (url, init) {
    const es = new Real(url, init);
    window.__lavosStreams.push(es);
    return es;
  };
  window.EventSource.prototype = Real.prototype;
  window.__lavosLoaded = Math.random();
})();
"""


def prepare(page: Any) -> None:
    page.add_init_script(LIVE_PROBE)
    # The stop button asks "stop and show the bill?": staff say yes (Playwright would dismiss it).
    page.on("dialog", lambda dialog: dialog.accept())


def log_in(page: Any, server: Served, username: str, path: str = "/") -> None:
    """Open `path` as an anonymous visitor, get sent to the login form, log in, land back on `path`."""
    page.goto(server.base_url + path)
    assert re.search(r"/login(\?|$)", page.url), f"an anonymous visit to {path} ended on {page.url}, not the login page"
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.locator(".login-box button[type=submit]").tap()
    assert page.url.removeprefix(server.base_url) == path, f"after login the browser is on {page.url}"


def unfold_menu(page: Any) -> None:
    """On a phone the top bar folds links, language and logout behind its Menu button: unfold it."""
    toggle = page.locator("#menu-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def wait_live(page: Any, timeout_ms: int = 20_000) -> None:
    """Until the page's Server-Sent Events stream is open (readyState 1)."""
    page.wait_for_function("() => (window.__lavosStreams || []).some(es => es.readyState === 1)", timeout=timeout_ms)


def page_marker(page: Any) -> float:
    """A number made when the document loaded: unchanged means the page was not reloaded."""
    result: float = page.evaluate("window.__lavosLoaded")
    return result


def eur(cents: int) -> str:
    """Slovak money as staff read it: 1,30 € (with a no-break space: money never breaks across lines)."""
    return f"{cents // 100},{cents % 100:02d}\u00a0€"


def eur_en(cents: int) -> str:
    return f"€{cents // 100}.{cents % 100:02d}"


def vat_in(total_cents: int, percent: int) -> int:
    """The VAT contained in a VAT-inclusive total, half-up to the cent (as a receipt shows it)."""
    return (2 * total_cents * percent + (100 + percent)) // (2 * (100 + percent))
