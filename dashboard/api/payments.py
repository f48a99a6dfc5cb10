"""Payments, reversals and receipts: the JSON side of the payment page (the same facade methods).

Amounts are integer cents. A POST with a `request_id` (a client's one-time key for the attempt)
is safe to resend: the answer is the payment already made (`repeated: true`), never a second one.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from broker.accounts.staff import Staff
from broker.domain.receipt import Receipt
from broker.domain.refusals import N_
from broker.hall.facade import NotFound
from broker.hall.read_models import HallReads
from broker.hall.till.payment_reads import PaymentView, TabPayView
from broker.hall.till.payments import PayTab, ReversePayment, Taken
from dashboard.api.auth import can, can_read_money
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(tags=["payments"])

RequestId = Annotated[str, Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="A one-time key of this attempt")]


class PayIn(Body):
    method: text(32)  # type: ignore[valid-type]
    amount_cents: int = Field(
        description="What counts against the bill, in cents (> 0, at most what is owed); in cash, the owed amount rounded (cash_owed_cents) pays it all"
    )
    tendered_cents: int | None = Field(
        None, description="Cash only: what the customer handed over (change = tendered - amount - rounding_cents)"
    )
    part: int | None = Field(None, ge=1, le=100, description="The split part paid (1-based)")
    request_id: RequestId | None = None


class ReverseIn(Body):
    reason: text(200)  # type: ignore[valid-type]
    request_id: RequestId | None = None


class PaymentOut(BaseModel):
    id: int
    tab_id: int
    part: int | None
    method: str
    method_name: str
    method_name_en: str
    amount_cents: int
    tendered_cents: int | None
    change_cents: int
    staff: str
    at: datetime
    business_day: date
    receipt_no: int | None
    reverses_id: int | None
    reverses_no: int | None
    reversed_by_no: int | None
    reason: str | None
    fiscal_state: str
    fiscal_id: str | None
    rounding_cents: int = Field(description="Cash rounding to 0,05 €: handed over beyond amount_cents (outside the bill and VAT)")
    repeated: bool = False


class PartOut(BaseModel):
    n: int
    amount_cents: int
    paid_cents: int
    owed_cents: int
    cash_owed_cents: int = Field(description="What owed_cents is in cash (rounded as the venue rounds cash)")


class VatOut(BaseModel):
    vat_percent: int
    gross_cents: int
    vat_cents: int
    net_cents: int


class TabPaymentsOut(BaseModel):
    tab_id: int
    name: str
    table: str | None
    session_id: int | None
    status: str
    total_cents: int
    paid_cents: int
    owed_cents: int
    closed: bool
    cash_rounding: int = Field(description="The venue's rounding of cash in cents: 5 (to 0,05 €) or 1 (none)")
    cash_owed_cents: int = Field(description="What owed_cents is in cash; by card it is owed_cents")
    vat: list[VatOut]
    parts: list[PartOut]
    payments: list[PaymentOut]
    settled_at: datetime | None


class ReceiptLineOut(BaseModel):
    description: str
    description_en: str
    quantity: int
    unit_cents: int | None
    amount_cents: int
    vat_percent: int
    category: str


class IssuerOut(BaseModel):
    name: str
    address: str
    ico: str
    dic: str
    ic_dph: str


class ReceiptOut(BaseModel):
    payment_id: int
    number: int
    issued_at: datetime
    staff: str
    issuer: IssuerOut
    missing_issuer: list[str]
    lines: list[ReceiptLineOut]
    vat: list[VatOut]
    total_cents: int
    rounding_cents: int = Field(description="Cash rounding, its own line outside the VAT base")
    paid_cents: int = Field(description="What changed hands: total_cents + rounding_cents")
    method: str
    method_name: str
    tendered_cents: int | None
    change_cents: int
    table_name: str | None
    reverses_number: int | None
    reason: str | None
    fiscal: bool
    fiscal_state: str
    fiscal_id: str | None


class PrintedOut(BaseModel):
    printed: bool


def payment_out(p: PaymentView, repeated: bool = False) -> dict[str, Any]:
    d = {k: getattr(p, k) for k in PaymentOut.model_fields if k != "repeated"}
    return {**d, "repeated": repeated}


def _vat(rows: Any) -> list[dict[str, int]]:
    return [{"vat_percent": v.vat_percent, "gross_cents": v.gross_cents, "vat_cents": v.vat_cents, "net_cents": v.net_cents} for v in rows]


def tab_out(v: TabPayView) -> dict[str, Any]:
    return {
        "tab_id": v.tab_id,
        "name": v.name.name,
        "table": v.table_id,
        "session_id": v.session_id,
        "status": v.status,
        "total_cents": v.total_cents,
        "paid_cents": v.paid_cents,
        "owed_cents": v.owed_cents,
        "closed": v.closed,
        "cash_rounding": v.cash_rounding,
        "cash_owed_cents": v.cash_due(v.owed_cents),
        "vat": _vat(v.vat),
        "parts": [
            {
                "n": p.n,
                "amount_cents": p.amount_cents,
                "paid_cents": p.paid_cents,
                "owed_cents": p.owed_cents,
                "cash_owed_cents": v.cash_due(p.owed_cents),
            }
            for p in v.parts
        ],
        "payments": [payment_out(p) for p in v.payments],
        "settled_at": v.settled_at,
    }


def receipt_out(r: Receipt) -> dict[str, Any]:
    i = r.issuer
    return {
        "payment_id": r.payment_id,
        "number": r.number,
        "issued_at": r.issued_at,
        "staff": r.staff,
        "issuer": {"name": i.name, "address": i.address, "ico": i.ico, "dic": i.dic, "ic_dph": i.ic_dph},
        "missing_issuer": list(r.missing_issuer),
        "lines": [vars(x) for x in r.lines],
        "vat": _vat(r.vat),
        "total_cents": r.total_cents,
        "rounding_cents": r.rounding_cents,
        "paid_cents": r.paid_cents,
        "method": r.method,
        "method_name": r.method_name,
        "tendered_cents": r.tendered_cents,
        "change_cents": r.change_cents,
        "table_name": r.table_name,
        "reverses_number": r.reverses_number,
        "reason": r.reason,
        "fiscal": r.fiscal,
        "fiscal_state": r.fiscal_state,
        "fiscal_id": r.fiscal_id,
    }


def _tab(reads: HallReads, tab_id: int) -> TabPayView:
    v = reads.tab_payments(tab_id)
    if v is None:
        raise NotFound(N_("There is no such bill; it may have been merged or the page is old."))
    return v


def _taken(reads: HallReads, taken: Taken) -> JSONResponse | dict[str, Any]:
    p = reads.payment(taken.payment_id)
    assert p is not None
    body = payment_out(p, taken.repeated)
    if taken.repeated:  # 200, not 201: the payment the first attempt made, nothing new
        return JSONResponse(PaymentOut(**body).model_dump(mode="json"), status_code=200)
    return body


@router.get("/tabs/{tab_id}/payments", response_model=TabPaymentsOut, summary="What a tab owes, its split parts and its payments")
def tab_payments(tab_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> dict[str, Any]:
    return tab_out(_tab(reads, tab_id))


@router.post(
    "/tabs/{tab_id}/payments",
    status_code=201,
    response_model=PaymentOut,
    summary="Take a payment (201); a resent request_id answers the payment already made (200, repeated)",
)
def pay(tab_id: IdPath, body: PayIn, hub: Hub, user: Annotated[Staff, Depends(can("payments.take"))]) -> Any:
    taken = hub.execute(
        PayTab(
            tab=tab_id,
            method=body.method,
            amount_cents=body.amount_cents,
            tendered_cents=body.tendered_cents,
            part=body.part,
            request_id=body.request_id,
            actor=user.username,
        )
    )
    return _taken(hub.reads, taken)


@router.get("/payments/{payment_id}", response_model=PaymentOut, summary="One payment or reversal")
def get_payment(payment_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> dict[str, Any]:
    p = reads.payment(payment_id)
    if p is None:
        raise NotFound(N_("There is no such payment."))
    return payment_out(p)


@router.post(
    "/payments/{payment_id}/reverse", status_code=201, response_model=PaymentOut, summary="Give a payment back, with a reason (manager)"
)
def reverse(payment_id: IdPath, body: ReverseIn, hub: Hub, user: Annotated[Staff, Depends(can("payments.reverse"))]) -> Any:
    taken = hub.execute(ReversePayment(payment=payment_id, reason=body.reason, request_id=body.request_id, actor=user.username))
    return _taken(hub.reads, taken)


@router.get("/payments/{payment_id}/receipt", response_model=ReceiptOut, summary="The receipt of a payment (its frozen lines)")
def receipt(payment_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> dict[str, Any]:
    r = reads.receipt_of(payment_id)
    if r is None:
        raise NotFound(N_("There is no such payment."))
    return receipt_out(r)


@router.post("/payments/{payment_id}/print", response_model=PrintedOut, summary="Print the receipt on the ESC/POS printer ([till] printer)")
def print_receipt(payment_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can_read_money("payments.take"))]) -> dict[str, Any]:
    hub.print_receipt(payment_id)
    return {"printed": True}
