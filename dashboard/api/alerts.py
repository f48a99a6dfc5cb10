"""Alerts for the bar: list them, acknowledge them (the hub records who and when)."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import APIRouter, Depends, HTTPException, Query

from broker.accounts.staff import Staff
from broker.core.alert_book import AckAlert
from broker.floor.reads import AlertView
from dashboard.api.auth import can, demand
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import AckIn, text

TableText = Annotated[str, text(32)]

router = APIRouter(prefix="/alerts", tags=["alerts"])


@router.get(
    "", response_model=list[AlertView], summary="Open alerts (newest first), or the latest ones including closed with open=false (manager)"
)
def list_alerts(
    reads: Reads,
    user: Annotated[Staff, Depends(can("alerts.open"))],
    open: bool = Query(True, description="true: only open alerts"),
    table: Annotated[TableText | None, Query(description="Only this table's")] = None,
    limit: int = Query(200, ge=1, le=1000),
) -> list[AlertView]:
    if not open:
        demand(user, "alerts.history")
    rows = reads.floor.open_alerts(table)[:limit] if open else reads.floor.alert_history(table, limit)
    return rows


@router.post("/{alert_id}/ack", response_model=AlertView, summary="Acknowledge an alert; close=true also closes it")
def ack(alert_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("alerts.open"))], body: AckIn | None = None) -> AlertView:
    if hub.reads.floor.alert(alert_id) is None:
        raise HTTPException(404, f"no alert {alert_id}: reload the alert list")
    hub.execute(AckAlert(alert_id=alert_id, close=bool(body and body.close), actor=user.username))
    return cast(AlertView, hub.reads.floor.alert(alert_id))  # found above: alerts are never deleted
