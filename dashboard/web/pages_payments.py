"""Paying a tab (/tabs/{id}/pay), giving a payment back (a manager's), and the receipt (/receipts/{id}).

The bartender's fastest path (stopping a game lands here): what the guest owes, biggest on the
page, and one tap to pay it: "Hotovosť" or "Karta" for the exact amount, or the note the guest
hands over, the change written on it (dashboard.web.quick_pay). A split bill has those buttons per
part; a paid part says so and has none. Another amount, a typed cash amount or another method is
the full form below it (the change shown live by pay.js and again on the receipt). After paying,
the receipt opens and prints. Each form carries a one-time key (`request_id`): a double tap or a
form sent again finds the payment already made, so money is never taken twice.

Writes go through the facade (HubFacade.pay / reverse_payment / print_receipt), the same methods the
API routes call. A refused payment shows the reason in place, with what was typed kept.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.euros import parse_euros
from broker.domain.refusals import Refusal
from broker.domain.till.payment_rules import PaymentRefused
from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.hall.read_models import HallReads
from broker.till.payment_reads import TabPayView
from broker.till.payments import PayTab, ReversePayment
from dashboard.access import allows
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.web.auth import page_can, page_can_read_money
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.quick_pay import QuickPay, new_request_id, plain_euros, quick_pay
from dashboard.web.request_text import refusal, translated
from dashboard.web.templating import flash, render

router = APIRouter()

QUICK_NOTES = (500, 1000, 2000, 5000)  # the full form's "Prijaté" buttons (fill the field): 5, 10, 20, 50 €
Short = Annotated[str, Form(max_length=40)]
MAX_PART = 100


def _tab(reads: HallReads, tab_id: int) -> TabPayView:
    v = reads.till.tab_payments(tab_id)
    if v is None:
        raise NotFound(N_("There is no such bill; it may have been merged or the page is old."))
    return v


def quick_buttons(tab: TabPayView) -> tuple[QuickPay | None, list[QuickPay]]:
    """The one-tap buttons: for the whole bill, or per split part still owing (a paid part has none);
    none while a game on the bill still runs (it grows every minute: an amount is typed on purpose)."""
    if not tab.closed or tab.merged_into is not None or tab.owed_cents <= 0:
        return None, []
    if not tab.parts:
        return quick_pay(tab.tab_id, tab.owed_cents, cash_cents=tab.cash_due(tab.owed_cents)), []
    dues = [(p.n, min(p.owed_cents, tab.owed_cents)) for p in tab.parts if p.owed_cents > 0]
    return None, [quick_pay(tab.tab_id, due, n, cash_cents=tab.cash_due(due)) for n, due in dues]


def wallet_buttons(reads: HallReads, tab: TabPayView) -> dict[str, Any]:
    """What the pay page offers from members' money (broker.wallet): the bill's member's credit
    ("Z kreditu": one tap for the whole bill when it covers it, else what it has, the rest another
    way) and hours packages ("Z balíka"); and any member's credit for a bill without one."""
    if not tab.closed or tab.merged_into is not None or tab.owed_cents <= 0 or tab.parts:
        return {}
    own = reads.wallet.for_tab(tab.tab_id)
    credit = min(own.balance_cents, tab.owed_cents) if own is not None else 0
    others = [m for m in reads.wallet.with_credit() if m.balance_cents > 0 and (own is None or m.member_id != own.member_id)]
    return {
        "wallet": own,
        "credit_cents": credit,
        "credit_amount": plain_euros(credit) if credit else "",
        "credit_request_id": new_request_id(),
        "credit_others": others,
        "owed_amount": plain_euros(tab.owed_cents),
    }


def _pay_page(
    request: Request,
    reads: HallReads,
    tab_id: int,
    *,
    form: dict[str, Any] | None = None,
    error: str | None = None,
    status: int = 200,
    asked_part: int | None = None,
) -> Response:
    tab = _tab(reads, tab_id)
    open_parts = {p.n: p for p in tab.parts if p.owed_cents > 0}
    notice = None
    if asked_part is not None and tab.parts and asked_part not in open_parts:
        # "Zaplatiť časť 1" from an older page: say that part is paid (or is none), never pick another one.
        asked = any(p.n == asked_part for p in tab.parts)
        why = (
            PaymentRefused(N_("Part %(part)d of %(tab)s is paid already; choose a part still to pay."), part=asked_part, tab=tab.name)
            if asked
            else PaymentRefused(N_("%(what)s has no part %(part)d."), what=tab.name, part=asked_part)
        )
        notice = refusal(request, why)
        part = None
    elif asked_part is not None and asked_part in open_parts:
        part = asked_part
    else:
        part = next(iter(open_parts), None) if tab.owed_cents > 0 else None
    due = min(open_parts[part].owed_cents, tab.owed_cents) if part is not None else (0 if tab.parts else tab.owed_cents)
    # The headline is what is being paid: the part asked for ("Zaplatiť časť 2", or a refused
    # form for it drawn again), else the whole bill.
    paying = asked_part if asked_part is not None else _part_no((form or {}).get("part"))
    headline = open_parts.get(paying) if paying is not None else None
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
    whole, parts = quick_buttons(tab)
    can_wallet = allows(request.state.user.role, "wallet.run")
    return render(
        request,
        "pay.html",
        {
            "tab": tab,
            "amount_cents": amount_cents,
            "cash_due": tab.cash_due(amount_cents),  # what the amount is in cash (the page's JS follows what is typed)
            "methods": methods,
            "quick_notes": QUICK_NOTES,
            "quick": whole,
            "quick_parts": {q.part: q for q in parts},
            "asked_part": part,
            "headline_part": headline.n if headline is not None else None,
            "headline_cents": min(headline.owed_cents, tab.owed_cents) if headline is not None else tab.owed_cents,
            "notice": notice,
            "form": form,
            "form_error": error,
            "merged_into": reads.till.tab_payments(tab.merged_into) if tab.merged_into else None,
            "can_reverse": allows(request.state.user.role, "payments.reverse"),
            **(wallet_buttons(reads, tab) if can_wallet else {}),
        },
        status=status,
    )


def _part_no(text: object) -> int | None:
    return int(text) if isinstance(text, str) and text.strip().isdigit() and len(text.strip()) <= 3 else None


@router.get("/tabs/{tab_id}/pay")
def pay_page(
    tab_id: IdPath,
    request: Request,
    reads: Reads,
    user: Annotated[Staff, Depends(page_can_read_money("payments.take"))],
    part: Annotated[int | None, Query(ge=1, le=MAX_PART)] = None,
) -> Response:
    return _pay_page(request, reads, tab_id, asked_part=part)


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
    expect: Short = "",
) -> Response:
    form = {"method": method, "amount": amount, "tendered": tendered, "part": part, "request_id": request_id or new_request_id()}
    expected = int(expect) if expect.isdigit() and len(expect) <= 12 else None  # a one-tap button's amount, as shown
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
        if not part.strip().isdigit() or not 1 <= int(part) <= MAX_PART:
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
                expect_owed_cents=expected,
                actor=user.username,
            )
        )
    except NotFound as e:
        if hub.reads.till.tab_payments(tab_id) is None:
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
    p = hub.reads.till.payment(payment_id)
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
    r = reads.till.receipt_of(payment_id)
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
