"""The only code that opens, closes or acknowledges an alert, and the cache of causes that may be open.

`open_causes` lets a ball drop settle "idle" without a query (one costs ~140 us against ~220 us
for the whole event, so it stays): it holds every cause that may be open, possibly more, never
fewer. Opening never trusts it (the upsert decides, so a cause closed anywhere fires again); a
cause leaves it only when the database says nothing is open, so a rolled-back transaction can at
worst cost one extra query later. Loaded from the database on start.

The hub calls these on its writer thread. `raise_alert`/`settle` are also public methods of the
hub that a caller may use inside its own transaction (tests do), so the set has a small lock of
its own, held only around set operations, never across a query or a commit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.events import AlertAcked, AlertOpened
from broker.core.listeners import Listeners
from broker.core.part import Part
from broker.domain.floor import alert_kinds
from broker.storage.after_commit import after_commit
from broker.storage.alerts import ack_alert, close_alert, open_alerts, touch_alert
from broker.storage.engine import Store

log = logging.getLogger("lavos.hub")


@command
class AckAlert(Command[None]):
    """Staff saw the alert; `close` also closes it, so its cause's next occurrence is a new alert.
    NotFound if there is no such alert."""

    alert_id: int
    close: bool = False


class AlertBook(Part):
    def __init__(
        self,
        store: Store,
        listeners: Listeners,
        clock: Callable[[], datetime],
        metrics: Any = None,
        names: Callable[[str], tuple[str, str | None]] | None = None,
    ) -> None:
        self._store = store
        # A table's display names (Slovak, English or None) for the stored text; ids without.
        self._names = names or (lambda table: (table, None))
        self._listeners = listeners
        self._clock = clock
        self._metrics = metrics
        self._causes: set[str] = set()
        self._mutex = threading.Lock()  # around set operations only
        self.notify: Callable[[str, dict[str, Any]], None] | None = None  # push notifications (broker.notify.notifications)

    def open_causes(self) -> frozenset[str]:
        with self._mutex:
            return frozenset(self._causes)

    def reload(self) -> None:
        """From the database: after start, and after a rolled-back transaction."""
        with self._store.reader() as db:
            causes = {a.cause_key for a in open_alerts(db)}
        with self._mutex:
            self._causes = causes

    def settle(self, db: Db, cause_key: str, at: datetime) -> None:
        """The cause of an alert is gone: close it (no query at all when none can be open)."""
        with self._mutex:
            maybe_open = cause_key in self._causes
        closed = close_alert(db, cause_key, at) if maybe_open else None
        if maybe_open and closed is None:
            with self._mutex:
                self._causes.discard(cause_key)
        if closed is not None and self.notify is not None:  # push notifications: after the commit
            pushed, notify = _pushed(closed), self.notify
            after_commit(db).add(lambda: notify("resolved", pushed))

    def raise_alert(self, db: Db, spec: alert_kinds.AlertSpec, times: int = 1) -> None:
        """Open the alert of this cause, or touch the open one (count, last seen); `times`
        occurrences at once. Staff are told (live push, metric) after `db` commits."""
        with self._mutex:
            self._causes.add(spec.cause_key)  # before the write: the cache may hold more, never fewer
        message, message_en = spec.worded(*self._names(spec.table_id)) if spec.table_id else spec.worded()
        alert_id, new = touch_alert(
            db,
            cause_key=spec.cause_key,
            kind=spec.kind,
            message=message,
            message_en=message_en,
            table_id=spec.table_id,
            severity=spec.severity,
            at=self._clock(),
            times=times,
        )
        if not new:
            return
        log.warning("ALERT %s", spec.message_en)
        opened = AlertOpened(alert_id, spec.kind, spec.table_id, spec.severity, message, message_en)

        def tell() -> None:
            if self._metrics:
                self._metrics.alert(spec.kind, self._clock())
            self._listeners.notify(opened)
            if self.notify is not None:
                self.notify("opened", opened.payload() | {"cause": spec.cause_key})

        after_commit(db).add(tell)

    @handles(AckAlert)
    def ack(self, c: AckAlert) -> None:
        with self._store.session() as db:
            alert = ack_alert(db, c.alert_id, c.actor, close=c.close, at=self._clock())
            closed, cause, pushed = alert.closed_at is not None, alert.cause_key, _pushed(alert)
            effects = after_commit(db)
            if closed and self.notify is not None:
                notify = self.notify
                effects.add(lambda: notify("resolved", pushed))
            effects.add(lambda: self._listeners.notify(AlertAcked(id=c.alert_id)))
        if closed:  # committed: nothing of this cause is open
            with self._mutex:
                self._causes.discard(cause)


def _pushed(alert: Any) -> dict[str, Any]:
    """What push notifications need of an alert row (read before the session ends)."""
    return {
        "id": alert.id,
        "kind": alert.kind,
        "cause": alert.cause_key,
        "table": alert.table_id,
        "severity": alert.severity,
        "message": alert.message,
        "message_en": alert.message_en,
    }
