"""Per-table counters and once-only flags the hub keeps in memory (drops, warnings given).

Owned by the writer: only it calls the mutating methods (from ingest batches, staff commands
and watchdog ticks, which all run on the writer thread). Readers on other threads get a frozen
snapshot, published after each batch or command (`publish`), never the live counters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any


@dataclass
class TableRuntime:
    """The live counters of one table (the writer's own copy)."""

    last_drop_at: datetime | None = None
    drops: int = 0  # since the current game started
    # The warnings given (kept on the game's row too: see broker.floor.timers.Watchdog._warned)
    prepaid_warned_for: datetime | None = None  # the prepaid end warned of
    closing_warned_for: datetime | None = None  # the closing time warned of
    closing_alerted_for: datetime | None = None
    prepaid_alerted_for: datetime | None = None  # the prepaid end whose run-out was alerted
    idle_alerted_for: datetime | None = None


@dataclass(frozen=True)
class RuntimeView:
    """What readers see of a table's counters: a copy as of the last publish."""

    last_drop_at: datetime | None
    drops: int


class RuntimeBook:
    def __init__(self, tables: Iterable[str]) -> None:
        self._live: dict[str, TableRuntime] = {t: TableRuntime() for t in tables}
        self._view: Mapping[str, RuntimeView] = MappingProxyType({})
        self.publish()

    # -- the writer only ----------------------------------------------------------------

    def of(self, table: str) -> TableRuntime:
        """The live counters of `table`, to read or change on the writer thread."""
        return self._live[table]

    def reset(self, table: str, **initial: Any) -> None:
        """A new game on `table`: counting starts again."""
        self._live[table] = replace(TableRuntime(), **initial)

    def count_drop(self, table: str, at: datetime) -> None:
        rt = self._live[table]
        rt.last_drop_at = at
        rt.drops += 1

    def publish(self) -> None:
        """Swap in a fresh snapshot for readers (one assignment: atomic for them)."""
        self._view = MappingProxyType({t: RuntimeView(rt.last_drop_at, rt.drops) for t, rt in self._live.items()})

    # -- readers (any thread) ---------------------------------------------------------

    def view(self) -> Mapping[str, RuntimeView]:
        return self._view
