"""Health for monitoring: no login, nothing secret."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from dashboard.api.deps import Reads
from devices.version import software_version

router = APIRouter(tags=["health"])
log = logging.getLogger("lavos.api")


class HealthOut(BaseModel):
    ok: bool
    mqtt: bool | None  # None: this process has no MQTT link
    db: bool
    backend: str
    version: str  # the software the hub runs (devices.version); a fleet update brings every node to it


@router.get(
    "/health",
    summary="ok, MQTT connected, database reachable, the hub's software version (no login); 503 when not ok",
    response_model=HealthOut,
    responses={503: {"model": HealthOut, "description": "Not healthy: the body says which part"}},
)
def health(reads: Reads) -> JSONResponse:
    db_ok = reads.database_ok()  # logs why not
    mqtt = reads.mqtt_connected
    ok = db_ok and mqtt is not False
    return JSONResponse(
        {"ok": ok, "mqtt": mqtt, "db": db_ok, "backend": reads.backend, "version": software_version()}, status_code=200 if ok else 503
    )
