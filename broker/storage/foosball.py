"""Foosball check-ins as stored: a member checked in at a table by a card tap or by staff."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.storage.models import FoosballCheckin


def checkin(db: Db, table: str, member_id: int, now: datetime, by: str) -> FoosballCheckin:
    """Check a member in at a foosball table (a repeat tap refreshes the existing check-in)."""
    existing = db.scalars(
        select(FoosballCheckin).where(
            FoosballCheckin.table_id == table, FoosballCheckin.member_id == member_id, FoosballCheckin.ended_at.is_(None)
        )
    ).first()
    if existing is not None:
        existing.last_goal_at = now
        return existing
    row = FoosballCheckin(table_id=table, member_id=member_id, checked_in_at=now, goals=0, by=by)
    db.add(row)
    db.flush()
    return row
