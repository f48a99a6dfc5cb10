"""Foosball is for members only: who is checked in at each table, since when, and their goals."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from broker.accounts.staff import Staff
from broker.hall.read_models import HallReads
from dashboard.api.deps import Reads
from dashboard.api.foosball import checkins_by_table
from dashboard.web.alerts_view import LOUD_KINDS, banner_alerts
from dashboard.web.auth import page_can
from dashboard.web.i18n import N_
from dashboard.web.templating import NavLink, render

router = APIRouter(prefix="/foosball")
NAV = [NavLink("/foosball", N_("Foosball"), order=20)]


def _context(reads: HallReads) -> dict:
    alerts = banner_alerts(reads)
    return {"foosball": checkins_by_table(reads), "open_alerts": alerts, "unguarded": {a.table for a in alerts if a.kind in LOUD_KINDS}}


@router.get("")
def foosball(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("foosball.checkin"))]) -> Response:
    return render(request, "foosball.html", _context(reads))


@router.get("/tables")
def foosball_tables(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("foosball.checkin"))]) -> Response:
    return render(request, "_foosball_tables.html", _context(reads))
