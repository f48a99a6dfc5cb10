"""What every fault test checks afterwards: events stored once each, and bills by the central clock."""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import select

from broker.domain.billing import billed_seconds, time_amount_cents
from broker.storage.models import Event, Game

# The venue's pool tariff (deploy/venues/lavos.toml), per hour, billed per started minute.
POOL_RATE_CENTS = 600


def stored_events(store: Any, table: str, event_type: str = "pocket") -> list[Event]:
    # A reader, not a write session: tests poll this while the hub ingests, and a write session
    # takes a connection of the writers' pool from under the hub's one writer (on a loaded machine,
    # test_node_disk_full's drain then outlasted its minute).
    with store.reader() as db:
        rows = db.scalars(select(Event).where(Event.table_id == table, Event.type == event_type).order_by(Event.id)).all()
        db.expunge_all()
    result: list[Event] = rows
    return result


def assert_each_once(rows: list[Event]) -> None:
    # The unique key makes a doubled row impossible in the table itself; this says so out loud,
    # so a schema change that dropped the key would show here first.
    twice = [k for k, n in Counter((r.table_id, r.boot, r.seq) for r in rows).items() if n > 1]
    assert not twice, f"stored more than once: {twice[:5]}"


def assert_billed_by_central_clock(store: Any, session_id: int) -> int:
    """The stored bill equals the tariff over the hub's own start/stop times; returns it."""
    with store.reader() as db:
        row = db.get(Game, session_id)
        assert row.state == "stopped", row.state
        expected = time_amount_cents(POOL_RATE_CENTS, billed_seconds(row.stopped_at - row.started_at, 60))
        assert row.total_cents == expected, (row.table_id, row.total_cents, expected)
        result: int = row.total_cents
        return result
