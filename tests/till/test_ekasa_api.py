"""The eKasa API through a running hub and the simulator: settings (manager, audited, validated),
test connection, the unregistered receipts staff see, a paragón, refusals that change nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from broker.storage.models import AuditEntry, Payment
from tests.support.ekasa_sim import EkasaSimulator
from tests.support.matching import some
from tests.support.waiting import wait_until
from tests.till.payment_stand_in import fiscal, game_tab, pay

if TYPE_CHECKING:
    from pathlib import Path

    from tests.dashboard.conftest import Api


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[EkasaSimulator]:
    s = EkasaSimulator(tmp_path).start()
    yield s
    s.stop()


def test_settings_test_connection_receipts_and_a_paragon(api: Api, sim: EkasaSimulator) -> None:
    api.service.till.fiscal.poll_s = 0.2
    assert api.ok("GET", "/api/ekasa/settings", as_manager=True)["enabled"] is False
    api.ok("GET", "/api/ekasa/settings", 403)  # staff: not the settings
    assert api.ok("POST", "/api/ekasa/test", as_manager=True, json={"url": sim.url, "timeout_s": 2})["reachable"] is True
    api.refused("PUT", "/api/ekasa/settings", 409, json={"enabled": True, "url": "ftp://x", "timeout_s": 2})
    assert api.ok("GET", "/api/ekasa/settings", as_manager=True)["enabled"] is False  # refused: nothing changed
    sim.stop()
    assert api.ok("POST", "/api/ekasa/test", as_manager=True, json={"url": sim.url, "timeout_s": 1})["reachable"] is False
    s = api.ok("PUT", "/api/ekasa/settings", as_manager=True, json={"enabled": True, "url": sim.url, "timeout_s": 1})
    assert s["enabled"] is True and s["url"] == sim.url
    with api.service.store.reader() as db:
        assert db.query(AuditEntry).filter(AuditEntry.action == "ekasa.settings").count() == 1

    pid = pay(api.service, game_tab(api.service))
    rows = api.ok("GET", "/api/ekasa/receipts")
    assert [(r["payment_id"], r["state"], r["table"]) for r in rows] == [(pid, "pending", "Pool 1")] or rows[0]["state"] == "pending"
    api.refused("POST", f"/api/ekasa/receipts/{pid}/paragon", 422, as_manager=False, json={"number": "", "at": "2026-12-01T20:00:00Z"})
    detail = api.refused(
        "POST", f"/api/ekasa/receipts/{pid}/paragon", 409, as_manager=False, json={"number": "x1", "at": api.service.clock().isoformat()}
    )
    assert "paragón" in detail
    with api.service.store.reader() as db:
        assert some(db.get(Payment, pid)).paragon_no is None
    api.ok("POST", f"/api/ekasa/receipts/{pid}/paragon", json={"number": "42", "at": api.service.clock().isoformat()})
    assert api.ok("GET", "/api/ekasa/receipts")[0]["state"] == "paragon"
    sim.start()
    wait_until(lambda: fiscal(api.service, pid)[0] == "registered", 20, "the paragón registered")
    assert api.ok("GET", "/api/ekasa/receipts") == [] and sim.count(f"lavos-lavos-{pid}") == 1
