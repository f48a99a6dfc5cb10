"""/notifications in Chromium against the real `lavos server`, at tablet and phone size, in
Slovak: the manager adds a target (a real JSON webhook on loopback), sends a test message and
sees it delivered, sees the address masked (never the secret), then removes the target."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from tests.dashboard.browser.conftest import PHONE, TABLET
from tests.dashboard.browser.web import log_in
from tests.dashboard.conftest import MANAGER
from tests.notify.receivers import Webhook
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from tests.support.web import ServedHub


SECRET = "pa55-w0rd"


def _fits(page: Any, width: int) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll} px wide in a {width} px viewport"


@pytest.mark.parametrize("size", ["tablet", "phone"])
def test_add_a_target_send_a_test_message_and_remove_it(lavos: ServedHub, open_page: Callable[..., Any], size: Any) -> None:
    hook = Webhook().start()
    try:
        viewport = TABLET if size == "tablet" else PHONE
        boss = open_page(viewport, mobile=size == "phone")
        log_in(boss, lavos, MANAGER, "/notifications")
        _fits(boss, viewport["width"])
        add = boss.locator("#notify-add")
        add.locator("input[name=url]").fill(f"json://boss:{SECRET}@127.0.0.1:{hook.port}/hook")
        add.locator("input[name=label]").fill("Šéf")
        add.locator("select[name=min_severity]").select_option("warning")
        with boss.expect_navigation():
            add.locator("button[type=submit]").tap()
        target = boss.locator(".notify-target", has_text="Šéf")
        assert "json://…@127.0.0.1/…" in target.inner_text()
        assert SECRET not in boss.content()
        with boss.expect_navigation():
            target.locator("button.notify-test").tap()
        assert "Skúšobná správa bola doručená." in boss.locator(".notify-tested.ok").inner_text()
        wait_until(lambda: len(hook.received) == 1, what="the test message at the webhook")
        _fits(boss, viewport["width"])
        box = boss.locator(".notify-target button.notify-test").first.bounding_box()
        assert box is not None and box["height"] >= 44
        with boss.expect_navigation():
            boss.locator(".notify-target", has_text="Šéf").locator("button.notify-remove").tap()
        assert boss.locator(".notify-target").count() == 0
    finally:
        hook.stop()
