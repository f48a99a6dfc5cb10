"""The floor's live events (broker.core.events says what a live event is)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from broker.core.events import LiveEvent


@dataclass(frozen=True)
class SensorEventApplied(LiveEvent):
    """An event of a table's node was applied (a pocket drop, a button, activity, a fault...)."""

    topic: ClassVar[str] = "event"
    table: str
    type: str
    data: dict[str, Any]
    received_at: datetime
    ts: Any
    ts_synced: Any


@dataclass(frozen=True)
class CheckinChanged(LiveEvent):
    """A member checked in at a foosball table (by card or by staff) or out (`action` "checkout")."""

    topic: ClassVar[str] = "checkin"
    table: str
    member: str
    action: str | None = None


@dataclass(frozen=True)
class NodeChanged(LiveEvent):
    """A table's node came online or went offline."""

    topic: ClassVar[str] = "node"
    table: str
    online: bool


@dataclass(frozen=True)
class LightChanged(LiveEvent):
    """A table's node reported its light."""

    topic: ClassVar[str] = "light"
    table: str
    on: Any
    blink: Any
    cause: Any


@dataclass(frozen=True)
class TableWarning(LiveEvent):
    """A table's prepaid time runs out (`left_s`) or the hall closes soon (kind "closing")."""

    topic: ClassVar[str] = "warning"
    table: str
    kind: str
    left_s: int | None = None
