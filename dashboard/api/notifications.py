"""Push notifications (manager): the targets (URLs are write-only secrets: shown masked), a test
message, the history of what was sent and what failed.

Each route calls the same facade method as its page (dashboard/web/pages_notifications.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import Field

from broker.accounts.staff import Staff
from broker.hall.read_models import HallReads
from broker.notify.notifications import AddNotifyTarget, RemoveNotifyTarget, UpdateNotifyTarget
from broker.notify.reads import NotifyHistoryView, NotifyTargetView
from dashboard.api import responses as R
from dashboard.api.auth import can
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(prefix="/notifications", tags=["notifications"])
CAP = "notify.settings"
TargetId = Annotated[str, Field(pattern=r"^[0-9a-f]{1,16}$")]


class TargetIn(Body):
    url: Annotated[str, text(500, min_length=0)] = ""  # empty on a change: keep the stored one
    kinds: Annotated[list[Annotated[str, text(40)]], Field(max_length=30)] = []  # noqa: RUF012 - pydantic copies a default per instance
    min_severity: Literal["info", "warning", "critical"] = "info"
    quiet_from: Annotated[str, text(5, min_length=0)] = ""
    quiet_to: Annotated[str, text(5, min_length=0)] = ""
    lang: Literal["sk", "en"] = "sk"
    label: Annotated[str, text(60, min_length=0)] = ""


def _target(reads: HallReads, target_id: str) -> NotifyTargetView:
    return next(t for t in reads.notify.targets() if t.id == target_id)


def _fields(body: TargetIn) -> dict[str, Any]:
    return {
        "url": body.url,
        "kinds": tuple(body.kinds),
        "min_severity": body.min_severity,
        "quiet_from": body.quiet_from,
        "quiet_to": body.quiet_to,
        "lang": body.lang,
        "label": body.label,
    }


@router.get("/targets", response_model=list[NotifyTargetView], summary="The push notification targets, URLs masked (manager)")
def targets(reads: Reads, user: Annotated[Staff, Depends(can(CAP))]) -> list[NotifyTargetView]:
    return reads.notify.targets()


@router.post("/targets", response_model=NotifyTargetView, summary="Add a push target (an Apprise URL; manager; audited without it)")
def add(body: TargetIn, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> NotifyTargetView:
    target_id = hub.execute(AddNotifyTarget(**_fields(body), actor=user.username))
    return _target(hub.reads, target_id)


@router.put("/targets/{target_id}", response_model=NotifyTargetView, summary="Change a push target (an empty url keeps it; manager)")
def change(target_id: TargetId, body: TargetIn, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> NotifyTargetView:
    hub.execute(UpdateNotifyTarget(target_id=target_id, **_fields(body), actor=user.username))
    return _target(hub.reads, target_id)


@router.delete("/targets/{target_id}", response_model=R.DoneOut, summary="Remove a push target (manager; audited)")
def remove(target_id: TargetId, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> R.DoneOut:
    hub.execute(RemoveNotifyTarget(target_id=target_id, actor=user.username))
    return R.DoneOut()


@router.post("/targets/{target_id}/test", response_model=R.TestOut, summary="Send a test message to a target now (manager)")
def send_test(target_id: TargetId, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> R.TestOut:
    error = hub.notify_send_test(target_id)
    return R.TestOut(delivered=error is None, error=error)


@router.get("/history", response_model=NotifyHistoryView, summary="What was sent, what waits and why (manager)")
def history(reads: Reads, user: Annotated[Staff, Depends(can(CAP))]) -> NotifyHistoryView:
    return reads.notify.history()
