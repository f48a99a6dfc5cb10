"""Payments, reversals and receipts: the JSON side of the payment page (the same facade methods).

Amounts are integer cents. A POST with a `request_id` (a client's one-time key for the attempt)
is safe to resend: the answer is the payment already made (`repeated: true`), never a second one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Depends, Response
from pydantic import Field

from broker.accounts.staff import Staff
from broker.domain.refusals import N_
from broker.domain.till.receipt import Receipt
from broker.hall.facade import NotFound
from broker.hall.read_models import HallReads
from broker.till.payment_reads import PaymentView, TabPayView
from broker.till.payments import PayTab, ReversePayment, Taken
from dashboard.api import responses as R
from dashboard.api.auth import can, can_read_money
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(tags=["payments"])

RequestId = Annotated[str, Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="A one-time key of this attempt")]


class PayIn(Body):
    method: Annotated[str, text(32)]
    amount_cents: int = Field(
        description="What counts against the bill, in cents (> 0, at most what is owed); in cash, the owed amount rounded (cash_owed_cents) pays it all"
    )
    tendered_cents: int | None = Field(
        None, description="Cash only: what the customer handed over (change = tendered - amount - rounding_cents)"
    )
    part: int | None = Field(None, ge=1, le=100, description="The split part paid (1-based)")
    request_id: RequestId | None = None


class ReverseIn(Body):
    reason: Annotated[str, text(200)]
    request_id: RequestId | None = None


def _tab(reads: HallReads, tab_id: int) -> TabPayView:
    v = reads.till.tab_payments(tab_id)
    if v is None:
        raise NotFound(N_("There is no such bill; it may have been merged or the page is old."))
    return v


def _taken(reads: HallReads, taken: Taken, response: Response) -> PaymentView:
    p = reads.till.payment(taken.payment_id)
    assert p is not None
    if taken.repeated:  # 200, not 201: the payment the first attempt made, nothing new
        response.status_code = 200
        return replace(p, repeated=True)
    return p


@router.get("/tabs/{tab_id}/payments", response_model=TabPayView, summary="What a tab owes, its split parts and its payments")
def tab_payments(tab_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> TabPayView:
    return _tab(reads, tab_id)


@router.post(
    "/tabs/{tab_id}/payments",
    status_code=201,
    response_model=PaymentView,
    summary="Take a payment (201); a resent request_id answers the payment already made (200, repeated)",
)
def pay(tab_id: IdPath, body: PayIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("payments.take"))]) -> PaymentView:
    taken = hub.execute(body.to(PayTab, tab=tab_id, actor=user.username))
    return _taken(hub.reads, taken, response)


@router.get("/payments/{payment_id}", response_model=PaymentView, summary="One payment or reversal")
def get_payment(payment_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> PaymentView:
    p = reads.till.payment(payment_id)
    if p is None:
        raise NotFound(N_("There is no such payment."))
    return p


@router.post(
    "/payments/{payment_id}/reverse", status_code=201, response_model=PaymentView, summary="Give a payment back, with a reason (manager)"
)
def reverse(
    payment_id: IdPath, body: ReverseIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("payments.reverse"))]
) -> PaymentView:
    taken = hub.execute(body.to(ReversePayment, payment=payment_id, actor=user.username))
    return _taken(hub.reads, taken, response)


@router.get("/payments/{payment_id}/receipt", response_model=Receipt, summary="The receipt of a payment (its frozen lines)")
def receipt(payment_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> Receipt:
    r = reads.till.receipt_of(payment_id)
    if r is None:
        raise NotFound(N_("There is no such payment."))
    return r


@router.post(
    "/payments/{payment_id}/print", response_model=R.PrintedOut, summary="Print the receipt on the ESC/POS printer ([till] printer)"
)
def print_receipt(payment_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> R.PrintedOut:
    hub.print_receipt(payment_id)
    return R.PrintedOut(printed=True)
