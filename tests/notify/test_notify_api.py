"""The notifications API: targets (manager only, URLs write-only and masked, audited without
them), a test message against a real webhook, the history; refusals change nothing."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from broker.storage.models import AuditEntry, Setting
from tests.dashboard.conftest import sqlite_only
from tests.notify.receivers import Webhook
from tests.support.matching import some
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


SECRET = "s3cr3t-token"


@sqlite_only
def test_targets_are_masked_audited_without_the_secret_and_testable(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    hook = Webhook().start()
    try:
        url = f"json://user:{SECRET}@127.0.0.1:{hook.port}/hook-{SECRET}"
        api.ok("GET", "/api/notifications/targets", 403)  # staff: not theirs
        t = api.ok("POST", "/api/notifications/targets", as_manager=True, json={"url": url, "min_severity": "warning"})
        assert t["url"] == "json://…@127.0.0.1/…" and t["lang"] == "sk"
        listed = api.ok("GET", "/api/notifications/targets", as_manager=True)
        assert SECRET not in json.dumps(listed)
        result = api.ok("POST", f"/api/notifications/targets/{t['id']}/test", as_manager=True)
        assert result == {"delivered": True, "error": None}
        wait_until(lambda: len(hook.received) == 1, what="the test message")
        assert "Skúšobná správa" in hook.texts()[0]

        # A change without a URL keeps the secret; a bad one is refused and changes nothing.
        api.ok(
            "PUT", f"/api/notifications/targets/{t['id']}", as_manager=True, json={"lang": "en", "quiet_from": "23:00", "quiet_to": "07:00"}
        )
        assert api.ok("POST", f"/api/notifications/targets/{t['id']}/test", as_manager=True)["delivered"] is True
        before = api.ok("GET", "/api/notifications/targets", as_manager=True)
        api.refused("PUT", f"/api/notifications/targets/{t['id']}", 409, json={"url": "nonsense://x", "lang": "sk"})
        api.refused("PUT", f"/api/notifications/targets/{t['id']}", 409, json={"quiet_from": "25:99", "quiet_to": "07:00"})
        api.refused("POST", "/api/notifications/targets", 409, json={"url": "not a url"})
        assert api.ok("GET", "/api/notifications/targets", as_manager=True) == before

        with api.service.store.reader() as db:
            audits = [json.dumps(a.detail) for a in db.query(AuditEntry).filter(AuditEntry.action == "notify.settings")]
            stored = some(db.get(Setting, "notify")).value
        assert len(audits) == 2 and all(SECRET not in a for a in audits)
        assert SECRET in json.dumps(stored)  # kept, to send with
        assert SECRET not in caplog.text
        hist = api.ok("GET", "/api/notifications/history", as_manager=True)
        assert hist["pending"] == 0 and SECRET not in json.dumps(hist)

        api.ok("DELETE", f"/api/notifications/targets/{t['id']}", as_manager=True)
        assert api.ok("GET", "/api/notifications/targets", as_manager=True) == []
        api.refused("DELETE", f"/api/notifications/targets/{t['id']}", 409)
    finally:
        hook.stop()
