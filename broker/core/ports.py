"""What the hub's parts need of each other, as small interfaces instead of the whole hub.

The ingest rules and the watchdog depend on `HallState` (the owned state and the venue) and on
`HubOps` (the few hub operations they trigger, `execute` a command among them); the hub builds
both and satisfies `HubOps` itself. So nothing imports broker.hall.hub, and there is no import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from broker.core.alert_book import AlertBook
from broker.core.commands import Command
from broker.core.listeners import Listeners
from broker.core.open_games import OpenGame, OpenGames
from broker.core.table_runtime import RuntimeBook
from broker.domain.tariffs import calendar_year
from broker.domain.venue import TableSpec, Venue
from broker.storage.engine import Store

R = TypeVar("R")


@dataclass(frozen=True)
class HallSnapshot:
    """Open games and drop counts as one consistent picture (for readers, any thread)."""

    open: Mapping[str, OpenGame]
    drops: dict[str, int]
    last_drop_at: dict[str, datetime | None]


@dataclass(frozen=True)
class HallState:
    """The hall's owned state and what it is read against; built once by the hub."""

    venue: Venue
    tables: dict[str, TableSpec]
    store: Store
    clock: Callable[[], datetime]
    metrics: Any
    games: OpenGames
    runtime: RuntimeBook
    alerts: AlertBook
    listeners: Listeners

    def snapshot(self) -> HallSnapshot:
        """Open games and drop counts as one consistent picture."""
        rt = self.runtime.view()
        return HallSnapshot(
            open=self.games.view(),
            drops={t: v.drops for t, v in rt.items()},
            last_drop_at={t: v.last_drop_at for t, v in rt.items()},
        )

    def fee_year(self) -> int:
        """The venue's calendar year now, by the hub's clock: the year whose fee makes a card valid."""
        return calendar_year(self.clock(), self.venue)


class HubOps(Protocol):
    """Hub operations the ingest rules and the watchdog trigger (all run on the writer)."""

    def desired_light(self, table: str) -> bool | None: ...

    def send_light(self, table: str, on: bool, blink_s: int | None = None) -> None: ...

    def resend_table(self, table: str) -> None: ...

    def is_out_of_service(self, table: str) -> bool: ...

    def lit_by_hand(self, table: str) -> bool: ...

    def execute(self, cmd: Command[R]) -> R: ...
