"""Foosball is for members only: who is checked in where, and staff check-ins."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from sqlalchemy import select
from sqlalchemy.orm import Session

from broker.db.models import FoosballCheckin, Member, User
from broker.service import CentralService
from dashboard.api import views
from dashboard.api.auth import can
from dashboard.api.deps import Service
from dashboard.api.schemas import CheckinIn
from devices.kinds import Kind

router = APIRouter(prefix="/foosball", tags=["foosball"])


def _window(service: CentralService) -> timedelta:
    return timedelta(minutes=service.venue.billing.foosball_checkin_min)


def _active(db: Session, service: CentralService, table: str, now: datetime) -> list[dict[str, Any]]:
    rows = db.execute(select(FoosballCheckin, Member.name).join(Member, Member.id == FoosballCheckin.member_id).where(
        FoosballCheckin.table_id == table, FoosballCheckin.ended_at.is_(None)).order_by(FoosballCheckin.checked_in_at))
    out = []
    for c, name in rows:
        until = (c.last_goal_at or c.checked_in_at) + _window(service)
        if until > now:
            out.append(views.checkin(c, name, until))
    return out


def _foosball_tables(service: CentralService) -> list[str]:
    return [t.id for t in service.venue.tables if t.kind is Kind.FOOSBALL]


@router.get("", summary="Checked-in members per foosball table, with their goals")
def list_checkins(service: Service, user: Annotated[User, Depends(can("foosball.checkin"))]) -> list[dict[str, Any]]:
    now = service.clock()
    with service.store.reader() as db:
        return [{"table": t, "name": service.tables[t].name, "checkins": _active(db, service, t, now)}
                for t in _foosball_tables(service)]


@router.post("/{table}/checkin", status_code=201, summary="Check a paid-up member in at a foosball table (staff)")
def staff_checkin(table: str, body: CheckinIn, service: Service, user: Annotated[User, Depends(can("foosball.checkin"))]) -> dict[str, Any]:
    # The service checks, records, audits and settles the alert: the one writer of alerts.
    row, name = service.foosball_checkin(table, body.member_id, actor=user.username)
    return views.checkin(row, name, (row.last_goal_at or row.checked_in_at) + _window(service))
