"""The open games of the hall: owned by the hub's writer, read by everyone as snapshots.

Copy-on-write: the writer builds a new dict for every change and swaps it in with one
assignment, so a reader on another thread (a page, the API, the floor view) holding `view()`
sees one consistent picture that never changes under it, with no lock. A hall has tens of
tables, so the copy costs microseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from broker.domain.floor import game_ops


@dataclass(frozen=True)
class OpenGame:
    id: int
    state: game_ops.GameState


class OpenGames:
    def __init__(self) -> None:
        self._by_table: Mapping[str, OpenGame] = MappingProxyType({})

    # -- readers (any thread) ---------------------------------------------------------

    def view(self) -> Mapping[str, OpenGame]:
        """The current snapshot: table -> open game (read-only, never changed afterwards)."""
        return self._by_table

    def get(self, table: str) -> OpenGame | None:
        return self._by_table.get(table)

    def by_id(self, game_id: int) -> tuple[str, OpenGame] | None:
        for table, g in self._by_table.items():
            if g.id == game_id:
                return table, g
        return None

    # -- the writer only ----------------------------------------------------------------

    def _swap(self, new: dict[str, OpenGame]) -> None:
        self._by_table = MappingProxyType(new)

    def load(self, games_by_table: dict[str, OpenGame]) -> None:
        self._swap(dict(games_by_table))

    def put(self, table: str, game: OpenGame) -> None:
        new = dict(self._by_table)
        new[table] = game
        self._swap(new)

    def remove(self, table: str) -> None:
        new = dict(self._by_table)
        new.pop(table, None)
        self._swap(new)

    def move(self, old_table: str, new_table: str, game: OpenGame) -> None:
        new = dict(self._by_table)
        new.pop(old_table, None)
        new[new_table] = game
        self._swap(new)
