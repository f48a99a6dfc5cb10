"""Alerts: the banner fragment every page refreshes live, the list, and acknowledging with a tap."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.core.alert_book import AckAlert
from broker.hall.facade import NotFound
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.web.alerts_view import all_open, banner_alerts
from dashboard.web.auth import page_can, safe_next
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/alerts")
NAV = [NavLink("/alerts", N_("Alerts"), order=30)]


@router.get("")
def alerts_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("alerts.open"))]) -> Response:
    return render(request, "alerts.html", {"alerts": all_open(reads)})


@router.get("/banner")
def banner(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("alerts.open"))]) -> Response:
    return render(request, "_alert_banner.html", {"open_alerts": banner_alerts(reads)})


@router.post("/{alert_id}/ack", dependencies=[Depends(verify_csrf)])
def ack(
    alert_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("alerts.open"))],
    next: Annotated[str, Form(max_length=2000)] = "/",
    close: Annotated[bool, Form()] = False,
) -> Response:
    try:
        hub.execute(AckAlert(alert_id=alert_id, close=close, actor=user.username))
    except NotFound:
        flash(request, gettext("That alert no longer exists; the list has been reloaded."), "error")
    return RedirectResponse(safe_next(next), status_code=303)
