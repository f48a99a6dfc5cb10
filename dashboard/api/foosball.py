"""Foosball is for members only: who is checked in where, and staff check-ins."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy import select
from sqlalchemy.orm import Session

from broker.db.alerts import close_alert
from broker.db.audit import record_audit
from broker.db.models import FoosballCheckin, Member, User
from broker.ingest_handlers import checkin
from broker.members import fee_paid
from broker.service import CentralService
from broker.tariffs import calendar_year
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
    if table not in _foosball_tables(service):
        raise HTTPException(404, f"no foosball table {table[:40]!r} (foosball tables: {', '.join(_foosball_tables(service))})")
    now = service.clock()
    # The service lock keeps this from interleaving with a goal being applied on the same table.
    with service.lock, service.store.session() as db:
        member = db.get(Member, body.member_id)
        if member is None:
            raise HTTPException(404, f"no member {body.member_id}: search by name to find the right id")
        year = calendar_year(now, service.venue)
        if not member.active:
            raise HTTPException(409, f"{member.name}'s membership is not active: foosball is for members only")
        if not fee_paid(member, year):
            raise HTTPException(409, f"{member.name} has not paid the {year} fee: record the payment first")
        row = checkin(db, table, member.id, now, "staff")
        close_alert(db, f"foosball_no_member:{table}", now)
        record_audit(db, user.username, "foosball.checkin", f"table:{table}", {"member_id": member.id, "checkin_id": row.id}, at=now)
        out = views.checkin(row, member.name, (row.last_goal_at or row.checked_in_at) + _window(service))
    service.notify("checkin", {"table": table, "member": member.name})
    return out
