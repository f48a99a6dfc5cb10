"""The audit trail: game ops (append-only, per-game seq) and the general audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from broker.storage.errors import StoreError
from broker.storage.models import AuditEntry, Game, GameOp
from broker.storage.types import utcnow


def append_game_op(
    db: Session,
    game_id: int,
    kind: str,
    data: dict[str, Any],
    actor: str,
    reason: str | None = None,
    at: datetime | None = None,
) -> GameOp:
    """Append the next op to a game's log; seq is 1, 2, 3 … per game.

    The game's row is locked first (FOR UPDATE on PostgreSQL; SQLite's write transaction already
    serialises), so two processes appending to one game cannot both take the same seq.
    """
    locked = db.execute(select(Game.id).where(Game.id == game_id).with_for_update()).first()
    if locked is None:
        raise StoreError(f"no game {game_id}: it may have been removed; reload the tables")
    last = db.scalar(select(func.max(GameOp.seq)).where(GameOp.session_id == game_id)) or 0
    op = GameOp(session_id=game_id, seq=last + 1, at=at or utcnow(), kind=kind, data=data, actor=actor, reason=reason)
    db.add(op)
    db.flush()
    # The game's row, if this session holds it, reads its log again when next asked: its loaded
    # `ops` knew nothing of this one, and a bill replayed from it in this transaction (the tab's
    # check before the commit) would leave the op out.
    held = db.identity_map.get(db.identity_key(Game, game_id))
    if held is not None:
        db.expire(held, ["ops"])
    return op


def record_audit(
    db: Session,
    actor: str,
    action: str,
    target: str,
    detail: dict[str, Any] | None = None,
    reason: str | None = None,
    at: datetime | None = None,
) -> AuditEntry:
    """Append who did what to which thing (e.g. "member:12"), with details and why."""
    entry = AuditEntry(actor=actor, action=action, target=target, detail=detail or {}, reason=reason, at=at or utcnow())
    db.add(entry)
    db.flush()
    return entry
