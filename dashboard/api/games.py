"""Table sessions: start, the operations on a running one, the bill, and what is put on the game's tab.

Every write is a call of the hub's facade: the hub validates, appends the op (its audit entry,
with the user as actor) and makes the lights follow. An extra is a product on the game's tab: its
routes here build the till's tab-item commands on that tab (broker.hall.till.tabs), the same as
the tab's own routes, and answer the game with what is on its tab. Reads go through the read models.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from broker.accounts.staff import Staff
from broker.domain.club_rate import start_warning
from broker.hall.closing import StopAllGames
from broker.hall.games import (
    CorrectBill,
    ExtendGame,
    GameCommand,
    MoveGame,
    PauseGame,
    ResumeGame,
    SetCard,
    StartGame,
    StopGame,
)
from broker.hall.read_models import HallReads
from broker.hall.till.tabs import AddTabItem, VoidTabItem
from dashboard.access import allows
from dashboard.api import responses as R
from dashboard.api import views
from dashboard.api.auth import can, can_read_money, demand
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import CorrectionIn, Extend, ExtraIn, SessionCard, SessionStart, Transfer, VoidIn

router = APIRouter(prefix="/sessions", tags=["sessions"])

MAX_LIST = 500


def _view(reads: HallReads, session_id: int) -> dict[str, Any]:
    return views.session(reads, session_id, reads.session_state(session_id))


def _done(hub: Hub, cmd: GameCommand) -> dict[str, Any]:
    """Run a command on one game; the game as it is after it."""
    return views.session(hub.reads, cmd.game, hub.execute(cmd))


@router.post(
    "",
    status_code=201,
    response_model=R.SessionStartedOut,
    summary="Start a session on a table (the light goes on); warns when a member's game runs at the standard rate",
)
def start(body: SessionStart, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    game_id = hub.execute(
        StartGame(
            table=body.table,
            tariff=body.tariff,
            member_id=body.member_id,
            card_uid=body.card_uid,
            prepaid_minutes=body.prepaid_minutes,
            actor=user.username,
        )
    )
    state = hub.reads.session_state(game_id)
    warning = start_warning(state, hub.reads.venue, hub.reads.clock())
    return {
        **views.session(hub.reads, game_id, state),
        "warning": str(warning) if warning else None,
        "warning_code": warning.code if warning else None,
    }


@router.get(
    "",
    response_model=list[R.SessionBriefOut],
    summary="Sessions: open ones (staff), or all of them / closed / those started on a venue-local day (manager)",
)
def list_sessions(
    reads: Reads,
    user: Annotated[Staff, Depends(can("sessions.open"))],
    open: bool | None = Query(None, description="true: running or paused; false: stopped"),
    day: date | None = Query(None, description="Started on this business day (06:00 to 06:00 local time), YYYY-MM-DD"),
    limit: int = Query(200, ge=1, le=MAX_LIST),
) -> list[dict[str, Any]]:
    if open is not True:  # closed sessions carry their totals: that is the revenue
        demand(user, "sessions.history")
    start_at, end_at = reads.day_bounds(day) if day is not None else (None, None)
    ids = reads.session_ids(open=open, started_from=start_at, started_before=end_at, limit=limit)
    items = reads.game_items(ids)
    return [views.session(reads, gid, reads.session_state(gid), with_bill=False, items=items.get(gid, ())) for gid in ids]


class ClosedGameOut(BaseModel):
    session_id: int
    table: str
    tab_id: int | None
    total_cents: int = Field(description="The game's own bill")
    owed_cents: int = Field(description="What its tab still owes (0: paid); it stays open to be paid")


class StoppedAllOut(BaseModel):
    stopped: list[ClosedGameOut]


class StopAllIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    confirm: Literal[True] = Field(description="true: the caller means every game in the hall (a body sent by mistake stops nothing)")


@router.post(
    "/stop-all", response_model=StoppedAllOut, summary="Stop every game at once (closing time, manager); their tabs stay open to be paid"
)
def stop_all(body: StopAllIn, hub: Hub, user: Annotated[Staff, Depends(can("sessions.stop_all"))]) -> dict[str, Any]:
    done = hub.execute(StopAllGames(actor=user.username))
    return {
        "stopped": [
            {"session_id": g.game, "table": g.table, "tab_id": g.tab_id, "total_cents": g.total_cents, "owed_cents": g.owed_cents}
            for g in done.games
        ]
    }


@router.get("/{session_id}", response_model=R.SessionOut, summary="A session's state and itemised bill")
def get_session(session_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("sessions.run"))]) -> dict[str, Any]:
    return _view(reads, session_id)


@router.post("/{session_id}/stop", response_model=R.SessionOut, summary="Stop: the light goes off, the bill is final")
def stop(session_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(hub, StopGame(game=session_id, actor=user.username))


@router.post("/{session_id}/pause", response_model=R.SessionOut, summary="Pause billing (the light as the venue configures)")
def pause(session_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(hub, PauseGame(game=session_id, actor=user.username))


@router.post("/{session_id}/resume", response_model=R.SessionOut, summary="Resume billing")
def resume(session_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(hub, ResumeGame(game=session_id, actor=user.username))


@router.post("/{session_id}/transfer", response_model=R.SessionOut, summary="Move the session to another table (the light moves with it)")
def transfer(session_id: IdPath, body: Transfer, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(hub, MoveGame(game=session_id, to_table=body.table, actor=user.username))


@router.post("/{session_id}/extend", response_model=R.SessionOut, summary="Add prepaid minutes")
def extend(session_id: IdPath, body: Extend, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(hub, ExtendGame(game=session_id, minutes=body.minutes, actor=user.username))


@router.post(
    "/{session_id}/extras",
    response_model=R.SessionOut,
    summary="Put an extra (by its id in GET /api/extras, a product of the list) on the game's tab; the game with its extras",
)
def add_extra(session_id: IdPath, body: ExtraIn, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    tab, product = hub.reads.game_tab(session_id), hub.reads.product_of_extra(body.extra)
    hub.execute(AddTabItem(tab=tab, product=product.id, quantity=body.quantity, actor=user.username))
    return _view(hub.reads, session_id)


@router.post(
    "/{session_id}/card",
    response_model=R.SessionOut,
    summary="Put a club card on the session (by card_uid or member_id), or take it off (neither)",
)
def set_card(session_id: IdPath, body: SessionCard, hub: Hub, user: Annotated[Staff, Depends(can("sessions.run"))]) -> dict[str, Any]:
    return _done(hub, SetCard(game=session_id, member_id=body.member_id, card_uid=body.card_uid, actor=user.username))


@router.post("/{session_id}/correction", response_model=R.SessionOut, summary="Correct the bill by an amount, with a reason (manager)")
def correct(session_id: IdPath, body: CorrectionIn, hub: Hub, user: Annotated[Staff, Depends(can("sessions.correct"))]) -> dict[str, Any]:
    return _done(hub, CorrectBill(game=session_id, amount_cents=body.amount_cents, reason=body.reason, actor=user.username))


@router.post(
    "/{session_id}/void",
    response_model=R.SessionOut,
    summary="Void what was put on the game's tab (extras[].item) with a reason; staff before any payment on the tab, a manager after",
)
def void_extra(session_id: IdPath, body: VoidIn, hub: Hub, user: Annotated[Staff, Depends(can("sessions.void"))]) -> dict[str, Any]:
    may_void_paid = allows(user.role, "tabs.void_paid")
    tab = hub.reads.game_tab(session_id)
    hub.execute(VoidTabItem(tab=tab, item=body.item, reason=body.reason, may_void_paid=may_void_paid, actor=user.username))
    return _view(hub.reads, session_id)
