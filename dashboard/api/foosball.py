"""Foosball is for members only: who is checked in where, and staff check-ins."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from broker.accounts.staff import Staff
from broker.floor.reads import TableCheckins
from broker.floor.table_service import CheckInFoosball, CheckOutFoosball
from broker.people.member_views import CheckinView
from dashboard.api import responses as R
from dashboard.api.auth import can
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import CheckinIn

router = APIRouter(prefix="/foosball", tags=["foosball"])


@router.get("", response_model=list[TableCheckins], summary="Checked-in members per foosball table, with their goals")
def list_checkins(reads: Reads, user: Annotated[Staff, Depends(can("foosball.checkin"))]) -> list[TableCheckins]:
    return reads.floor.active_checkins()


@router.post(
    "/{table}/checkin", response_model=CheckinView, status_code=201, summary="Check a paid-up member in at a foosball table (staff)"
)
def staff_checkin(table: str, body: CheckinIn, hub: Hub, user: Annotated[Staff, Depends(can("foosball.checkin"))]) -> CheckinView:
    # The hub checks, records, audits and settles the alert: the one writer of alerts.
    return hub.execute(body.to(CheckInFoosball, table=table, actor=user.username))


@router.post("/{table}/checkout", response_model=R.CheckoutOut, summary="End a member's check-in at a foosball table (staff)")
def staff_checkout(table: str, body: CheckinIn, hub: Hub, user: Annotated[Staff, Depends(can("foosball.checkin"))]) -> R.CheckoutOut:
    name = hub.execute(body.to(CheckOutFoosball, table=table, actor=user.username))
    return R.CheckoutOut(table=table, member_id=body.member_id, member=name)
