"""Members' money (broker.wallet): a member's credit, packages and history; top-ups, packages sold,
bills paid from them, refunds and reversals (the manager's). Amounts are integer cents; a POST with a
`request_id` (a client's one-time key) is safe to resend: the answer is the row already made."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Response
from pydantic import Field

from broker.accounts.staff import Staff
from broker.domain.refusals import N_
from broker.hall.facade import NotFound
from broker.wallet.reads import MemberMoney, WalletView
from broker.wallet.wallet import (
    PayFromCredit,
    PayFromPackage,
    RefundCredit,
    ReverseWalletEntry,
    SellPackage,
    TopUpCredit,
    UseLesson,
    WalletDone,
)
from dashboard.api.auth import can, can_read_money
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(tags=["wallet"])

RequestId = Annotated[str, Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="A one-time key of this attempt")]
Cents = Annotated[int, Field(description="Whole cents")]


class TopUpIn(Body):
    amount_cents: Cents
    method: Annotated[str, text(32)]
    tendered_cents: int | None = None
    request_id: RequestId | None = None


class PackageIn(Body):
    kind: Literal["hours", "lessons"]
    quantity: int = Field(description="Hours of table time, or lessons")
    price_cents: Cents
    method: Annotated[str, text(32)]
    tendered_cents: int | None = None
    request_id: RequestId | None = None


class RefundIn(Body):
    amount_cents: Cents
    method: Annotated[str, text(32)]
    reason: Annotated[str, text(200)]
    request_id: RequestId | None = None


class ReverseIn(Body):
    reason: Annotated[str, text(200)]
    request_id: RequestId | None = None


class CreditPayIn(Body):
    member_id: int
    amount_cents: Cents
    part: int | None = Field(None, ge=1, le=100)
    expect_owed_cents: int | None = Field(None, description="What the page showed as owed: refused when the bill moved since")
    request_id: RequestId | None = None


class PackagePayIn(Body):
    package_id: int
    request_id: RequestId | None = None


class LessonIn(Body):
    request_id: RequestId | None = None


def _done(done: WalletDone, response: Response) -> WalletDone:
    if done.repeated:
        response.status_code = 200  # the row the first attempt made, nothing new
    return done


@router.get("/members/{member_id}/wallet", response_model=WalletView, summary="A member's credit, packages and every row of them")
def wallet(member_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can("wallet.run"))]) -> WalletView:
    v = reads.wallet.member(member_id)
    if v is None:
        raise NotFound(N_("There is no such member."))
    return v


@router.post("/members/{member_id}/wallet/top-ups", status_code=201, response_model=WalletDone, summary="Sell credit (not revenue, no VAT)")
def top_up(
    member_id: IdPath, body: TopUpIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("wallet.run"))]
) -> WalletDone:
    c = body.to(TopUpCredit, member_id=member_id, actor=user.username)
    return _done(hub.execute(c), response)


@router.post(
    "/members/{member_id}/wallet/packages", status_code=201, response_model=WalletDone, summary="Sell a package (revenue with VAT)"
)
def sell_package(
    member_id: IdPath, body: PackageIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("wallet.run"))]
) -> WalletDone:
    c = body.to(SellPackage, member_id=member_id, actor=user.username)
    return _done(hub.execute(c), response)


@router.post("/members/{member_id}/wallet/refunds", status_code=201, response_model=WalletDone, summary="Give unused credit back (manager)")
def refund(
    member_id: IdPath, body: RefundIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("wallet.refund"))]
) -> WalletDone:
    c = body.to(RefundCredit, member_id=member_id, actor=user.username)
    return _done(hub.execute(c), response)


@router.post(
    "/wallet/entries/{entry_id}/reverse", status_code=201, response_model=WalletDone, summary="Undo a row of credit or a package (manager)"
)
def reverse(
    entry_id: IdPath, body: ReverseIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("wallet.refund"))]
) -> WalletDone:
    return _done(hub.execute(body.to(ReverseWalletEntry, entry=entry_id, actor=user.username)), response)


@router.post("/wallet/packages/{package_id}/lessons", status_code=201, response_model=WalletDone, summary="One lesson of a package taken")
def lesson(
    package_id: IdPath, body: LessonIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("wallet.run"))]
) -> WalletDone:
    return _done(hub.execute(body.to(UseLesson, package_id=package_id, actor=user.username)), response)


@router.get("/tabs/{tab_id}/wallet", response_model=MemberMoney | None, summary="The credit and hours of the member a bill's game is for")
def tab_wallet(tab_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("wallet.run"))]) -> MemberMoney | None:
    return reads.wallet.for_tab(tab_id)


@router.post("/tabs/{tab_id}/payments/credit", status_code=201, response_model=WalletDone, summary="Pay a bill from a member's credit")
def pay_credit(
    tab_id: IdPath, body: CreditPayIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("wallet.run"))]
) -> WalletDone:
    c = body.to(PayFromCredit, tab=tab_id, actor=user.username)
    return _done(hub.execute(c), response)


@router.post(
    "/tabs/{tab_id}/payments/package", status_code=201, response_model=WalletDone, summary="A game's table time from an hours package"
)
def pay_package(
    tab_id: IdPath, body: PackagePayIn, hub: Hub, response: Response, user: Annotated[Staff, Depends(can("wallet.run"))]
) -> WalletDone:
    return _done(hub.execute(body.to(PayFromPackage, tab=tab_id, actor=user.username)), response)
