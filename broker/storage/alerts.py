"""Alerts: one open alert per cause, touched (count, last seen) while the cause persists."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from broker.storage.dialect import table_of, upsert_insert
from broker.storage.errors import StoreError
from broker.storage.models import Alert
from broker.storage.types import utcnow

SEVERITIES = ("info", "warning", "critical")


def open_or_touch_alert(
    db: Session,
    *,
    cause_key: str,
    kind: str,
    message: str,
    message_en: str,
    table_id: str | None = None,
    severity: str = "warning",
    at: datetime | None = None,
    times: int = 1,
) -> tuple[Alert, bool]:
    """touch_alert, and the alert as a row object: (alert, opened_now)."""
    alert_id, opened = touch_alert(
        db,
        cause_key=cause_key,
        kind=kind,
        message=message,
        message_en=message_en,
        table_id=table_id,
        severity=severity,
        at=at,
        times=times,
    )
    alert = db.get(Alert, alert_id, populate_existing=True)
    assert alert is not None
    return alert, opened


def touch_alert(
    db: Session,
    *,
    cause_key: str,
    kind: str,
    message: str,
    message_en: str,
    table_id: str | None = None,
    severity: str = "warning",
    at: datetime | None = None,
    times: int = 1,
) -> tuple[int, bool]:
    """Open an alert for `cause_key`, or touch the open one; returns (its id, opened_now).

    `times`: how many occurrences this is (a batch of ball drops on one table touches it once).

    Touching bumps count and last_seen_at and takes the newest message, and leaves an
    acknowledgement standing: staff who saw it need not see it again until it is closed.
    The upsert runs against the partial unique index, so two writers racing on one cause end up
    with one alert, counted twice. One statement, no row object loaded: the hub's ingest touches
    an alert per table and batch of ball drops on tables without a game, and loading the row
    after the upsert was 40 % of that (bench/ingest_apply.py --no-sessions).
    """
    if times < 1:
        raise ValueError(f"an alert occurs at least once, not {times} times")
    if severity not in SEVERITIES:
        raise ValueError(f"severity {severity!r} is not one of {', '.join(SEVERITIES)}")
    at = at or utcnow()
    table = table_of(Alert)
    stmt = (
        upsert_insert(db, table)
        .values(
            kind=kind,
            table_id=table_id,
            cause_key=cause_key,
            message=message,
            message_en=message_en,
            severity=severity,
            opened_at=at,
            last_seen_at=at,
            count=times,
        )
        .on_conflict_do_update(
            index_elements=["cause_key"],
            index_where=table.c.closed_at.is_(None),
            set_={"count": table.c.count + times, "last_seen_at": at, "message": message, "message_en": message_en, "severity": severity},
        )
    )
    alert_id, count = db.execute(stmt.returning(table.c.id, table.c.count)).one()
    return alert_id, count == times  # an open one had at least 1 before


def _get(db: Session, alert_id: int) -> Alert:
    alert = db.get(Alert, alert_id)
    if alert is None:
        raise StoreError(f"no alert {alert_id}: reload the alert list")
    return alert


def ack_alert(db: Session, alert_id: int, by: str, *, close: bool = False, at: datetime | None = None) -> Alert:
    """Staff saw the alert. The first acknowledgement stands; close=True also closes it."""
    at = at or utcnow()
    alert = _get(db, alert_id)
    if alert.acked_at is None:
        alert.acked_at, alert.acked_by = at, by
    if close and alert.closed_at is None:
        alert.closed_at = at
    db.flush()
    return alert


def close_alert(db: Session, cause_key: str, at: datetime | None = None) -> Alert | None:
    """The cause is gone: close its open alert (if any); the next occurrence opens a new one."""
    alert = db.scalars(select(Alert).where(Alert.cause_key == cause_key, Alert.closed_at.is_(None))).first()
    if alert is not None:
        alert.closed_at = at or utcnow()
        db.flush()
    return alert


def open_alerts(db: Session, table_id: str | None = None) -> list[Alert]:
    """Open alerts, newest first; only one table's if table_id is given."""
    q = select(Alert).where(Alert.closed_at.is_(None)).order_by(Alert.opened_at.desc(), Alert.id.desc())
    if table_id is not None:
        q = q.where(Alert.table_id == table_id)
    return list(db.scalars(q))
