"""The hall's live events: what the hub tells its listeners after a commit (the dashboard's live
views, the notifications, the demo, tests).

One frozen dataclass per kind of event, in the part that raises it (broker.floor.events,
broker.till.events, broker.bookings.events, broker.tournaments.events; here those several parts
raise). `topic` names the kind on the listeners' interface and the pages' stream
(dashboard.web.live); the fields are its payload, a field that defaults to None left out while
it is None (a listener reads `data.get(...)`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class LiveEvent:
    """The base of the live events; a subclass sets `topic` and declares its payload as fields."""

    topic: ClassVar[str]

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.default is None:
                continue
            out[f.name] = value
        return out


@dataclass(frozen=True)
class SessionChanged(LiveEvent):
    """A table's card changed: its game (started, paused, moved: `from_table`), its light or service,
    its tab, a payment, a tournament's call, a booking's hold."""

    topic: ClassVar[str] = "session"
    table: str
    action: str
    session_id: int | None = None
    tab: int | None = None
    from_table: str | None = None


@dataclass(frozen=True)
class AlertOpened(LiveEvent):
    """An alert opened (broker.core.alert_book)."""

    topic: ClassVar[str] = "alert"
    id: int
    kind: str
    table: str | None
    severity: str
    message: str
    message_en: str


@dataclass(frozen=True)
class AlertAcked(LiveEvent):
    """An alert acknowledged (or closed) by staff."""

    topic: ClassVar[str] = "alert_ack"
    id: int
