"""What staff do to a running game (pause, resume, stop, move, extend, an extra on its tab) and its bill."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.floor import game_ops
from broker.floor.games import ExtendGame, MoveGame, PauseGame, ResumeGame, StopGame
from broker.hall.facade import HubFacade, ServiceError
from broker.hall.read_models import HallReads
from broker.till.tabs import MAX_QUANTITY, AddTabItem
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.web import i18n
from dashboard.web.auth import page_can, page_can_read_money, safe_next
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import gettext
from dashboard.web.request_text import refusal
from dashboard.web.table_page import in_visitor_lang, rate_on, transfer_notice
from dashboard.web.templating import flash, render

router = APIRouter(prefix="/sessions", dependencies=[])

MAX_EXTEND_MIN = 12 * 60
NextField = Annotated[str, Form(max_length=2000)]


def _act(request: Request, next_path: str, done: str, op: Callable[[], game_ops.GameState]) -> Response:
    """Run one operation on a game; a refusal goes back where staff were, with the reason."""
    try:
        state = op()
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
        return RedirectResponse(safe_next(next_path), status_code=303)
    flash(request, done, "ok")
    return RedirectResponse(safe_next(next_path) if next_path else f"/tables/{state.table}", status_code=303)


@router.post("/{game_id}/stop", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def stop(
    game_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("games.run"))], next: NextField = "/"
) -> Response:
    try:
        hub.execute(StopGame(game=game_id, actor=user.username))
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
        return RedirectResponse(safe_next(next), status_code=303)
    return RedirectResponse(_pay_after_stop(hub.reads, game_id), status_code=303)


def _pay_after_stop(reads: HallReads, game_id: int) -> str:
    """Where a stop lands: the pay page of the tab the game's time and drinks are paid on (the tab
    it was merged into, if so), what the guest owes in full as its headline; a game without a tab
    (started before the till) shows its bill."""
    tab_id = reads.till.tab_of_game(game_id)
    view = reads.till.tab_payments(tab_id) if tab_id is not None else None
    if view is None:
        return f"/sessions/{game_id}/bill"
    return f"/tabs/{view.merged_into or view.tab_id}/pay"


@router.post("/{game_id}/pause", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def pause(
    game_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("games.run"))], next: NextField = "/"
) -> Response:
    return _act(request, next, gettext("Game paused."), lambda: hub.execute(PauseGame(game=game_id, actor=user.username)))


@router.post("/{game_id}/resume", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def resume(
    game_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("games.run"))], next: NextField = "/"
) -> Response:
    return _act(request, next, gettext("Game resumed."), lambda: hub.execute(ResumeGame(game=game_id, actor=user.username)))


def _table_name(request: Request, hub: HubFacade, table: str) -> str:
    """What staff call the table, in the visitor's language (the id for an unknown one: the move is refused anyway)."""
    spec = hub.reads.tables.get(table)
    if spec is None:
        return table[:32]
    return spec.name if i18n.lang_of(request) == "sk" else (spec.name_en or spec.name)


@router.post("/{game_id}/transfer", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def transfer(
    game_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("games.run"))],
    table: Annotated[str, Form(max_length=32)] = "",
    next: NextField = "/",
) -> Response:
    if not table:  # no silent default: staff choose the table
        flash(request, gettext("Choose the table to move the game to."), "error")
        return RedirectResponse(safe_next(next), status_code=303)
    before = _rate_before(hub.reads, game_id)
    try:
        hub.execute(MoveGame(game=game_id, to_table=table, actor=user.username))
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
        return RedirectResponse(safe_next(next), status_code=303)
    level, text = transfer_notice(hub.reads, game_id, before, table)  # warns when the rate differs there
    flash(request, text, level)
    return RedirectResponse("/", status_code=303)


def _rate_before(reads: HallReads, game_id: int) -> int | None:
    """The hourly rate of a running game where it is now (None when paused or not open)."""
    for table, s in reads.floor.hall_snapshot().open.items():
        if s.id == game_id and s.state.state == "running":
            return rate_on(reads, s.state, table)
    return None


@router.post("/{game_id}/extend", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def extend(
    game_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("games.run"))],
    minutes: Annotated[int, Form(ge=1, le=MAX_EXTEND_MIN)],
    next: NextField = "/",
) -> Response:
    return _act(
        request,
        next,
        gettext("Prepaid time extended by %(minutes)d min.") % {"minutes": minutes},
        lambda: hub.execute(ExtendGame(game=game_id, minutes=minutes, actor=user.username)),
    )


@router.post("/{game_id}/extras", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def add_extra(
    game_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("games.run"))],
    extra: Annotated[str, Form(min_length=1, max_length=32)],
    quantity: Annotated[int, Form(ge=1, le=MAX_QUANTITY)] = 1,
    next: NextField = "/",
) -> Response:
    """An extra of the venue file (by its id) is a product: it goes on the game's tab, as the tab's buttons put it."""
    try:
        tab, product = hub.reads.till.game_tab(game_id), hub.reads.till.product_of_extra(extra)
        hub.execute(AddTabItem(tab=tab, product=product.id, quantity=quantity, actor=user.username))
    except ServiceError as e:
        flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
        return RedirectResponse(safe_next(next), status_code=303)
    flash(request, gettext("Put on the tab."), "ok")
    return RedirectResponse(safe_next(next) if next else "/", status_code=303)


@router.get("/{game_id}/bill")
def bill(game_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can_read_money("games.run"))]) -> Response:
    game = reads.floor.game(game_id)  # NotFound → the 404 page
    # The game's bill is a part of its tab (drinks, merged tabs): the page leads on to paying it.
    tab_id = reads.till.tab_of_game(game_id)
    tab = reads.till.tab_payments(tab_id) if tab_id is not None else None
    return render(request, "bill.html", {"s": game, "venue": reads.venue, "tab": tab})
