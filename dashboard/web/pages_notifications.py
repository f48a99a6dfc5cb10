"""/notifications (manager): push targets (Apprise URLs, write-only secrets shown masked), a test
message per target with its result, the history of what was sent and what failed. Reached from
/monitoring; no top-bar link (the bar fits one row).

Each form calls the same facade method as its API route (dashboard/api/notifications.py). A
refused form is shown again with what was typed (never the URL of a stored target) and the
reason in place.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.hall.facade import HubFacade, ServiceError
from broker.notify.notifications import AddNotifyTarget, RemoveNotifyTarget, UpdateNotifyTarget
from dashboard.api.deps import Hub
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.table_page import in_visitor_lang, refusal_text
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/notifications")
NAV: list[NavLink] = []  # reached from /monitoring (a link there), not from the top bar
CAP = "notify.settings"

KINDS = {
    "node_offline": N_("a table's module offline"),
    "play_without_session": N_("play without a game"),
    "light_without_session": N_("light without a game"),
    "idle_session": N_("a game left running"),
    "sensor_fault": N_("a sensor fault"),
    "outbox_stuck": N_("a module cannot send"),
    "foosball_no_member": N_("foosball without a member"),
    "card_refused": N_("a card refused"),
    "prepaid_expired": N_("prepaid time over"),
    "open_after_closing": N_("a game after closing time"),
    "ekasa_unreachable": N_("eKasa does not answer"),
    "ekasa_offline_overdue": N_("eKasa receipts offline too long"),
    "central_backlog": N_("records for the centre piling up"),
    "central_refused": N_("a record the centre refused"),
    "clock_unsynced": N_("the hub's clock not synchronised"),
    "clock_jump": N_("the hub's clock jumped"),
    "backup_failed": N_("the nightly backup failed"),
    "backup_missing": N_("no recent backup"),
    "cert_expiring": N_("a TLS certificate near its end"),
    "monitoring": N_("a monitoring rule (VictoriaMetrics)"),
    "waiting_list": N_("a table offered to a waiting party"),
    "stock_low": N_("stock running low (the bar's stock)"),
    "stock_negative": N_("stock below zero (the bar's stock)"),
}
SEVERITIES = {"info": N_("everything (info)"), "warning": N_("warnings and critical"), "critical": N_("critical only")}
LANGS = {"sk": "Slovensky", "en": "English"}
STATES = {"pending": N_("waiting"), "sent": N_("sent"), "dropped": N_("dropped")}


def _page(request: Request, hub: HubFacade, *, status: int = 200, **extra: Any) -> Response:
    reads = hub.reads
    ctx = {
        "targets": reads.notify.targets(),
        "history": reads.notify.history(),
        "kinds": KINDS,
        "severities": SEVERITIES,
        "langs": LANGS,
        "states": STATES,
        "form": {},
        "errors": {},
        "tested": {},
        **extra,
    }
    return render(request, "notifications.html", ctx, status=status)


Url = Annotated[str, Form(max_length=500)]
Kinds = Annotated[list[str], Form(max_length=40)]
Short = Annotated[str, Form(max_length=10)]
Label = Annotated[str, Form(max_length=60)]


def _target_form(
    url: Url = "",
    kinds: Kinds = [],  # noqa: B006 - FastAPI copies defaults
    min_severity: Short = "info",
    quiet_from: Short = "",
    quiet_to: Short = "",
    lang: Short = "sk",
    label: Label = "",
) -> dict[str, Any]:
    """A target's form, as the add and the change forms both send it (unknown kinds left out)."""
    return {
        "url": url,
        "kinds": tuple(k for k in kinds if k in KINDS),
        "min_severity": min_severity,
        "quiet_from": quiet_from,
        "quiet_to": quiet_to,
        "lang": lang,
        "label": label,
    }


TargetForm = Annotated[dict[str, Any], Depends(_target_form)]


@router.get("")
def notifications(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can(CAP))]) -> Response:
    return _page(request, hub)


@router.post("/targets", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def add(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can(CAP))], fields: TargetForm) -> Response:
    try:
        hub.execute(AddNotifyTarget(**fields, actor=user.username))
    except ServiceError as e:
        form = fields | {"url": ""}  # the URL is a secret: not echoed into the page
        return _page(request, hub, status=400, form={"new": form}, errors={"new": refusal_text(e)})
    flash(request, gettext("Notification target added."), "ok")
    return RedirectResponse("/notifications", status_code=303)


@router.post("/targets/{target_id}", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def change(target_id: str, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can(CAP))], fields: TargetForm) -> Response:
    try:
        hub.execute(UpdateNotifyTarget(target_id=target_id[:16], **fields, actor=user.username))
    except ServiceError as e:
        return _page(request, hub, status=400, form={target_id: fields | {"url": ""}}, errors={target_id: refusal_text(e)})
    flash(request, gettext("Notification target saved."), "ok")
    return RedirectResponse("/notifications", status_code=303)


@router.post("/targets/{target_id}/remove", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def remove(target_id: str, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can(CAP))]) -> Response:
    try:
        hub.execute(RemoveNotifyTarget(target_id=target_id[:16], actor=user.username))
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal_text(e)}, "error")
    else:
        flash(request, gettext("Notification target removed."), "ok")
    return RedirectResponse("/notifications", status_code=303)


@router.post("/targets/{target_id}/test", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def send_test(target_id: str, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can(CAP))]) -> Response:
    try:
        error = hub.notify_send_test(target_id[:16])
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal_text(e)}, "error")
        return RedirectResponse("/notifications", status_code=303)
    if error is None:
        result = ("ok", gettext("The test message was delivered."))
    else:
        result = ("error", gettext("The test message was not delivered: %(why)s") % {"why": error})
    return _page(request, hub, tested={target_id: result})
