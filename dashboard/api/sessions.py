"""Table sessions: start, the operations on a running one, and the bill.

Every write is a service call: the service validates, appends the op (its audit entry, with the
user as actor) and makes the lights follow.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Callable

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select

from broker import sessions
from broker.db.models import TableSession, User
from broker.reports import day_bounds
from broker.service import CentralService
from dashboard.api import views
from dashboard.api.auth import can, demand
from dashboard.api.deps import IdPath, Service
from dashboard.api.schemas import CorrectionIn, Extend, ExtraIn, SessionCard, SessionStart, Transfer

router = APIRouter(prefix="/sessions", tags=["sessions"])

MAX_LIST = 500


def _view(service: CentralService, session_id: int) -> dict[str, Any]:
    _row, state = service.session_state(session_id)
    return views.session(service, session_id, state)


def _done(service: CentralService, session_id: int, op: Callable[[], sessions.SessionState]) -> dict[str, Any]:
    state = op()
    return views.session(service, session_id, state)


@router.post("", status_code=201, summary="Start a session on a table (the light goes on)")
def start(body: SessionStart, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    sid = service.start_session(
        body.table, actor=user.username, tariff=body.tariff, member_id=body.member_id,
        card_uid=body.card_uid, prepaid_minutes=body.prepaid_minutes,
    )
    return _view(service, sid)


@router.get("", summary="Sessions: open ones (staff), or all of them / closed / those started on a venue-local day (manager)")
def list_sessions(
    service: Service, user: Annotated[User, Depends(can("sessions.open"))],
    open: bool | None = Query(None, description="true: running or paused; false: stopped"),
    day: date | None = Query(None, description="Started on this local day, YYYY-MM-DD"),
    limit: int = Query(200, ge=1, le=MAX_LIST),
) -> list[dict[str, Any]]:
    if open is not True:  # closed sessions carry their totals: that is the revenue
        demand(user, "sessions.history")
    q = select(TableSession).order_by(TableSession.started_at.desc(), TableSession.id.desc()).limit(limit)
    if open is not None:
        q = q.where(TableSession.state != "stopped") if open else q.where(TableSession.state == "stopped")
    if day is not None:
        start_at, end_at = day_bounds(day, service.venue)
        q = q.where(TableSession.started_at >= start_at, TableSession.started_at < end_at)
    with service.store.reader() as db:
        ids = list(db.scalars(q.with_only_columns(TableSession.id)))
    out = []
    for sid in ids:
        _row, state = service.session_state(sid)
        out.append(views.session(service, sid, state, with_bill=False))
    return out


@router.get("/{session_id}", summary="A session's state and itemised bill")
def get_session(session_id: IdPath, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _view(service, session_id)


@router.post("/{session_id}/stop", summary="Stop: the light goes off, the bill is final")
def stop(session_id: IdPath, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.stop_session(session_id, actor=user.username))


@router.post("/{session_id}/pause", summary="Pause billing (the light as the venue configures)")
def pause(session_id: IdPath, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.pause_session(session_id, actor=user.username))


@router.post("/{session_id}/resume", summary="Resume billing")
def resume(session_id: IdPath, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.resume_session(session_id, actor=user.username))


@router.post("/{session_id}/transfer", summary="Move the session to another table (the light moves with it)")
def transfer(session_id: IdPath, body: Transfer, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.transfer_session(session_id, body.table, actor=user.username))


@router.post("/{session_id}/extend", summary="Add prepaid minutes")
def extend(session_id: IdPath, body: Extend, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.extend_session(session_id, body.minutes, actor=user.username))


@router.post("/{session_id}/extras", summary="Put an extra (from GET /api/extras) on the tab")
def add_extra(session_id: IdPath, body: ExtraIn, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.add_extra(session_id, body.extra, body.quantity, actor=user.username))


@router.post("/{session_id}/card", summary="Put a club card on the session (by card_uid or member_id), or take it off (neither)")
def set_card(session_id: IdPath, body: SessionCard, service: Service, user: Annotated[User, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.set_card(
        session_id, actor=user.username, member_id=body.member_id, card_uid=body.card_uid))


@router.post("/{session_id}/correction", summary="Correct the bill by an amount, with a reason (manager)")
def correct(session_id: IdPath, body: CorrectionIn, service: Service, user: Annotated[User, Depends(can("sessions.correct"))]) -> dict[str, Any]:
    return _done(service, session_id, lambda: service.correct_session(session_id, body.amount_cents, body.reason, actor=user.username))
