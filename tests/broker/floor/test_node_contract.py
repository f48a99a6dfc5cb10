"""Issue 30, item 4: a node that speaks another wire contract version is refused with an alert naming
the table and both versions, never read as this version's (the hub's ingest rules, no MQTT)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.adapters.hub_link import Inbound
from broker.storage.engine import open_store
from broker.storage.models import Alert, Event, Node, NodeRejectCount
from devices import contract
from devices.version import software_version
from tests.support.hub import new_hub
from tests.support.matching import some
from tests.support.sqlite_template import migrated_sqlite

if TYPE_CHECKING:
    from broker.hall.hub import Hub


TABLE = "pool-01"
_mid = iter(range(1, 1_000_000))


def birth(version: str, speaks: int | None, boot: str) -> tuple[str, bytes]:
    body: dict[str, object] = {"state": "online", "boot": boot, "version": version, "ts": "2026-11-10T17:00:00+00:00"}
    if speaks is not None:
        body["contract"] = speaks
    return contract.status_topic(TABLE), json.dumps(body).encode()


def pocket(v: int, seq: int, boot: str) -> tuple[str, bytes]:
    ev = {"v": v, "table": TABLE, "type": "pocket", "boot": boot, "seq": seq, "ts": "2026-11-10T17:00:01+00:00", "ts_synced": True}
    return contract.event_topic(TABLE, "pocket"), json.dumps({**ev, "data": {"pocket": 1, "pulse_ms": 20.0}}).encode()


def telemetry(uptime: int) -> tuple[str, bytes]:
    return contract.telemetry_topic(TABLE), json.dumps({"uptime_s": uptime, "outbox": 0}).encode()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    store = open_store(migrated_sqlite(tmp_path / "lavos.db"))
    try:
        yield new_hub(store)  # no MQTT: the ingest rules alone
    finally:
        store.close()


def deliver(hub: Any, *msgs: tuple[str, bytes]) -> None:
    batch = [Inbound(topic, payload, next(_mid), 1, time.monotonic()) for topic, payload in msgs]
    hub.run_on_writer(lambda: hub.handlers.apply_batch(batch))


def node_contract_alerts(hub: Any) -> list[Alert]:
    with hub.store.reader() as db:
        return list(db.scalars(select(Alert).where(Alert.kind == "node_contract")))


def test_a_birth_of_another_contract_refuses_the_node_until_it_speaks_ours(hub: Hub) -> None:
    deliver(hub, birth("0.1.0", 1, "b-old"), telemetry(10))
    with hub.store.reader() as db:
        assert some(db.get(Node, TABLE)).online

    # The node is updated to a release of contract v2 (the hub is not): its birth, telemetry and events.
    deliver(hub, birth("0.3.0", 2, "b-new"), telemetry(20), pocket(2, 1, "b-new"))
    [alert] = node_contract_alerts(hub)
    assert alert.closed_at is None and alert.severity == "critical" and alert.table_id == TABLE
    assert alert.message.startswith("Pool 1: modul hovorí protokolom v2, hub v1")
    assert alert.message_en.startswith("Pool 1: the module speaks wire contract v2, the hub v1")
    with hub.store.reader() as db:
        node = db.get(Node, TABLE)
        assert node is not None
        assert not node.online and node.version == "0.1.0" and node.boot == "b-old"  # nothing of it read as v1
        assert node.telemetry["uptime_s"] == 10
        assert db.scalars(select(Event).where(Event.table_id == TABLE)).all() == []
        counts = {r.reason: r.count for r in db.scalars(select(NodeRejectCount).where(NodeRejectCount.table_id == TABLE))}
        assert counts == {"contract": 3}

    # Back to a release of ours: accepted again, the alert settled.
    deliver(hub, birth(software_version(), 1, "b-fixed"), telemetry(5), pocket(1, 1, "b-fixed"))
    assert node_contract_alerts(hub)[0].closed_at is not None
    with hub.store.reader() as db:
        node = db.get(Node, TABLE)
        assert node is not None
        assert node.online and node.version == software_version() and node.telemetry["uptime_s"] == 5
        assert len(db.scalars(select(Event).where(Event.table_id == TABLE)).all()) == 1


def test_an_event_of_another_contract_opens_the_alert_naming_both_versions(hub: Hub) -> None:
    deliver(hub, birth("0.1.0", None, "b-1"), pocket(3, 7, "b-1"))  # a birth before nodes said their contract: v1
    [alert] = node_contract_alerts(hub)
    assert "v3" in alert.message and "v1" in alert.message
    with hub.store.reader() as db:
        assert db.scalars(select(Event)).all() == []


def test_a_version_that_is_not_a_number_is_still_just_invalid() -> None:
    with pytest.raises(contract.ContractError) as e:
        contract.decode(*pocket(1, 1, "b")[:1], json.dumps({"v": "2"}))
    assert not isinstance(e.value, contract.ContractVersionError)
    assert contract.decode(*birth("9.9", 1, "b")).body.contract == 1
