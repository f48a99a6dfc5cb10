"""Health for monitoring: no login, nothing secret."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from dashboard.api.deps import Reads

router = APIRouter(tags=["health"])
log = logging.getLogger("lavos.api")


class HealthOut(BaseModel):
    ok: bool
    mqtt: bool | None  # None: this process has no MQTT link
    db: bool
    backend: str


@router.get(
    "/health",
    summary="ok, MQTT connected, database reachable (no login); 503 when not ok",
    response_model=HealthOut,
    responses={503: {"model": HealthOut, "description": "Not healthy: the body says which part"}},
)
def health(reads: Reads) -> JSONResponse:
    db_ok = reads.database_ok()  # logs why not
    mqtt = reads.mqtt_connected
    ok = db_ok and mqtt is not False
    return JSONResponse({"ok": ok, "mqtt": mqtt, "db": db_ok, "backend": reads.backend}, status_code=200 if ok else 503)
