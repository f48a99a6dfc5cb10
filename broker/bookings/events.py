"""The bookings' live events (broker.core.events says what a live event is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from broker.core.events import LiveEvent


@dataclass(frozen=True)
class BookingChanged(LiveEvent):
    """A booking (`booking`) or a block of tables (`block`) was made, changed or cancelled."""

    topic: ClassVar[str] = "booking"
    booking: int | None = None
    block: int | None = None


@dataclass(frozen=True)
class WaitingListChanged(LiveEvent):
    """The waiting list changed (a party added, offered a table, seated, gone)."""

    topic: ClassVar[str] = "waiting"
