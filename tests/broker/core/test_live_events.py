"""The hub's live events are typed (issue 31, item 4): one frozen dataclass per kind, its topic a
class attribute, its payload its fields. What the listeners and the pages' stream get is what they
got when the events were (topic, dict) pairs written out at each call."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from broker.bookings.events import BookingChanged, WaitingListChanged
from broker.core.events import AlertAcked, AlertOpened, LiveEvent, SessionChanged
from broker.core.listeners import Listeners
from broker.floor.events import CheckinChanged, LightChanged, NodeChanged, SensorEventApplied, TableWarning
from broker.till.events import DayChanged, FiscalChanged, TabChanged, TabPaid
from broker.tournaments.events import TournamentCalled, TournamentChanged
from dashboard.web.live import page_events

AT = datetime(2026, 12, 7, 20, 0, tzinfo=UTC)

# Each event as the parts raise it, and the (topic, data) the old calls passed for it.
CASES = [
    (SessionChanged("pool-01", "start", session_id=7), "session", {"table": "pool-01", "session_id": 7, "action": "start"}),
    (
        SessionChanged("pool-02", "transfer", session_id=7, from_table="pool-01"),
        "session",
        {"table": "pool-02", "session_id": 7, "action": "transfer", "from_table": "pool-01"},
    ),
    (SessionChanged("pool-01", "tab", tab=3), "session", {"table": "pool-01", "action": "tab", "tab": 3}),
    (
        AlertOpened(5, "node_offline", None, "warning", "Stôl", "Table"),
        "alert",
        {"id": 5, "kind": "node_offline", "table": None, "severity": "warning", "message": "Stôl", "message_en": "Table"},
    ),
    (AlertAcked(5), "alert_ack", {"id": 5}),
    (
        SensorEventApplied("pool-01", "pocket", {}, AT, None, False),
        "event",
        {"table": "pool-01", "type": "pocket", "data": {}, "received_at": AT, "ts": None, "ts_synced": False},
    ),
    (CheckinChanged("foos-01", "Jana"), "checkin", {"table": "foos-01", "member": "Jana"}),
    (CheckinChanged("foos-01", "Jana", action="checkout"), "checkin", {"table": "foos-01", "member": "Jana", "action": "checkout"}),
    (NodeChanged("pool-01", False), "node", {"table": "pool-01", "online": False}),
    (LightChanged("pool-01", True, None, None), "light", {"table": "pool-01", "on": True, "blink": None, "cause": None}),
    (TableWarning("pool-01", "closing"), "warning", {"table": "pool-01", "kind": "closing"}),
    (TableWarning("pool-01", "prepaid", left_s=300), "warning", {"table": "pool-01", "kind": "prepaid", "left_s": 300}),
    (TabChanged(3), "tab", {"tab": 3}),
    (TabPaid(3, None), "tab", {"tab": 3, "table": None, "action": "payment"}),
    (DayChanged("2026-12-07", "close"), "day", {"day": "2026-12-07", "action": "close"}),
    (FiscalChanged(9, "offline"), "fiscal", {"payment": 9, "state": "offline"}),
    (BookingChanged(booking=4), "booking", {"booking": 4}),
    (BookingChanged(block=2), "booking", {"block": 2}),
    (WaitingListChanged(), "waiting", {}),
    (TournamentCalled(1, None), "tournament", {"tournament": 1, "table": None}),
    (TournamentChanged(1, match="A1"), "tournament", {"tournament": 1, "match": "A1"}),
]


@pytest.mark.parametrize(("event", "topic", "data"), CASES, ids=[f"{type(c[0]).__name__}-{i}" for i, c in enumerate(CASES)])
def test_a_listener_hears_the_topic_and_payload_it_heard_before(event: LiveEvent, topic: str, data: dict[str, object]) -> None:
    heard: list[tuple[str, dict[str, object]]] = []
    listeners = Listeners()
    listeners.subscribe(lambda t, d: heard.append((t, d)))
    listeners.notify(event)
    assert heard == [(topic, data)]


def test_the_pages_stream_gets_the_table_of_each_and_both_tables_of_a_move() -> None:
    moved = SessionChanged("pool-02", "transfer", session_id=7, from_table="pool-01")
    assert page_events(moved.topic, moved.payload()) == [{"topic": "table", "table": "pool-01"}, {"topic": "table", "table": "pool-02"}]
    opened = AlertOpened(5, "node_offline", "pool-01", "warning", "Stôl", "Table")
    assert page_events(opened.topic, opened.payload())[0]["topic"] == "alert"
    assert page_events(TabPaid(3, "pool-01").topic, TabPaid(3, "pool-01").payload()) == [{"topic": "tab", "table": "pool-01"}]


def test_every_kind_is_frozen_and_names_its_topic() -> None:
    kinds = {type(e) for e, _, _ in CASES}
    for kind in kinds:
        assert (
            dataclasses.is_dataclass(kind) and cast(Any, kind).__dataclass_params__.frozen
        )  # a dataclass's private field: not in typeshed
        assert isinstance(kind.topic, str) and kind.topic
