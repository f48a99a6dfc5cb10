"""/ekasa: the receipts not registered in eKasa yet and the paragón form (staff); the settings and
"test connection" (manager). Reached from the bills page; no top-bar link (the bar fits one row).

Each form calls the same facade method as its API route (dashboard/api/ekasa.py). A refused form
is shown again with what was typed and the reason in place.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.dates import DateRefused, clock_time
from broker.hall.facade import HubFacade, ServiceError
from broker.till.fiscal import RecordParagon, RetryEkasa, SaveEkasaSettings
from dashboard.access import allows
from dashboard.api.dates import WRITTEN_MAX
from dashboard.api.deps import MAX_ID, Hub
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.table_page import in_visitor_lang, refusal_text
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/ekasa")
NAV: list[NavLink] = []  # reached from /bills (a link there), not from the top bar

STATE_LABELS = {
    "pending": N_("waiting to be sent"),
    "offline": N_("stored offline in eKasa"),
    "failed": N_("refused"),
    "paragon": N_("paragón, to be registered"),
}
# The client's own internet link to the tax authority (Portos' connectivity states).
INTERNET = {"Up": N_("working"), "Down": N_("down"), "Unknown": N_("unknown")}


def _page(request: Request, hub: HubFacade, user: Staff, *, status: int = 200, **extra: Any) -> Response:
    reads = hub.reads
    manager = allows(user.role, "ekasa.settings")
    ctx = {
        "receipts": reads.till.ekasa_unregistered(),
        "health": reads.till.ekasa_health(),
        "settings": reads.till.ekasa_settings() if manager else None,
        "manager": manager,
        "state_labels": STATE_LABELS,
        "tz": reads.venue.tz,
        "form": {},
        "errors": {},
        **extra,
    }
    return render(request, "ekasa.html", ctx, status=status)


@router.get("")
def ekasa(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("ekasa.run"))]) -> Response:
    return _page(request, hub, user)


@router.post("/settings", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def save_settings(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("ekasa.settings"))],
    url: Annotated[str, Form(max_length=200)] = "",
    timeout_s: Annotated[str, Form(max_length=10)] = "10",
    cash_register_code: Annotated[str, Form(max_length=40)] = "",
    enabled: Annotated[str, Form(max_length=5)] = "",
    action: Annotated[str, Form(max_length=10)] = "save",
) -> Response:
    form = {"url": url, "timeout_s": timeout_s, "cash_register_code": cash_register_code, "enabled": enabled == "on"}
    try:
        timeout = float(timeout_s.replace(",", "."))
    except ValueError:
        return _page(
            request, hub, user, status=400, form=form, errors={"settings": gettext("The timeout must be between 1 and 60 seconds.")}
        )
    try:
        if action == "test":
            s = hub.ekasa_test_connection(url=url, timeout_s=timeout)  # broker.adapters.ekasa.ClientStatus
            if getattr(s, "reachable", False):
                internet = INTERNET.get(getattr(s, "internet", None) or "Unknown", INTERNET["Unknown"])
                note = gettext("eKasa answers; its internet connection: %(state)s.") % {"state": gettext(internet)}
                return _page(request, hub, user, form=form, tested=("ok", note))
            note = gettext("eKasa does not answer at this address: %(why)s") % {"why": getattr(s, "detail", "")}
            return _page(request, hub, user, form=form, tested=("error", note))
        hub.execute(
            SaveEkasaSettings(
                enabled=enabled == "on", url=url, timeout_s=timeout, cash_register_code=cash_register_code, actor=user.username
            )
        )
    except ServiceError as e:
        return _page(request, hub, user, status=400, form=form, errors={"settings": refusal_text(e)})
    flash(request, gettext("eKasa settings saved."), "ok")
    return RedirectResponse("/ekasa", status_code=303)


@router.post("/receipts/{payment_id}/paragon", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def paragon(
    payment_id: int,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("ekasa.run"))],
    number: Annotated[str, Form(max_length=20)] = "",
    at_time: Annotated[str, Form(max_length=WRITTEN_MAX)] = "",
) -> Response:
    form = {"payment": payment_id, "number": number, "at_time": at_time}
    receipt = (
        next((r for r in hub.reads.till.ekasa_unregistered() if r.payment_id == payment_id), None) if 0 < payment_id <= MAX_ID else None
    )
    if receipt is None:
        flash(request, gettext("That receipt is already registered or gone: the list is up to date now."), "info")
        return RedirectResponse("/ekasa", status_code=303)
    try:
        written = clock_time(at_time)
    except DateRefused:
        return _page(
            request, hub, user, status=400, form=form, errors={payment_id: gettext("Give the time written on the paragón, e.g. 21:40.")}
        )
    dates = hub.reads.dates()
    paid = receipt.at.astimezone(dates.tz).replace(tzinfo=None)
    day = paid.date()
    wall = datetime.combine(day, written)
    if wall - paid > timedelta(hours=12):  # written before midnight for a payment just after, or the other way
        day -= timedelta(days=1)
    elif paid - wall > timedelta(hours=12):
        day += timedelta(days=1)
    try:
        at = dates.wall_clock(day, written)  # the hall's DST rule: 02:30 on the spring night does not exist
    except DateRefused as e:
        return _page(request, hub, user, status=400, form=form, errors={payment_id: refusal_text(e)})
    try:
        hub.execute(RecordParagon(payment=payment_id, number=number, at=at, actor=user.username))
    except ServiceError as e:
        return _page(request, hub, user, status=400, form=form, errors={payment_id: refusal_text(e)})
    flash(
        request,
        gettext("Paragón no. %(number)s recorded; it is registered in eKasa once eKasa is back.") % {"number": number.strip()},
        "ok",
    )
    return RedirectResponse("/ekasa", status_code=303)


@router.post("/receipts/{payment_id}/retry", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def retry(payment_id: int, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("ekasa.settings"))]) -> Response:
    try:
        hub.execute(RetryEkasa(payment=payment_id, actor=user.username))
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal_text(e)}, "error")
    else:
        flash(request, gettext("Sent to eKasa again."), "ok")
    return RedirectResponse("/ekasa", status_code=303)
