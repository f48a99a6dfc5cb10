"""Games: start one on a table, the operations on a running one, the bill, and what is put on the game's tab.

The paths keep the word clients already use (/api/sessions/{session_id}); a game is a game here.

Every write is a call of the hub's facade: the hub validates, appends the op (its audit entry,
with the user as actor) and makes the lights follow. An extra is a product on the game's tab: its
routes here build the till's tab-item commands on that tab (broker.till.tabs), the same as
the tab's own routes, and answer the game with what is on its tab. Reads go through the read models.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from broker.accounts.staff import Staff
from broker.floor.closing import StopAllGames, StoppedAll
from broker.floor.game_views import GameBrief, GameStarted, GameView
from broker.floor.games import (
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
from broker.till.tabs import AddTabItem, VoidTabItem
from dashboard.access import allows
from dashboard.api.auth import can, can_read_money, demand
from dashboard.api.dates import Day
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import CorrectionIn, Extend, ExtraIn, GameCard, GameStart, Transfer, VoidIn

router = APIRouter(prefix="/sessions", tags=["sessions"])

MAX_LIST = 500


def _done(hub: Hub, cmd: GameCommand) -> GameView:
    """Run a command on one game; the game as it is after it."""
    return hub.reads.floor.game_view(cmd.game, hub.execute(cmd))


@router.post(
    "",
    status_code=201,
    response_model=GameStarted,
    summary="Start a game on a table (the light goes on); warns when a member's game runs at the standard rate",
)
def start(body: GameStart, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameStarted:
    game_id = hub.execute(body.to(StartGame, actor=user.username))
    return hub.reads.floor.game_started(game_id)


@router.get(
    "",
    response_model=list[GameBrief],
    summary="Games: open ones (staff), or all of them / stopped / those started on a venue-local day (manager)",
)
def list_games(
    reads: Reads,
    user: Annotated[Staff, Depends(can("games.open"))],
    open: bool | None = Query(None, description="true: running or paused; false: stopped"),
    day: Day | None = Query(None, description="Started on this business day (06:00 to 06:00 local time), YYYY-MM-DD"),
    limit: int = Query(200, ge=1, le=MAX_LIST),
) -> list[GameBrief]:
    if open is not True:  # stopped games carry their totals: that is the revenue
        demand(user, "games.history")
    start_at, end_at = reads.reports.day_bounds(day) if day is not None else (None, None)
    ids = reads.floor.game_ids(open=open, started_from=start_at, started_before=end_at, limit=limit)
    return reads.floor.game_briefs(ids)


class StopAllIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    confirm: Literal[True] = Field(description="true: the caller means every game in the hall (a body sent by mistake stops nothing)")


@router.post(
    "/stop-all", response_model=StoppedAll, summary="Stop every game at once (closing time, manager); their tabs stay open to be paid"
)
def stop_all(body: StopAllIn, hub: Hub, user: Annotated[Staff, Depends(can("games.stop_all"))]) -> StoppedAll:
    return hub.execute(StopAllGames(actor=user.username))


@router.get("/{session_id}", response_model=GameView, summary="A game's state and itemised bill")
def get_game(session_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("games.run"))]) -> GameView:
    return reads.floor.game(session_id)


@router.post("/{session_id}/stop", response_model=GameView, summary="Stop: the light goes off, the bill is final")
def stop(session_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameView:
    return _done(hub, StopGame(game=session_id, actor=user.username))


@router.post("/{session_id}/pause", response_model=GameView, summary="Pause billing (the light as the venue configures)")
def pause(session_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameView:
    return _done(hub, PauseGame(game=session_id, actor=user.username))


@router.post("/{session_id}/resume", response_model=GameView, summary="Resume billing")
def resume(session_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameView:
    return _done(hub, ResumeGame(game=session_id, actor=user.username))


@router.post("/{session_id}/transfer", response_model=GameView, summary="Move the game to another table (the light moves with it)")
def transfer(session_id: IdPath, body: Transfer, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameView:
    return _done(hub, MoveGame(game=session_id, to_table=body.table, actor=user.username))


@router.post("/{session_id}/extend", response_model=GameView, summary="Add prepaid minutes")
def extend(session_id: IdPath, body: Extend, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameView:
    return _done(hub, ExtendGame(game=session_id, minutes=body.minutes, actor=user.username))


@router.post(
    "/{session_id}/extras",
    response_model=GameView,
    summary="Put an extra (by its id in GET /api/extras, a product of the list) on the game's tab; the game with its extras",
)
def add_extra(session_id: IdPath, body: ExtraIn, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameView:
    tab, product = hub.reads.till.game_tab(session_id), hub.reads.till.product_of_extra(body.extra)
    hub.execute(AddTabItem(tab=tab, product=product.id, quantity=body.quantity, actor=user.username))
    return hub.reads.floor.game(session_id)


@router.post(
    "/{session_id}/card",
    response_model=GameView,
    summary="Put a club card on the game (by card_uid or member_id), or take it off (neither)",
)
def set_card(session_id: IdPath, body: GameCard, hub: Hub, user: Annotated[Staff, Depends(can("games.run"))]) -> GameView:
    return _done(hub, SetCard(game=session_id, member_id=body.member_id, card_uid=body.card_uid, actor=user.username))


@router.post("/{session_id}/correction", response_model=GameView, summary="Correct the bill by an amount, with a reason (manager)")
def correct(session_id: IdPath, body: CorrectionIn, hub: Hub, user: Annotated[Staff, Depends(can("games.correct"))]) -> GameView:
    return _done(hub, CorrectBill(game=session_id, amount_cents=body.amount_cents, reason=body.reason, actor=user.username))


@router.post(
    "/{session_id}/void",
    response_model=GameView,
    summary="Void what was put on the game's tab (extras[].item) with a reason; staff before any payment on the tab, a manager after",
)
def void_extra(session_id: IdPath, body: VoidIn, hub: Hub, user: Annotated[Staff, Depends(can("games.void"))]) -> GameView:
    may_void_paid = allows(user.role, "tabs.void_paid")
    tab = hub.reads.till.game_tab(session_id)
    hub.execute(VoidTabItem(tab=tab, item=body.item, reason=body.reason, may_void_paid=may_void_paid, actor=user.username))
    return hub.reads.floor.game(session_id)
