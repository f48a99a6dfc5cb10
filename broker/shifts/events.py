"""The shifts' live events (broker.core.events says what a live event is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from broker.core.events import LiveEvent


@dataclass(frozen=True)
class ShiftChanged(LiveEvent):
    """A shift began, ended or was corrected, or the drawer was counted at a shift change (`action`)."""

    topic: ClassVar[str] = "shift"
    staff: str
    action: str
