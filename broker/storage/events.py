"""Raw events from the tables: exactly-once insert and retention (refused messages: broker.storage.rejects)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple, cast

from sqlalchemy import CursorResult, delete
from sqlalchemy.orm import Session

from broker.storage.dialect import table_of, upsert_insert
from broker.storage.models import Event
from broker.storage.types import utcnow

_EVENTS = table_of(Event)
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
    name = db.get_bind().dialect.name
    if name in _BULK:
        return _insert_bulk(db, name, rows)
    stmt = upsert_insert(db, _EVENTS).on_conflict_do_nothing(index_elements=_KEY)
    result = db.execute(stmt.returning(_EVENTS.c.table_id, _EVENTS.c.boot, _EVENTS.c.seq), rows)
    return {EventKey(*r) for r in result}


# The ingest hot path. The statement above is right on every backend, but SQLAlchemy runs each
# row's eight values through its type processors one by one (~15 us an event, as much as the
# rest of the hub's work on it), so for the two backends we ship the same statement is written
# out here, one INSERT ... VALUES (...), (...) ... ON CONFLICT DO NOTHING RETURNING per chunk,
# with the values converted as the column types would (UTCDateTime: UTC, naive on SQLite in
# SQLAlchemy's text format; JSONDoc: JSON text, jsonb on PostgreSQL; Boolean: 0/1 on SQLite).
# On PostgreSQL the rows go as eight arrays into one short statement (INSERT ... SELECT FROM
# unnest(...)): psycopg parses a query's placeholders on every execute when the query is too
# long for its cache, and 8,000 of them cost 110 ms a batch of 1,000, more than the rest of the
# batch's work (bench/hub_ingest.py found it).
# tests/broker/storage/test_db.py checks it stores what the generic statement stores.
_COLUMNS = ("table_id", "boot", "seq", "type", "node_ts", "ts_synced", "received_at", "data")
_CHUNK = 1000  # 8,000 parameters a statement: under SQLite's 32,766
_BULK = {
    "sqlite": ("(?,?,?,?,?,?,?,?)", "?"),
    "postgresql": ("", ""),
}
_PG_ARRAYS = "%b::varchar[], %b::varchar[], %b::bigint[], %b::varchar[], %b::timestamptz[], %b::boolean[], %b::timestamptz[], %b::jsonb[]"


@lru_cache(maxsize=64)
def _bulk_sql(dialect: str, rows: int) -> str:
    values = ",".join([_BULK[dialect][0]] * rows)
    return (
        f"INSERT INTO {_EVENTS.name} ({', '.join(_COLUMNS)}) VALUES {values} "
        f"ON CONFLICT ({', '.join(_KEY)}) DO NOTHING RETURNING {', '.join(_KEY)}"
    )


def _sqlite_time(at: datetime) -> str:
    # What SQLAlchemy's SQLite DATETIME stores (its default storage format), from UTCDateTime's UTC value.
    text = _utc(at).replace(tzinfo=None).isoformat(" ")
    return text if len(text) > 19 else text + ".000000"  # isoformat leaves out a zero microsecond; the format does not


def _utc(at: datetime) -> datetime:
    if not isinstance(at, datetime):
        raise TypeError(f"expected a datetime, got {type(at).__name__}: {at!r}")
    if at.tzinfo is None or at.utcoffset() is None:
        raise ValueError(f"naive datetime {at.isoformat()} given to the store: pass an aware one (UTC or Europe/Bratislava)")
    return at if at.tzinfo is UTC else at.astimezone(UTC)


def _insert_unnest(db: Session, rows: list[dict[str, Any]]) -> set[EventKey]:
    """PostgreSQL: one statement of eight array parameters, whatever the number of rows."""
    received_default = utcnow()
    columns: list[list[Any]] = [[] for _ in _COLUMNS]
    table_id, boot, seq, type_, node_ts, synced, received, data = columns
    for r in rows:
        table_id.append(r["table_id"])
        boot.append(r["boot"])
        seq.append(r["seq"])
        type_.append(r["type"])
        node_ts.append(_utc(r["node_ts"]))
        synced.append(bool(r["ts_synced"]))
        received.append(_utc(r.get("received_at") or received_default))
        data.append(json.dumps(r["data"]))
    sql = (
        f"INSERT INTO {_EVENTS.name} ({', '.join(_COLUMNS)}) SELECT * FROM unnest({_PG_ARRAYS}) "
        f"ON CONFLICT ({', '.join(_KEY)}) DO NOTHING RETURNING {', '.join(_KEY)}"
    )
    # Binary parameters: psycopg's text format escapes every string of an array through a regex.
    raw = db.connection().connection.driver_connection
    assert raw is not None  # an open transaction's connection
    with raw.cursor() as cur:  # the session's own connection, so the same transaction
        cur.execute(sql, tuple(columns), binary=True)
        return {EventKey(*r) for r in cur.fetchall()}


def _insert_bulk(db: Session, dialect: str, rows: list[dict[str, Any]]) -> set[EventKey]:
    if dialect == "postgresql":
        return _insert_unnest(db, rows)
    sqlite = dialect == "sqlite"
    when = _sqlite_time if sqlite else _utc
    default_received = when(utcnow())
    times: dict[datetime, Any] = {}  # received_at is one value for a whole batch: convert it once
    params: list[Any] = []
    for r in rows:
        received: datetime | None = r.get("received_at")
        received_v: Any
        if received is None:
            received_v = default_received
        else:
            received_v = times.get(received)
            if received_v is None:
                received_v = times[received] = when(received)
        synced = r["ts_synced"]
        params += (
            r["table_id"],
            r["boot"],
            r["seq"],
            r["type"],
            when(r["node_ts"]),
            (1 if synced else 0) if sqlite else bool(synced),
            received_v,
            json.dumps(r["data"]),
        )
    conn = db.connection()
    new: set[EventKey] = set()
    width = len(_COLUMNS)
    for start in range(0, len(rows), _CHUNK):
        chunk = params[start * width : (start + _CHUNK) * width]
        result = conn.exec_driver_sql(_bulk_sql(dialect, len(chunk) // width), tuple(chunk))
        new.update(EventKey(*r) for r in result)
    return new


def insert_event_once(
    db: Session,
    *,
    table_id: str,
    boot: str,
    seq: int,
    type: str,
    node_ts: datetime,
    ts_synced: bool,
    data: dict[str, Any],
    received_at: datetime | None = None,
) -> bool:
    """True if this (table_id, boot, seq) was new and is now stored; False for a duplicate."""
    row = dict(
        table_id=table_id,
        boot=boot,
        seq=seq,
        type=type,
        node_ts=node_ts,
        ts_synced=ts_synced,
        data=data,
        received_at=received_at or utcnow(),
    )
    return bool(insert_events_once(db, [row]))


def prune_events(db: Session, older_than: datetime) -> int:
    """Delete raw events received before `older_than` (retention); returns how many went."""
    result = cast(
        CursorResult[Any], db.execute(delete(Event).where(Event.received_at < older_than).execution_options(synchronize_session=False))
    )
    return result.rowcount or 0  # a DELETE's result is a CursorResult, which has rowcount
