"""The tab page (/tabs/{id}): a bill's lines, VAT per rate, paid and owed; putting products on it
(most sold first, a search), voiding an item with a reason, merging another tab onto it, splitting
it into parts; and a sale at the bar (POST /tabs: a walk-in tab, named or "Bar 18:42"). A stopped
game's tab or a sale at the bar is paid from here in one tap (dashboard.web.quick_pay): "Predaj na
bar", the product, "Hotovosť" are three taps. The full payment form is /tabs/{id}/pay.

Every action is the facade method the API calls (dashboard/api/tabs.py). A refused form draws the
page again with the reason in place and what was typed kept (status 409/400); a done one
redirects (303) with a message. Double taps: every add form carries a one-time `form_key` made
when the page was drawn; the hub's writer answers a repeat with the item it already made.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from broker.accounts.staff import Staff
from broker.domain.cash_rounding import cash_due
from broker.domain.euros import parse_euros
from broker.domain.refusals import Refusal
from broker.domain.till.split import MAX_PARTS
from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.hall.read_models import HallReads
from broker.till.tab_views import TabView
from broker.till.tabs import (
    MAX_LABEL,
    MAX_QUANTITY,
    REASON_MAX,
    AddTabItem,
    CancelSplit,
    MergeTabs,
    OpenWalkInTab,
    SplitTab,
    VoidTabItem,
)
from dashboard.access import allows
from dashboard.api.deps import MAX_ID, Hub, IdPath, Reads
from dashboard.web.auth import page_can, page_can_read_money
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, current_lang, gettext
from dashboard.web.quick_pay import quick_pay
from dashboard.web.request_text import refusal, translated
from dashboard.web.tab_parts import product_grid, status_word
from dashboard.web.table_page import speaking
from dashboard.web.templating import flash, render

router = APIRouter()

FormKey = Annotated[str, Form(max_length=64, pattern=r"^[A-Za-z0-9_-]*$")]
Reason = Annotated[str, Form(max_length=REASON_MAX + 50)]
SAFE_NEXT = ("/tables/", "/tabs/", "/bills")


def _next(path: str, fallback: str) -> str:
    return path if path.startswith(SAFE_NEXT) and "//" not in path and "\\" not in path else fallback


def _page(request: Request, reads: HallReads, user: Staff, tab: TabView, status: int = 200, **extra: Any) -> Response:
    others = [u for u in reads.till.mergeable_tabs() if u.id != tab.id and u.id not in {s.tab_id for s in tab.sources}]
    # One tap pays a sale at the bar or a stopped game's tab; a split one is paid part by part.
    payable = tab.merged_into is None and not tab.split and not tab.game_running and tab.owed_cents > 0
    pay_view = reads.till.tab_payments(tab.id) if tab.split else None
    in_cash = cash_due(tab.owed_cents, reads.venue.till.cash_rounding)
    return render(
        request,
        "tab.html",
        {
            "tab": tab,
            **product_grid(reads, tab),
            "merge_candidates": others,
            "quick": quick_pay(tab.id, tab.owed_cents, cash_cents=in_cash) if payable else None,
            "methods": reads.venue.till.payment_methods,
            "part_owed": {part.n: part.owed_cents for part in pay_view.parts} if pay_view else {},
            "status_word": status_word,
            "can_void_paid": allows(user.role, "tabs.void_paid"),
            "max_parts": MAX_PARTS,
            "max_quantity": MAX_QUANTITY,
            "form": {},
            "form_error": None,
            **extra,
        },
        status=status,
    )


def _again(request: Request, hub: HubFacade, user: Staff, tab_id: int, error: Refusal | str, form: dict[str, Any], status: int) -> Response:
    message = refusal(request, error) if isinstance(error, Refusal) else error
    return _page(request, hub.reads, user, hub.reads.till.tab(tab_id), status, form=form, form_error=message)


@router.get("/tabs/{tab_id}")
def tab_page(tab_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can_read_money("tabs.run"))]) -> Response:
    return _page(request, reads, user, reads.till.tab(tab_id))


@router.get("/sessions/{game_id}/tab")
def game_tab(game_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can_read_money("tabs.run"))]) -> Response:
    """A game's tab (the bills list links it by the game)."""
    tab_id = reads.till.tab_of_game(game_id)
    if tab_id is None:
        raise NotFound(N_("That game has no tab."))
    return _page(request, reads, user, reads.till.tab(tab_id))


@router.post("/tabs", dependencies=[Depends(verify_csrf)])
def open_walk_in(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tabs.run"))],
    label: Annotated[str, Form(max_length=MAX_LABEL + 40)] = "",
    form_key: FormKey = "",
) -> Response:
    with speaking(request):
        try:
            tab_id = hub.execute(OpenWalkInTab(label=label, form_key=form_key or None, actor=user.username))
        except ServiceError as e:
            flash(request, gettext("Not done: %(reason)s") % {"reason": refusal(request, e)}, "error")
            return RedirectResponse("/bills", status_code=303)
        if label.strip():  # a sale at the bar without a name: its page's title says "Bar 18:42", no message pushes it down
            flash(request, gettext("Tab opened: %(name)s") % {"name": " ".join(label.split())[:MAX_LABEL]}, "ok")
    return RedirectResponse(f"/tabs/{tab_id}", status_code=303)


@router.post("/tabs/{tab_id}/items", dependencies=[Depends(verify_csrf)])
def add_item(
    tab_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tabs.run"))],
    product_id: Annotated[str, Form(max_length=20)] = "",
    quantity: Annotated[str, Form(max_length=20)] = "1",
    form_key: FormKey = "",
    next: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    back = _next(next, f"/tabs/{tab_id}")
    form = {"kind": "add", "product_id": product_id, "quantity": quantity}
    with speaking(request):
        pid = _whole(product_id, MAX_ID)
        qty = _whole(quantity, 10**9)
        if pid is None:
            return _refused_back(request, hub, user, tab_id, back, gettext("Choose a product."), form)
        if qty is None or not 1 <= qty <= MAX_QUANTITY:
            text = translated(request, N_("The quantity is a whole number from 1 to %(max)d."), max=MAX_QUANTITY)
            return _refused_back(request, hub, user, tab_id, back, text, form)
        try:
            hub.execute(AddTabItem(tab=tab_id, product=pid, quantity=qty, form_key=form_key or None, actor=user.username))
        except NotFound:
            raise
        except ServiceError as e:
            return _refused_back(request, hub, user, tab_id, back, e, form)
        name = next_name(hub.reads, pid)
        flash(request, gettext("Added: %(quantity)d × %(product)s") % {"quantity": qty, "product": name}, "ok")
    return RedirectResponse(back, status_code=303)


def next_name(reads: HallReads, product_id: int) -> str:
    """The product's name in the visitor's language (for the "added" message)."""
    for p in reads.till.products():
        if p.id == product_id:
            return (p.name_en or p.name) if current_lang() == "en" else p.name
    return ""


def _refused_back(
    request: Request, hub: HubFacade, user: Staff, tab_id: int, back: str, error: Refusal | str, form: dict[str, Any]
) -> Response:
    """On the tab page: the page again with the reason in place; from the table page: back there with the reason."""
    if back.startswith("/tabs/"):
        status = 400 if isinstance(error, str) else 409
        return _again(request, hub, user, tab_id, error, form, status)
    text = refusal(request, error) if isinstance(error, Refusal) else error
    flash(request, gettext("Not done: %(reason)s") % {"reason": text}, "error")
    return RedirectResponse(back, status_code=303)


def _whole(text: str, limit: int) -> int | None:
    t = text.strip()
    if not t.isdigit() or len(t) > 12:
        return None
    n = int(t)
    return n if 0 <= n <= limit else None


@router.post("/tabs/{tab_id}/items/{item_id}/void", dependencies=[Depends(verify_csrf)])
def void_item(
    tab_id: IdPath, item_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tabs.run"))], reason: Reason = ""
) -> Response:
    form = {"kind": "void", "item_id": item_id, "reason": reason}
    with speaking(request):
        try:
            hub.execute(
                VoidTabItem(tab=tab_id, item=item_id, reason=reason, may_void_paid=allows(user.role, "tabs.void_paid"), actor=user.username)
            )
        except ServiceError as e:
            return _again(request, hub, user, tab_id, e, form, 404 if isinstance(e, NotFound) else 409)
        flash(request, gettext("Item voided; the tab shows it struck through."), "ok")
    return RedirectResponse(f"/tabs/{tab_id}", status_code=303)


@router.post("/tabs/{tab_id}/merge", dependencies=[Depends(verify_csrf)])
def merge(
    tab_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tabs.run"))],
    other: Annotated[str, Form(max_length=20)] = "",
) -> Response:
    form = {"kind": "merge", "other": other}
    with speaking(request):
        other_id = _whole(other, MAX_ID)
        if not other_id:
            return _again(request, hub, user, tab_id, gettext("Choose the tab to put onto this one."), form, 400)
        try:
            hub.execute(MergeTabs(into=tab_id, from_tab=other_id, actor=user.username))
        except ServiceError as e:
            return _again(request, hub, user, tab_id, e, form, 404 if isinstance(e, NotFound) else 409)
        flash(request, gettext("Tabs merged: one bill now."), "ok")
    return RedirectResponse(f"/tabs/{tab_id}", status_code=303)


def _amounts(text: str) -> list[int] | None:
    """'5,00; 7,40' or '5 7.40' → cents; None when a part is not an amount of euros and cents."""
    out = [parse_euros(piece) for piece in text.replace(";", " ").replace("\n", " ").split()]
    return [c for c in out if c is not None] if out and None not in out else None


@router.post("/tabs/{tab_id}/split", dependencies=[Depends(verify_csrf)])
async def split(tab_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tabs.run"))]) -> Response:
    # The items form has one field per bill line ("part-<line key>"), so the form is read whole here.
    data = await request.form()
    return await _run_split(request, hub, user, tab_id, {k: str(v)[:200] for k, v in list(data.items())[:600]})


async def _run_split(request: Request, hub: HubFacade, user: Staff, tab_id: int, data: dict[str, str]) -> Response:
    return await run_in_threadpool(_split_sync, request, hub, user, tab_id, data)  # the hub's writer is waited for off the event loop


def _split_sync(request: Request, hub: HubFacade, user: Staff, tab_id: int, data: dict[str, str]) -> Response:
    mode = data.get("mode", "")
    form = {"kind": "split", **data}
    with speaking(request):
        try:
            if mode == "equal":
                parts = _whole(data.get("parts", ""), MAX_PARTS)
                if parts is None or parts < 2:
                    return _again(
                        request,
                        hub,
                        user,
                        tab_id,
                        translated(request, N_("A bill is split into 2 to %(max)d parts."), max=MAX_PARTS),
                        form,
                        400,
                    )
                hub.execute(SplitTab(tab=tab_id, mode="equal", parts=parts, actor=user.username))
            elif mode == "amounts":
                amounts = _amounts(data.get("amounts", ""))
                if amounts is None:
                    text = gettext("Give each part in euros, separated by spaces or semicolons, e.g. 5,00; 7,40.")
                    return _again(request, hub, user, tab_id, text, form, 400)
                hub.execute(SplitTab(tab=tab_id, mode="amounts", amounts=tuple(amounts), actor=user.username))
            elif mode == "items":
                assignment = {}
                for key, value in data.items():
                    if key.startswith("part-"):
                        n = _whole(value, MAX_PARTS)
                        if n is None or n < 1:
                            return _again(request, hub, user, tab_id, gettext("Give every line a part number from 1."), form, 400)
                        assignment[key[5:]] = n
                hub.execute(SplitTab(tab=tab_id, mode="items", assignment=assignment, actor=user.username))
            else:
                return _again(request, hub, user, tab_id, gettext("Split equally, by items or by amounts."), form, 400)
        except ServiceError as e:
            return _again(request, hub, user, tab_id, e, form, 404 if isinstance(e, NotFound) else 409)
        flash(request, gettext("Bill split; each part is paid on its own."), "ok")
    return RedirectResponse(f"/tabs/{tab_id}", status_code=303)


@router.post("/tabs/{tab_id}/split/cancel", dependencies=[Depends(verify_csrf)])
def cancel_split(tab_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tabs.run"))]) -> Response:
    with speaking(request):
        try:
            hub.execute(CancelSplit(tab=tab_id, actor=user.username))
        except ServiceError as e:
            return _again(request, hub, user, tab_id, e, {"kind": "split"}, 404 if isinstance(e, NotFound) else 409)
        flash(request, gettext("The split is cancelled: one bill again."), "ok")
    return RedirectResponse(f"/tabs/{tab_id}", status_code=303)
