"""The tournaments' live events (broker.core.events says what a live event is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from broker.core.events import LiveEvent


@dataclass(frozen=True)
class TournamentCalled(LiveEvent):
    """A match was called to a table, or its call changed (`table` None: it has none now)."""

    topic: ClassVar[str] = "tournament"
    tournament: int
    table: str | None


@dataclass(frozen=True)
class TournamentChanged(LiveEvent):
    """A tournament changed: its setup, entrants, draw, or a match's result (`match`)."""

    topic: ClassVar[str] = "tournament"
    tournament: int
    match: str | None = None
