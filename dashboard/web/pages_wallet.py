"""Members' money on the staff pages (broker.wallet): a member's credit, packages and history with the
forms that change them (/wallet/{member}), finding a member (/wallet), and paying a bill from them
from the pay page ("Z kreditu", "Z balíka": /tabs/{id}/pay/credit, /tabs/{id}/pay/package).

Each form carries a one-time key (`request_id`): a double tap finds the row already made. A refused
form is drawn again with the reason next to it, in the visitor's language, and what was typed kept;
nothing changes. Giving money back and undoing a row are the manager's (dashboard.access).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.core.commands import Command
from broker.domain.euros import parse_euros
from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.hall.read_models import HallReads
from broker.wallet.reads import WalletView
from broker.wallet.wallet import PayFromCredit, PayFromPackage, RefundCredit, ReverseWalletEntry, SellPackage, TopUpCredit, UseLesson
from dashboard.access import allows
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.quick_pay import new_request_id
from dashboard.web.request_text import refusal, translated
from dashboard.web.templating import NavLink, flash, render

router = APIRouter()
NAV = [NavLink("/wallet", N_("Credit"), role="manager", order=62)]
CSRF = [Depends(verify_csrf)]
Short = Annotated[str, Form(max_length=64)]
Reason = Annotated[str, Form(max_length=200)]
ENTRY_KINDS = {
    "topup": N_("top-up"),
    "use": N_("use"),
    "expiry": N_("lapsed"),
    "refund": N_("credit given back"),
    "reversal": N_("reversal"),
    "sale": N_("package sold"),
}


def _wallet(reads: HallReads, member_id: int) -> WalletView:
    v = reads.wallet.member(member_id)
    if v is None:
        raise NotFound(N_("There is no such member."))
    return v


def _page(
    request: Request, reads: HallReads, member_id: int, *, errors: dict[str, str] | None = None, form: dict[str, Any] | None = None
) -> Response:
    w = _wallet(reads, member_id)
    role = request.state.user.role
    return render(
        request,
        "wallet.html",
        {
            "w": w,
            "methods": reads.venue.till.payment_methods,
            "kinds": ENTRY_KINDS,
            "errors": errors or {},
            "form": form or {},
            "request_id": new_request_id(),
            "can_refund": allows(role, "wallet.refund"),
            "can_members": allows(role, "members.read"),
        },
        status=400 if errors else 200,
    )


def _cents(request: Request, text: str) -> int | None:
    return parse_euros(text)


def _done(request: Request, member_id: int, message: str) -> Response:
    flash(request, message, "ok")
    return RedirectResponse(f"/wallet/{member_id}", status_code=303)


AMOUNT_HELP = N_("Give the amount in euros, e.g. 12,50 (more than 0, at most cents).")


def _carry_out(
    request: Request, hub: HubFacade, member_id: int, key: str, form: dict[str, Any], command: Command[Any] | None, done: str
) -> Response:
    """One wallet form: its command (None: the amount typed did not parse), refused on the member's
    wallet page under the form's `key` with what was typed, or done: back there, `done` said."""
    if command is None:
        return _page(request, hub.reads, member_id, errors={key: translated(request, AMOUNT_HELP)}, form=form)
    try:
        hub.execute(command)
    except (ServiceError, NotFound) as e:
        return _page(request, hub.reads, member_id, errors={key: refusal(request, e)}, form=form)
    return _done(request, member_id, gettext(done))


@router.get("/wallet")
def find_page(
    request: Request,
    reads: Reads,
    user: Annotated[Staff, Depends(page_can("wallet.run"))],
    q: Annotated[str, Query(max_length=100)] = "",
) -> Response:
    found = reads.people.search_members(q, 30) if q.strip() else []
    return render(request, "wallet_find.html", {"q": q, "found": found, "holders": reads.wallet.with_credit()})


@router.get("/wallet/{member_id}")
def wallet_page(member_id: IdPath, request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("wallet.run"))]) -> Response:
    return _page(request, reads, member_id)


@router.post("/wallet/{member_id}/top-up", dependencies=CSRF)
def top_up(
    member_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("wallet.run"))],
    amount: Short = "",
    method: Short = "",
    request_id: Short = "",
) -> Response:
    cents = _cents(request, amount)
    command = (
        None
        if cents is None
        else TopUpCredit(member_id=member_id, amount_cents=cents, method=method, request_id=request_id or None, actor=user.username)
    )
    return _carry_out(request, hub, member_id, "top-up", {"amount": amount, "method": method}, command, N_("Credit topped up."))


@router.post("/wallet/{member_id}/package", dependencies=CSRF)
def sell_package(
    member_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("wallet.run"))],
    kind: Short = "",
    quantity: Short = "",
    price: Short = "",
    method: Short = "",
    request_id: Short = "",
) -> Response:
    form = {"kind": kind, "quantity": quantity, "price": price, "method": method}
    cents = _cents(request, price)
    count: object = int(quantity) if quantity.strip().isdigit() and len(quantity.strip()) <= 4 else quantity
    command = (
        None
        if cents is None
        else SellPackage(
            member_id=member_id,
            kind=kind,
            quantity=count,
            price_cents=cents,
            method=method,
            request_id=request_id or None,
            actor=user.username,
        )
    )
    return _carry_out(request, hub, member_id, "package", form, command, N_("Package sold."))


@router.post("/wallet/{member_id}/refund", dependencies=CSRF)
def refund(
    member_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("wallet.refund"))],
    amount: Short = "",
    method: Short = "",
    reason: Reason = "",
    request_id: Short = "",
) -> Response:
    form = {"refund_amount": amount, "refund_method": method, "reason": reason}
    cents = _cents(request, amount)
    command = (
        None
        if cents is None
        else RefundCredit(
            member_id=member_id, amount_cents=cents, method=method, reason=reason, request_id=request_id or None, actor=user.username
        )
    )
    return _carry_out(request, hub, member_id, "refund", form, command, N_("Credit given back."))


@router.post("/wallet/{member_id}/entries/{entry_id}/reverse", dependencies=CSRF)
def reverse(
    member_id: IdPath,
    entry_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("wallet.refund"))],
    reason: Reason = "",
    request_id: Short = "",
) -> Response:
    command = ReverseWalletEntry(entry=entry_id, reason=reason, request_id=request_id or None, actor=user.username)
    return _carry_out(request, hub, member_id, f"entry-{entry_id}", {"reverse": entry_id, "reason": reason}, command, N_("Reversed."))


@router.post("/wallet/{member_id}/packages/{package_id}/lesson", dependencies=CSRF)
def lesson(
    member_id: IdPath,
    package_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("wallet.run"))],
    request_id: Short = "",
) -> Response:
    command = UseLesson(package_id=package_id, request_id=request_id or None, actor=user.username)
    return _carry_out(request, hub, member_id, f"package-{package_id}", {}, command, N_("Lesson taken."))


# -- paying a bill from them (the pay page's buttons) -----------------------------------------


def _back_to_pay(request: Request, tab_id: int, error: str) -> Response:
    flash(request, error, "error")
    return RedirectResponse(f"/tabs/{tab_id}/pay", status_code=303)


@router.post("/tabs/{tab_id}/pay/credit", dependencies=CSRF)
def pay_from_credit(
    tab_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("wallet.run"))],
    member_id: Short = "",
    amount: Short = "",
    expect: Short = "",
    request_id: Short = "",
) -> Response:
    cents = _cents(request, amount)
    member = int(member_id) if member_id.isdigit() and len(member_id) <= 9 else None
    if cents is None or member is None:
        return _back_to_pay(request, tab_id, translated(request, N_("Choose the member and the amount again.")))
    expected = int(expect) if expect.isdigit() and len(expect) <= 12 else None
    try:
        done = hub.execute(
            PayFromCredit(
                tab=tab_id,
                member_id=member,
                amount_cents=cents,
                expect_owed_cents=expected,
                request_id=request_id or None,
                actor=user.username,
            )
        )
    except (ServiceError, NotFound) as e:
        return _back_to_pay(request, tab_id, refusal(request, e))
    return _paid(request, hub.reads, tab_id, done.payment_id)


@router.post("/tabs/{tab_id}/pay/package", dependencies=CSRF)
def pay_from_package(
    tab_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("wallet.run"))],
    package_id: Short = "",
    request_id: Short = "",
) -> Response:
    package = int(package_id) if package_id.isdigit() and len(package_id) <= 9 else None
    if package is None:
        return _back_to_pay(request, tab_id, translated(request, N_("Choose the member and the amount again.")))
    try:
        done = hub.execute(PayFromPackage(tab=tab_id, package_id=package, request_id=request_id or None, actor=user.username))
    except (ServiceError, NotFound) as e:
        return _back_to_pay(request, tab_id, refusal(request, e))
    return _paid(request, hub.reads, tab_id, done.payment_id)


def _paid(request: Request, reads: HallReads, tab_id: int, payment_id: int | None) -> Response:
    """Paid in full: its receipt; else back to the bill, what is left to pay by another method."""
    tab = reads.till.tab_payments(tab_id)
    if tab is not None and tab.owed_cents > 0:
        flash(request, gettext("Paid in part; pay the rest another way."), "ok")
        return RedirectResponse(f"/tabs/{tab_id}/pay", status_code=303)
    flash(request, gettext("Paid."), "ok")
    return RedirectResponse(f"/receipts/{payment_id}" if payment_id else f"/tabs/{tab_id}/pay", status_code=303)
