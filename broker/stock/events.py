"""The stock's live events (broker.core.events says what a live event is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from broker.core.events import LiveEvent


@dataclass(frozen=True)
class StockChanged(LiveEvent):
    """An item's level changed (a sale, a void, a delivery, a write-off, a stocktake) or its settings."""

    topic: ClassVar[str] = "stock"
    item: int
