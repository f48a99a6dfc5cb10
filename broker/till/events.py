"""The till's live events (broker.core.events says what a live event is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from broker.core.events import LiveEvent


@dataclass(frozen=True)
class TabChanged(LiveEvent):
    """A tab's lines changed (put on, voided, merged, split, closed)."""

    topic: ClassVar[str] = "tab"
    tab: int


@dataclass(frozen=True)
class TabPaid(LiveEvent):
    """A payment (or its reversal) was taken on a tab; `table` None: a walk-in's tab."""

    topic: ClassVar[str] = "tab"
    tab: int
    table: str | None
    action: str = "payment"


@dataclass(frozen=True)
class DayChanged(LiveEvent):
    """A business day was opened or closed (`day`: its ISO date)."""

    topic: ClassVar[str] = "day"
    day: str
    action: str


@dataclass(frozen=True)
class FiscalChanged(LiveEvent):
    """A payment's eKasa registration changed state."""

    topic: ClassVar[str] = "fiscal"
    payment: int
    state: str
