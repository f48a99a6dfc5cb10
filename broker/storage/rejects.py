"""Refused node messages in the database: counts per (table, reason), the last samples per table."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from broker.domain.floor.reject_tally import SAMPLES_PER_TABLE, NodeRejects, ReasonCount, RejectTally, Sample
from broker.storage.dialect import table_of, upsert_insert
from broker.storage.models import NodeRejectCount, NodeRejectSample

_COUNTS = table_of(NodeRejectCount)
_SAMPLES = table_of(NodeRejectSample)


def record_rejects(db: Session, tally: RejectTally, at: datetime) -> None:
    """Add one batch's refusals: a statement per (table, reason) and per table, not per message."""
    for (table, reason), n in tally.counts.items():
        stmt = upsert_insert(db, _COUNTS).values(table_id=table, reason=reason, count=n, first_at=at, last_at=at)
        db.execute(stmt.on_conflict_do_update(index_elements=["table_id", "reason"], set_={"count": _COUNTS.c.count + n, "last_at": at}))
    rows = [dict(table_id=s.table, at=s.at, topic=s.topic, reason=s.reason, error=s.error, excerpt=s.excerpt) for s in tally.all_samples()]
    if rows:
        db.execute(_SAMPLES.insert(), rows)
    for table in tally.samples:
        newest = select(_SAMPLES.c.id).where(_SAMPLES.c.table_id == table).order_by(_SAMPLES.c.id.desc()).limit(SAMPLES_PER_TABLE)
        db.execute(delete(_SAMPLES).where(_SAMPLES.c.table_id == table, _SAMPLES.c.id.not_in(newest.scalar_subquery())))


def node_rejects(db: Session) -> dict[str, NodeRejects]:
    """Every table's (and the UNKNOWN bucket's) refusals so far; a table with none is absent."""
    out: dict[str, NodeRejects] = {}
    for count in db.scalars(select(NodeRejectCount).order_by(NodeRejectCount.table_id, NodeRejectCount.reason)):  # reasons in order
        out.setdefault(count.table_id, NodeRejects()).by_reason[count.reason] = ReasonCount(count.count, count.first_at, count.last_at)
    for s in db.scalars(select(NodeRejectSample).order_by(NodeRejectSample.id.desc())):
        out.setdefault(s.table_id, NodeRejects()).samples.append(Sample(s.table_id, s.at, s.topic, s.reason, s.error, s.excerpt))
    return out
