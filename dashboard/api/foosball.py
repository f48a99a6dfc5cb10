"""Foosball is for members only: who is checked in where, and staff check-ins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from broker.accounts.staff import Staff
from broker.hall.read_models import HallReads
from broker.hall.table_service import CheckInFoosball, CheckOutFoosball
from dashboard.api import responses as R
from dashboard.api import views
from dashboard.api.auth import can
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import CheckinIn

router = APIRouter(prefix="/foosball", tags=["foosball"])


def checkins_by_table(reads: HallReads, tables: list[str] | None = None) -> list[dict[str, Any]]:
    """Per foosball table, the check-ins that count now (the JSON of GET /api/foosball)."""
    return [{"table": t.table, "name": t.name, "checkins": [views.checkin(c) for c in t.checkins]} for t in reads.active_checkins(tables)]


@router.get("", response_model=list[R.FoosballTableOut], summary="Checked-in members per foosball table, with their goals")
def list_checkins(reads: Reads, user: Annotated[Staff, Depends(can("foosball.checkin"))]) -> list[dict[str, Any]]:
    return checkins_by_table(reads)


@router.post(
    "/{table}/checkin", response_model=R.CheckinOut, status_code=201, summary="Check a paid-up member in at a foosball table (staff)"
)
def staff_checkin(table: str, body: CheckinIn, hub: Hub, user: Annotated[Staff, Depends(can("foosball.checkin"))]) -> dict[str, Any]:
    # The hub checks, records, audits and settles the alert: the one writer of alerts.
    return views.checkin(hub.execute(CheckInFoosball(table=table, member_id=body.member_id, actor=user.username)))


@router.post("/{table}/checkout", response_model=R.CheckoutOut, summary="End a member's check-in at a foosball table (staff)")
def staff_checkout(table: str, body: CheckinIn, hub: Hub, user: Annotated[Staff, Depends(can("foosball.checkin"))]) -> dict[str, Any]:
    name = hub.execute(CheckOutFoosball(table=table, member_id=body.member_id, actor=user.username))
    return {"table": table, "member_id": body.member_id, "member": name}
