"""The outbox's reads (`reads.outbox` on the dashboard): the records the centre refused, set aside."""

from __future__ import annotations

from broker.core.ports import HallState
from broker.core.store_errors import store_call
from broker.outbox.records import RefusedRecord, refused_records


class OutboxReads:
    """What the outbox holds, as views; none of it writes."""

    def __init__(self, hall: HallState) -> None:
        self._store = hall.store

    @store_call
    def refused_records(self) -> list[RefusedRecord]:
        """The records for the centre set aside because it refused them (or would have), newest first."""
        with self._store.reader() as db:
            return refused_records(db)
