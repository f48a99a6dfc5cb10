"""A game's op log as stored (rows) and as the pure game rules read it (game_ops.Op)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from broker.domain.floor import game_ops
from broker.domain.venue import Venue


def op_of(row: Any) -> game_ops.Op:
    """One stored op row (broker.storage.models.GameOp) as the game rules' Op."""
    return game_ops.Op(row.kind, row.at, row.data, row.actor, row.reason)


def ops_of(rows: Iterable[Any]) -> list[game_ops.Op]:
    return [op_of(r) for r in rows]


def replay_row(session_row: Any, venue: Venue) -> game_ops.GameState:
    """The state of a stored game (broker.storage.models.Game), from its op log alone."""
    return game_ops.replay(ops_of(session_row.ops), venue)
