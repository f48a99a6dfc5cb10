"""Health for monitoring: no login, nothing secret."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import exc, text

from dashboard.api.deps import Service

router = APIRouter(tags=["health"])
log = logging.getLogger("lavos.api")


class HealthOut(BaseModel):
    ok: bool
    mqtt: bool | None  # None: this process has no MQTT link
    db: bool
    backend: str


@router.get("/health", summary="ok, MQTT connected, database reachable (no login); 503 when not ok",
            response_model=HealthOut, responses={503: {"model": HealthOut, "description": "Not healthy: the body says which part"}})
def health(service: Service) -> JSONResponse:
    try:
        with service.store.reader() as db:
            db.execute(text("SELECT 1"))
        db_ok = True
    except exc.SQLAlchemyError as e:
        log.warning("health: database check failed: %s", e)
        db_ok = False
    mqtt = service.link.stats.connected if service.link else None
    ok = db_ok and mqtt is not False
    return JSONResponse({"ok": ok, "mqtt": mqtt, "db": db_ok, "backend": service.store.backend}, status_code=200 if ok else 503)
