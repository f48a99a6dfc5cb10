"""Foosball is for members only: who is checked in at each table, since when, and their goals."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from broker.db.models import User
from dashboard.api.deps import Service
from dashboard.api.foosball import list_checkins
from dashboard.web.alerts_view import LOUD_KINDS, banner_alerts
from dashboard.web.auth import page_can
from dashboard.web.i18n import N_
from dashboard.web.templating import NavLink, render

router = APIRouter(prefix="/foosball")
NAV = [NavLink("/foosball", N_("Foosball"), order=20)]


def _context(service, user) -> dict:  # type: ignore[no-untyped-def]
    alerts = banner_alerts(service)
    return {"foosball": list_checkins(service, user), "open_alerts": alerts,
            "unguarded": {a.table for a in alerts if a.kind in LOUD_KINDS}}


@router.get("")
def foosball(request: Request, service: Service, user: Annotated[User, Depends(page_can("foosball.checkin"))]) -> Response:
    return render(request, "foosball.html", _context(service, user))


@router.get("/tables")
def foosball_tables(request: Request, service: Service, user: Annotated[User, Depends(page_can("foosball.checkin"))]) -> Response:
    return render(request, "_foosball_tables.html", _context(service, user))
