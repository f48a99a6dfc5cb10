"""Paying a tab (/tabs/{id}/pay), giving a payment back (a manager's), and the receipt (/receipts/{id}).

The bartender's fastest path: the amount owed big, a method button, the amount already filled in
(or a split part picked), for cash what the customer handed over (quick buttons; the change shown
live by pay.js and again on the receipt), one "Zaplatiť". After paying, the receipt opens and
prints. Each form carries a one-time key (`request_id`): a double tap or a form sent again finds
the payment already made, so money is never taken twice.

Writes go through the facade (HubFacade.pay / reverse_payment / print_receipt), the same methods the
API routes call. A refused payment shows the reason in place, with what was typed kept.
"""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.euros import parse_euros
from broker.domain.refusals import Refusal
from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.hall.read_models import HallReads
from broker.hall.till.payment_reads import TabPayView
from broker.hall.till.payments import PayTab, ReversePayment
from dashboard.access import allows
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.web.auth import page_can, page_can_read_money
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.request_text import refusal, translated
from dashboard.web.templating import flash, render

router = APIRouter()

QUICK_NOTES = (500, 1000, 2000, 5000)  # the quick "Prijaté" buttons: 5, 10, 20, 50 €
Short = Annotated[str, Form(max_length=40)]


def new_request_id() -> str:
    return secrets.token_urlsafe(18)


def plain_euros(cents: int) -> str:
    """12,50: what the amount field is filled with (no sign: the field says €)."""
    return f"{cents // 100},{cents % 100:02d}" if cents > 0 else ""


def _tab(reads: HallReads, tab_id: int) -> TabPayView:
    v = reads.tab_payments(tab_id)
    if v is None:
        raise NotFound(N_("There is no such bill; it may have been merged or the page is old."))
    return v


def _pay_page(
    request: Request, reads: HallReads, tab_id: int, *, form: dict[str, Any] | None = None, error: str | None = None, status: int = 200
) -> Response:
    tab = _tab(reads, tab_id)
    open_parts = [p for p in tab.parts if p.owed_cents > 0]
    part = open_parts[0].n if open_parts and tab.owed_cents > 0 else None
    due = min(open_parts[0].owed_cents, tab.owed_cents) if part is not None else tab.owed_cents
    methods = reads.venue.till.payment_methods
    defaults = {
        "method": next((m.id for m in methods if m.cash), methods[0].id),
        "amount": plain_euros(due),
        "tendered": "",
        "part": str(part) if part is not None else "",
        "request_id": new_request_id(),
    }
    form = {**defaults, **(form or {})}
    amount_cents = parse_euros(str(form["amount"])) or due
    return render(
        request,
        "pay.html",
        {
            "tab": tab,
            "amount_cents": amount_cents,
            "cash_due": tab.cash_due(amount_cents),  # what the amount is in cash (the page's JS follows what is typed)
            "methods": methods,
            "quick_notes": QUICK_NOTES,
            "form": form,
            "form_error": error,
            "merged_into": reads.tab_payments(tab.merged_into) if tab.merged_into else None,
            "can_reverse": allows(request.state.user.role, "payments.reverse"),
        },
        status=status,
    )


@router.get("/tabs/{tab_id}/pay")
def pay_page(
    tab_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can_read_money("payments.take"))]
) -> Response:
    return _pay_page(request, reads, tab_id)


@router.post("/tabs/{tab_id}/pay", dependencies=[Depends(verify_csrf)])
def pay(
    tab_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("payments.take"))],
    method: Short = "",
    amount: Short = "",
    tendered: Short = "",
    part: Short = "",
    request_id: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    form = {"method": method, "amount": amount, "tendered": tendered, "part": part, "request_id": request_id or new_request_id()}
    cents = parse_euros(amount)
    if cents is None:
        message = translated(request, N_("Give the amount in euros, e.g. 12,50 (more than 0, at most cents)."))
        return _pay_page(request, hub.reads, tab_id, form=form, error=message, status=400)
    tendered_cents: int | None = None
    m = hub.reads.venue.till.method(method)
    if tendered.strip() and m is not None and m.cash:
        tendered_cents = parse_euros(tendered)
        if tendered_cents is None:
            message = translated(request, N_("Give the received cash in euros, e.g. 20 or 20,00."))
            return _pay_page(request, hub.reads, tab_id, form=form, error=message, status=400)
    part_no: int | None = None
    if part.strip():
        if not part.strip().isdigit() or not 1 <= int(part) <= 100:
            return _pay_page(
                request, hub.reads, tab_id, form=form, error=translated(request, N_("Choose a part of the bill from the list.")), status=400
            )
        part_no = int(part)
    try:
        taken = hub.execute(
            PayTab(
                tab=tab_id,
                method=method,
                amount_cents=cents,
                tendered_cents=tendered_cents,
                part=part_no,
                request_id=request_id or None,
                actor=user.username,
            )
        )
    except NotFound as e:
        if hub.reads.tab_payments(tab_id) is None:
            raise
        return _pay_page(request, hub.reads, tab_id, form=form, error=refusal(request, e), status=404)
    except ServiceError as e:
        return _pay_page(request, hub.reads, tab_id, form=form, error=refusal(request, e), status=409)
    if taken.repeated:
        flash(request, gettext("This payment was already taken; here is its receipt (no second payment was made)."), "info")
        return RedirectResponse(f"/receipts/{taken.payment_id}", status_code=303)
    flash(request, gettext("Paid."), "ok")
    return RedirectResponse(f"/receipts/{taken.payment_id}{_printed(request, hub, taken.payment_id)}", status_code=303)


def _printed(request: Request, hub: HubFacade, payment_id: int) -> str:
    """After the commit, on this request's thread (never the writer's): the receipt to the thermal
    printer when the hall has one, else (or when it does not answer) the browser's print dialog."""
    if not hub.reads.venue.till.printer:
        return "?print=1"
    try:
        hub.print_receipt(payment_id)
    except Refusal as e:
        flash(request, refusal(request, e), "error")
        return "?print=1"
    return ""


@router.post("/payments/{payment_id}/reverse", dependencies=[Depends(verify_csrf)])
def reverse(
    payment_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("payments.reverse"))],
    reason: Annotated[str, Form(max_length=1000)] = "",
    request_id: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    p = hub.reads.payment(payment_id)
    if p is None:
        raise NotFound(N_("There is no such payment."))
    try:
        taken = hub.execute(ReversePayment(payment=payment_id, reason=reason, request_id=request_id or None, actor=user.username))
    except ServiceError as e:
        form = {"reverse": payment_id, "reason": reason}
        return _pay_page(request, hub.reads, p.tab_id, form=form, error=refusal(request, e), status=409)
    flash(request, gettext("Payment given back; the tab is open again for that amount."), "ok")
    return RedirectResponse(f"/receipts/{taken.payment_id}?print=1", status_code=303)


@router.get("/receipts/{payment_id}")
def receipt_page(
    payment_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can_read_money("payments.take"))]
) -> Response:
    r = reads.receipt_of(payment_id)
    if r is None:
        raise NotFound(N_("There is no such payment."))
    return render(request, "receipt.html", {"r": r, "printer": bool(reads.venue.till.printer)})


@router.post("/receipts/{payment_id}/print", dependencies=[Depends(verify_csrf)])
def print_receipt(payment_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("payments.take"))]) -> Response:
    try:
        hub.print_receipt(payment_id)
    except NotFound:
        raise
    except Refusal as e:
        flash(request, refusal(request, e), "error")
    else:
        flash(request, gettext("Sent to the receipt printer."), "ok")
    return RedirectResponse(f"/receipts/{payment_id}", status_code=303)
