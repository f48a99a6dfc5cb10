"""Alerts for the bar: list them, acknowledge them (the service records who and when)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query
from sqlalchemy import select

from broker.db.alerts import open_alerts
from broker.db.models import Alert, User
from dashboard.api import views
from dashboard.api.auth import can, demand
from dashboard.api.deps import IdPath, Service
from dashboard.api.schemas import AckIn, text

TableText = text(32)

router = APIRouter(prefix="/alerts", tags=["alerts"])


@router.get("", summary="Open alerts (newest first), or the latest ones including closed with open=false (manager)")
def list_alerts(
    service: Service, user: Annotated[User, Depends(can("alerts.open"))],
    open: bool = Query(True, description="true: only open alerts"),
    table: Annotated[TableText | None, Query(description="Only this table's")] = None,  # type: ignore[valid-type]
    limit: int = Query(200, ge=1, le=1000),
) -> list[dict[str, Any]]:
    if not open:
        demand(user, "alerts.history")
    with service.store.reader() as db:
        if open:
            rows = open_alerts(db, table)[:limit]
        else:
            q = select(Alert).order_by(Alert.opened_at.desc(), Alert.id.desc()).limit(limit)
            rows = list(db.scalars(q if table is None else q.where(Alert.table_id == table)))
        return [views.alert(a) for a in rows]


@router.post("/{alert_id}/ack", summary="Acknowledge an alert; close=true also closes it")
def ack(alert_id: IdPath, service: Service, user: Annotated[User, Depends(can("alerts.open"))], body: AckIn | None = None) -> dict[str, Any]:
    with service.store.reader() as db:
        if db.get(Alert, alert_id) is None:
            raise HTTPException(404, f"no alert {alert_id}: reload the alert list")
    service.ack(alert_id, actor=user.username, close=bool(body and body.close))
    with service.store.reader() as db:
        return views.alert(db.get(Alert, alert_id))
