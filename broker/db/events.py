"""Raw events from the tables: exactly-once insert and retention (refused messages: broker.db.rejects)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import delete
from sqlalchemy.orm import Session

from broker.db.dialect import upsert_insert
from broker.db.models import Event
from broker.db.types import utcnow

_EVENTS = Event.__table__
_KEY = ["table_id", "boot", "seq"]


class EventKey(NamedTuple):
    table_id: str
    boot: str
    seq: int


def insert_events_once(db: Session, events: Iterable[dict[str, Any]]) -> set[EventKey]:
    """Insert events that are not stored yet; returns the keys of those that were new.

    Each dict has the Event columns: table_id, boot, seq, type, node_ts (aware), ts_synced,
    data, and optionally received_at. A key already stored (a redelivery, a replay after a
    restart, or a concurrent writer that got there first) is skipped by the database itself,
    so the answer is right under concurrency, on both backends.
    """
    rows = list(events)
    if not rows:
        return set()
    stmt = upsert_insert(db, _EVENTS).on_conflict_do_nothing(index_elements=_KEY)
    result = db.execute(stmt.returning(_EVENTS.c.table_id, _EVENTS.c.boot, _EVENTS.c.seq), rows)
    return {EventKey(*r) for r in result}


def insert_event_once(
    db: Session, *, table_id: str, boot: str, seq: int, type: str, node_ts: datetime,
    ts_synced: bool, data: dict[str, Any], received_at: datetime | None = None,
) -> bool:
    """True if this (table_id, boot, seq) was new and is now stored; False for a duplicate."""
    row = dict(table_id=table_id, boot=boot, seq=seq, type=type, node_ts=node_ts, ts_synced=ts_synced, data=data, received_at=received_at or utcnow())
    return bool(insert_events_once(db, [row]))


def prune_events(db: Session, older_than: datetime) -> int:
    """Delete raw events received before `older_than` (retention); returns how many went."""
    result = db.execute(delete(Event).where(Event.received_at < older_than).execution_options(synchronize_session=False))
    return result.rowcount or 0
