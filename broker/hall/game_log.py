"""A session's op log as stored (rows) and as the pure session logic reads it (sessions.Op)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from broker.domain import sessions
from broker.domain.venue import Venue


def op_of(row: Any) -> sessions.Op:
    """One stored op row (broker.storage.models.GameOp) as the session logic's Op."""
    return sessions.Op(row.kind, row.at, row.data, row.actor, row.reason)


def ops_of(rows: Iterable[Any]) -> list[sessions.Op]:
    return [op_of(r) for r in rows]


def replay_row(session_row: Any, venue: Venue) -> sessions.GameState:
    """The state of a stored session (broker.storage.models.Game), from its op log alone."""
    return sessions.replay(ops_of(session_row.ops), venue)
