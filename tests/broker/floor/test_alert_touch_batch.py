"""Ball drops on a table without a game: its alert is touched once a batch, and every ball counts.

The writer applies node messages in batches; a touch is an upsert and a read (~0.7 ms), so a
backlog of such drops drained at 1.5 k/s when each ball touched the alert on its own."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from bench.hub_ingest import TABLES, payloads
from broker.adapters.hub_link import Inbound
from broker.storage.engine import open_store
from broker.storage.models import Alert
from tests.support.hub import new_hub


def _inbound(msgs: Any, first_mid: int) -> list[Inbound]:
    return [Inbound(topic, payload, first_mid + i, 1, time.monotonic()) for i, (topic, payload) in enumerate(msgs)]


def test_a_batch_of_drops_without_a_game_opens_one_alert_per_table_counting_every_ball(db_url: str) -> None:
    store = open_store(db_url)
    try:
        hub = new_hub(store)  # no MQTT: the ingest rules alone
        pushed: list[dict[str, Any]] = []
        hub.subscribe(lambda topic, data: pushed.append(data) if topic == "alert" else None)
        msgs = payloads(60, "touch")  # 10 tables, 6 balls each, none of them playing
        hub.run_on_writer(lambda: hub.handlers.apply_batch(_inbound(msgs[:30], 1)))  # 3 balls a table
        with store.reader() as db:
            alerts = db.scalars(select(Alert).where(Alert.kind == "play_without_session")).all()
            assert sorted((a.table_id for a in alerts), key=str) == sorted(TABLES)
            assert {a.count for a in alerts} == {3}
        assert len(pushed) == 10  # staff are told once per table, when it opens
        hub.run_on_writer(lambda: hub.handlers.apply_batch(_inbound(msgs[30:], 31)))  # the second and third occurrence onwards
        hub.run_on_writer(lambda: hub.handlers.apply_batch(_inbound(msgs[:30], 1)))  # a redelivery of the first batch: not counted again
        with store.reader() as db:
            alerts = db.scalars(select(Alert).where(Alert.kind == "play_without_session")).all()
            assert len(alerts) == 10 and {a.count for a in alerts} == {6}
        assert len(pushed) == 10  # a touch is not a new alert
        assert hub.handlers.applied == 60 and hub.handlers.duplicates == 30
    finally:
        store.close()
