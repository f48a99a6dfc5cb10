"""Tabs and the product list: walk-in tabs, items (added, voided with a reason), merge, split.

Staff (tabs.run) run tabs; a manager voids an item on a paid tab (tabs.void_paid) and keeps the
product list (products.edit). Each write is the same facade method the pages call. Money in
integer cents; a refusal is 409 with the reason, bad input 422, and either changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, ClassVar, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import Field, model_validator

from broker.accounts.staff import Staff
from broker.domain.euros import MAX_AMOUNT_CENTS, ProductCategory, VatPercent
from broker.domain.till.split import MAX_PARTS
from broker.hall.facade import NotFound
from broker.hall.read_models import HallReads
from broker.till.tab_views import ProductView, TabView, UnpaidTab
from broker.till.tabs import (
    MAX_LABEL,
    MAX_NAME,
    MAX_PRICE_CENTS,
    MAX_QUANTITY,
    REASON_MAX,
    AddProduct,
    AddTabItem,
    CancelSplit,
    MergeTabs,
    OpenWalkInTab,
    SplitTab,
    UpdateProduct,
    VoidTabItem,
)
from dashboard.access import allows
from dashboard.api.auth import can, can_read_money
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, Id, text

router = APIRouter(tags=["tabs"])

Category = ProductCategory
VatRate = VatPercent
RequestId = Annotated[str, Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class ProductIn(Body):
    name: Annotated[str, text(MAX_NAME, 2)]
    name_en: Annotated[str, text(MAX_NAME, 0)] = ""
    price_cents: Annotated[int, Field(ge=0, le=MAX_PRICE_CENTS)]
    vat_percent: VatRate
    category: Category = "other"


class ProductPatch(Body):
    name: Annotated[str, text(MAX_NAME, 2)] | None = None
    name_en: Annotated[str, text(MAX_NAME, 0)] | None = None
    price_cents: Annotated[int, Field(ge=0, le=MAX_PRICE_CENTS)] | None = None
    vat_percent: VatRate | None = None
    category: Category | None = None
    active: bool | None = None


class WalkInIn(Body):
    label: Annotated[str, text(MAX_LABEL, 2)] | None = Field(
        None, description='The tab\'s name; without one it is named by the time ("Bar 18:42")'
    )
    request_id: RequestId | None = None


class ItemIn(Body):
    renamed: ClassVar[Mapping[str, str]] = {"product_id": "product", "request_id": "form_key"}

    product_id: Id
    quantity: Annotated[int, Field(ge=1, le=MAX_QUANTITY)] = 1
    request_id: RequestId | None = Field(None, description="A one-time key: the same key again answers the item already made")


class VoidIn(Body):
    reason: Annotated[str, text(REASON_MAX, 3)]


class MergeIn(Body):
    renamed: ClassVar[Mapping[str, str]] = {"tab_id": "from_tab"}

    tab_id: Id = Field(description="The tab put onto this one")


class SplitIn(Body):
    mode: Literal["equal", "items", "amounts"]
    parts: Annotated[int, Field(ge=2, le=MAX_PARTS)] | None = None
    items: dict[Annotated[str, Field(max_length=40)], Annotated[int, Field(ge=1, le=MAX_PARTS)]] | None = Field(
        None, description='items mode: each bill line\'s key ("item:12", "session:7:0") to its part 1..N'
    )
    amounts: Annotated[list[Annotated[int, Field(ge=1, le=MAX_AMOUNT_CENTS)]], Field(min_length=2, max_length=MAX_PARTS)] | None = None

    @model_validator(mode="after")
    def _one_way(self) -> SplitIn:
        need = {"equal": self.parts, "items": self.items, "amounts": self.amounts}[self.mode]
        if need is None:
            raise ValueError({"equal": "give parts", "items": "give items", "amounts": "give amounts"}[self.mode])
        return self


def _product_or_404(reads: HallReads, product_id: int) -> ProductView:
    for p in reads.till.products():
        if p.id == product_id:
            return p
    raise NotFound("There is no such product.")


@router.get("/products", response_model=list[ProductView], summary="The product list (active products; all with all=true for a manager)")
def list_products(
    reads: Reads, user: Annotated[Staff, Depends(can("tabs.run"))], all: Annotated[bool, Query(description="inactive ones too")] = False
) -> list[ProductView]:
    everything = all and allows(user.role, "products.edit")
    return reads.till.products(active_only=not everything)


@router.post("/products", response_model=ProductView, status_code=201, summary="Add a product (price in cents incl. VAT)")
def add_product(body: ProductIn, hub: Hub, user: Annotated[Staff, Depends(can("products.edit"))]) -> ProductView:
    pid = hub.execute(body.to(AddProduct, actor=user.username))
    return _product_or_404(hub.reads, pid)


@router.patch("/products/{product_id}", response_model=ProductView, summary="Change or deactivate a product; tabs keep what they copied")
def change_product(product_id: IdPath, body: ProductPatch, hub: Hub, user: Annotated[Staff, Depends(can("products.edit"))]) -> ProductView:
    hub.execute(body.to(UpdateProduct, product_id=product_id, actor=user.username))
    return _product_or_404(hub.reads, product_id)


@router.get("/tabs", response_model=list[UnpaidTab], summary="Tabs still to be paid (walk-ins and stopped games), oldest first")
def list_unpaid(reads: Reads, user: Annotated[Staff, Depends(can("tabs.run"))]) -> list[UnpaidTab]:
    return reads.till.unpaid_tabs()


@router.post("/tabs", response_model=TabView, status_code=201, summary="Open a walk-in tab (no table: a drink at the bar)")
def open_walk_in(body: WalkInIn, hub: Hub, user: Annotated[Staff, Depends(can("tabs.run"))]) -> TabView:
    tab_id = hub.execute(OpenWalkInTab(label=body.label or "", form_key=body.request_id, actor=user.username))
    return hub.reads.till.tab(tab_id)


@router.get("/tabs/{tab_id}", response_model=TabView, summary="A tab: its lines, VAT per rate, total, paid, owed, status")
def get_tab(tab_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("tabs.run"))]) -> TabView:
    return reads.till.tab(tab_id)


@router.get("/sessions/{session_id}/tab", response_model=TabView, summary="The tab of a game")
def game_tab(session_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can_read_money("tabs.run"))]) -> TabView:
    tab_id = reads.till.tab_of_game(session_id)
    if tab_id is None:
        raise NotFound("That game has no tab.")
    return reads.till.tab(tab_id)


@router.post(
    "/tabs/{tab_id}/items", response_model=TabView, status_code=201, summary="Put a product on a tab (a copy of its price and VAT)"
)
def add_item(tab_id: IdPath, body: ItemIn, hub: Hub, user: Annotated[Staff, Depends(can("tabs.run"))]) -> TabView:
    item_id = hub.execute(body.to(AddTabItem, tab=tab_id, actor=user.username))
    return replace(hub.reads.till.tab(tab_id), item_id=item_id)


@router.post(
    "/tabs/{tab_id}/items/{item_id}/void", response_model=TabView, summary="Void an item with a reason (after a payment: a manager)"
)
def void_item(tab_id: IdPath, item_id: IdPath, body: VoidIn, hub: Hub, user: Annotated[Staff, Depends(can("tabs.run"))]) -> TabView:
    hub.execute(body.to(VoidTabItem, tab=tab_id, item=item_id, may_void_paid=allows(user.role, "tabs.void_paid"), actor=user.username))
    return hub.reads.till.tab(tab_id)


@router.post("/tabs/{tab_id}/merge", response_model=TabView, summary="Put another unpaid tab onto this one (one bill)")
def merge(tab_id: IdPath, body: MergeIn, hub: Hub, user: Annotated[Staff, Depends(can("tabs.run"))]) -> TabView:
    hub.execute(body.to(MergeTabs, into=tab_id, actor=user.username))
    return hub.reads.till.tab(tab_id)


@router.post("/tabs/{tab_id}/split", response_model=TabView, summary="Split a stopped, unpaid tab: equal parts, by items or by amounts")
def split(tab_id: IdPath, body: SplitIn, hub: Hub, user: Annotated[Staff, Depends(can("tabs.run"))]) -> TabView:
    hub.execute(
        SplitTab(
            tab=tab_id, mode=body.mode, parts=body.parts or 0, assignment=body.items, amounts=tuple(body.amounts or ()), actor=user.username
        )
    )
    return hub.reads.till.tab(tab_id)


@router.delete("/tabs/{tab_id}/split", response_model=TabView, summary="Cancel a split while no part is paid")
def cancel_split(tab_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("tabs.run"))]) -> TabView:
    hub.execute(CancelSplit(tab=tab_id, actor=user.username))
    return hub.reads.till.tab(tab_id)
