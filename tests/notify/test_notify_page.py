"""/notifications (server-rendered): add, test, change, remove a target; the secret never on the
page; a refused form keeps what was typed (but the URL) and says why; staff cannot reach it."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from tests.dashboard.conftest import sqlite_only
from tests.notify.receivers import Webhook
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from broker.notify.notifications import Target
    from tests.dashboard.pages_client import Pages


SECRET = "t0p-s3cret"


@sqlite_only
def test_the_manager_adds_tests_changes_and_removes_a_target(pages: Pages) -> None:
    hook = Webhook().start()
    try:
        url = f"json://boss:{SECRET}@127.0.0.1:{hook.port}/x"
        pages.refused_to_others("GET", "/notifications")
        pages.refused_to_others("POST", "/notifications/targets", {"url": url})
        assert 'href="/notifications"' in pages.page("/monitoring")

        html = pages.follow(pages.post("/notifications/targets", {"url": url, "min_severity": "warning", "label": "Šéf"}))
        assert "json://…@127.0.0.1/…" in html and SECRET not in html and "Šéf" in html
        (target,) = pages.service.notifications.settings.targets

        html = pages.post(f"/notifications/targets/{target.id}/test").text
        assert "Skúšobná správa bola doručená." in html
        wait_until(lambda: len(hook.received) == 1, what="the test message")

        r = pages.post(f"/notifications/targets/{target.id}", {"quiet_from": "23:00", "quiet_to": "", "label": "Šéf doma"})
        assert r.status_code == 400 and SECRET not in r.text and 'value="Šéf doma"' in r.text
        assert pages.service.notifications.settings.targets == (target,)  # refused: nothing changed

        r = pages.post("/notifications/targets", {"url": "nonsense://x"})
        assert r.status_code == 400 and "nonsense://x" not in r.text

        pages.follow(
            pages.post(
                f"/notifications/targets/{target.id}", {"quiet_from": "23:00", "quiet_to": "07:00", "lang": "en", "kinds": ["node_offline"]}
            )
        )
        (changed,) = pages.service.notifications.settings.targets
        assert changed.url == target.url and changed.kinds == ("node_offline",) and changed.quiet_to == "07:00"

        pages.follow(pages.post(f"/notifications/targets/{target.id}/remove"))
        # (the unpacking above made mypy take the targets for one Target's tuple from then on)
        assert cast("tuple[Target, ...]", pages.service.notifications.settings.targets) == ()
    finally:
        hook.stop()
