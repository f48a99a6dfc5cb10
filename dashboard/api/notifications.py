"""Push notifications (manager): the targets (URLs are write-only secrets: shown masked), a test
message, the history of what was sent and what failed.

Each route calls the same facade method as its page (dashboard/web/pages_notifications.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from broker.accounts.staff import Staff
from broker.hall.notifications import AddNotifyTarget, RemoveNotifyTarget, UpdateNotifyTarget
from dashboard.api.auth import can
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(prefix="/notifications", tags=["notifications"])
CAP = "notify.settings"
TargetId = Annotated[str, Field(pattern=r"^[0-9a-f]{1,16}$")]


class TargetOut(BaseModel):
    id: str
    url: str  # masked: scheme and host
    kinds: list[str]
    min_severity: str
    quiet_from: str
    quiet_to: str
    lang: str
    label: str


class TargetIn(Body):
    url: text(500, min_length=0) = ""  # type: ignore[valid-type]  # empty on a change: keep the stored one
    kinds: Annotated[list[text(40)], Field(max_length=30)] = []  # type: ignore[valid-type]  # noqa: RUF012 - pydantic copies a default per instance
    min_severity: Literal["info", "warning", "critical"] = "info"
    quiet_from: text(5, min_length=0) = ""  # type: ignore[valid-type]
    quiet_to: text(5, min_length=0) = ""  # type: ignore[valid-type]
    lang: Literal["sk", "en"] = "sk"
    label: text(60, min_length=0) = ""  # type: ignore[valid-type]


class MessageOut(BaseModel):
    id: int
    target: str
    text: str
    created_at: datetime
    state: str
    attempts: int
    last_error: str | None
    sent_at: datetime | None
    late: bool
    not_before: datetime | None


class HistoryOut(BaseModel):
    pending: int
    dropped: int
    messages: list[MessageOut]


class TestOut(BaseModel):
    delivered: bool
    error: str | None


class DoneOut(BaseModel):
    ok: bool = True


def _out(t: Any) -> dict[str, Any]:
    return vars(t) | {"kinds": list(t.kinds)}


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


@router.get("/targets", response_model=list[TargetOut], summary="The push notification targets, URLs masked (manager)")
def targets(reads: Reads, user: Annotated[Staff, Depends(can(CAP))]) -> list[dict[str, Any]]:
    return [_out(t) for t in reads.notify_targets()]


@router.post("/targets", response_model=TargetOut, summary="Add a push target (an Apprise URL; manager; audited without it)")
def add(body: TargetIn, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> dict[str, Any]:
    target_id = hub.execute(AddNotifyTarget(**_fields(body), actor=user.username))
    return next(_out(t) for t in hub.reads.notify_targets() if t.id == target_id)


@router.put("/targets/{target_id}", response_model=TargetOut, summary="Change a push target (an empty url keeps it; manager)")
def change(target_id: TargetId, body: TargetIn, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> dict[str, Any]:
    hub.execute(UpdateNotifyTarget(target_id=target_id, **_fields(body), actor=user.username))
    return next(_out(t) for t in hub.reads.notify_targets() if t.id == target_id)


@router.delete("/targets/{target_id}", response_model=DoneOut, summary="Remove a push target (manager; audited)")
def remove(target_id: TargetId, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> dict[str, Any]:
    hub.execute(RemoveNotifyTarget(target_id=target_id, actor=user.username))
    return {"ok": True}


@router.post("/targets/{target_id}/test", response_model=TestOut, summary="Send a test message to a target now (manager)")
def send_test(target_id: TargetId, hub: Hub, user: Annotated[Staff, Depends(can(CAP))]) -> dict[str, Any]:
    error = hub.notify_send_test(target_id)
    return {"delivered": error is None, "error": error}


@router.get("/history", response_model=HistoryOut, summary="What was sent, what waits and why (manager)")
def history(reads: Reads, user: Annotated[Staff, Depends(can(CAP))]) -> dict[str, Any]:
    h = reads.notify_history()
    return {"pending": h.pending, "dropped": h.dropped, "messages": [vars(m) for m in h.messages]}
