"""The bar's stock (issue 32 §1): items and levels, recipes, deliveries, write-offs, stocktakes, the
report. Staff (stock.view) see the levels and write off what broke; purchase prices, recipes,
deliveries, stocktakes, returns and the report are the manager's (stock.manage). Quantities in
thousandths of the item's unit, money in integer cents; a refusal is 409 with the reason, bad input
422, and either changes nothing. Each write is the command the pages send too.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response
from pydantic import Field

from broker.accounts.staff import Staff
from broker.domain.euros import MAX_AMOUNT_CENTS, VatPercent
from broker.domain.stock.rules import MAX_PORTION_MILLI, MAX_QUANTITY_MILLI, MovementKind, Unit, WriteOffReason
from broker.hall.facade import NotFound
from broker.hall.read_models import HallReads
from broker.stock.reads import CountView, MovementView, RecipeLineView, StockItemView, StockReport
from broker.stock.stock import (
    MAX_NAME,
    MAX_NOTE,
    MAX_RECIPE_LINES,
    AddStockItem,
    CountStock,
    RecordDelivery,
    ReturnToStock,
    SetRecipe,
    UpdateStockItem,
    WriteOffStock,
)
from dashboard.access import allows
from dashboard.api.auth import can
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, Id, text

router = APIRouter(tags=["stock"])
Quantity = Annotated[int, Field(ge=1, le=MAX_QUANTITY_MILLI, description="thousandths of the item's unit")]
Counted = Annotated[int, Field(ge=0, le=MAX_QUANTITY_MILLI, description="thousandths of the item's unit")]
FormKey = Annotated[str, Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class ItemIn(Body):
    name: Annotated[str, text(MAX_NAME, 2)]
    unit: Unit = "piece"
    threshold_milli: Counted = 0


class ItemPatch(Body):
    name: Annotated[str, text(MAX_NAME, 2)] | None = None
    threshold_milli: Counted | None = None
    active: bool | None = None


class RecipeLineIn(Body):
    item: Id
    quantity_milli: Annotated[int, Field(ge=1, le=MAX_PORTION_MILLI)]


class RecipeIn(Body):
    lines: Annotated[list[RecipeLineIn], Field(max_length=MAX_RECIPE_LINES)]


class DeliveryIn(Body):
    item: Id
    quantity_milli: Quantity
    price_cents: Annotated[int, Field(ge=0, le=MAX_AMOUNT_CENTS)]
    vat_percent: VatPercent = 23
    includes_vat: bool = True
    supplier: Annotated[str, text(MAX_NAME, 2)]
    note: Annotated[str, text(MAX_NOTE, 0)] = ""
    request_id: FormKey | None = None


class WriteOffIn(Body):
    item: Id
    quantity_milli: Quantity
    reason: WriteOffReason
    note: Annotated[str, text(MAX_NOTE, 0)] = ""
    request_id: FormKey | None = None


class CountLineIn(Body):
    item: Id
    counted_milli: Counted


class CountIn(Body):
    counts: Annotated[list[CountLineIn], Field(min_length=1, max_length=500)]
    note: Annotated[str, text(MAX_NOTE, 0)] = ""
    request_id: FormKey | None = None


class ReturnIn(Body):
    tab_item: Id
    reason: Annotated[str, text(MAX_NOTE, 3)]


def _movement(reads: HallReads, movement_id: int) -> MovementView:
    view = reads.stock.movement(movement_id)
    if view is None:
        raise NotFound("There is no such movement.")
    return view


def _item(reads: HallReads, item_id: int) -> StockItemView:
    view = reads.stock.item(item_id)
    if view is None:
        raise NotFound("There is no such stock item.")
    return view


def _shown(view: StockItemView, role: str) -> StockItemView:
    """Staff see levels, not purchase prices (money is the manager's)."""
    if allows(role, "stock.manage"):
        return view
    return StockItemView(view.id, view.name, view.unit, view.threshold_milli, view.level_milli, 0, view.active, view.state, 0)


@router.get("/stock/items", response_model=list[StockItemView], summary="Stock items and their levels (purchase prices: a manager's)")
def list_items(reads: Reads, user: Annotated[Staff, Depends(can("stock.view"))]) -> list[StockItemView]:
    return [_shown(v, user.role) for v in reads.stock.items()]


@router.post("/stock/items", response_model=StockItemView, status_code=201, summary="Add a stock item")
def add_item(body: ItemIn, hub: Hub, user: Annotated[Staff, Depends(can("stock.manage"))]) -> StockItemView:
    item = hub.execute(body.to(AddStockItem, actor=user.username))
    return _item(hub.reads, item)


@router.patch("/stock/items/{item_id}", response_model=StockItemView, summary="Change a stock item's name, threshold or whether it is kept")
def change_item(item_id: IdPath, body: ItemPatch, hub: Hub, user: Annotated[Staff, Depends(can("stock.manage"))]) -> StockItemView:
    hub.execute(body.to(UpdateStockItem, item=item_id, actor=user.username))
    return _item(hub.reads, item_id)


@router.put(
    "/stock/recipes/{product_id}",
    response_model=list[RecipeLineView],
    summary="What one of a product takes from stock (no lines: not tracked); answers the recipe",
)
def set_recipe(product_id: IdPath, body: RecipeIn, hub: Hub, user: Annotated[Staff, Depends(can("stock.manage"))]) -> list[RecipeLineView]:
    lines = tuple((line.item, line.quantity_milli) for line in body.lines)
    hub.execute(SetRecipe(product=product_id, lines=lines, actor=user.username))
    return hub.reads.stock.recipes().get(product_id, [])


@router.get("/stock/movements", response_model=list[MovementView], summary="The latest movements, newest first")
def list_movements(
    reads: Reads,
    user: Annotated[Staff, Depends(can("stock.manage"))],
    kind: Annotated[MovementKind | None, Query()] = None,
    item: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[MovementView]:
    return reads.stock.movements(kinds=(kind,) if kind else (), item=item, limit=limit)


@router.post(
    "/stock/deliveries", response_model=MovementView, status_code=201, summary="Goods received (price incl. or excl. VAT, in cents)"
)
def deliver(body: DeliveryIn, hub: Hub, user: Annotated[Staff, Depends(can("stock.manage"))]) -> MovementView:
    moved = hub.execute(
        RecordDelivery(
            item=body.item,
            quantity_milli=body.quantity_milli,
            price_cents=body.price_cents,
            vat_percent=body.vat_percent,
            includes_vat=body.includes_vat,
            supplier=body.supplier,
            note=body.note,
            form_key=body.request_id,
            actor=user.username,
        )
    )
    return _movement(hub.reads, moved)


@router.post("/stock/write-offs", response_model=MovementView, status_code=201, summary="Write stock off with a reason")
def write_off(body: WriteOffIn, hub: Hub, user: Annotated[Staff, Depends(can("stock.view"))]) -> MovementView:
    moved = hub.execute(
        WriteOffStock(
            item=body.item,
            quantity_milli=body.quantity_milli,
            reason=body.reason,
            note=body.note,
            form_key=body.request_id,
            actor=user.username,
        )
    )
    return _movement(hub.reads, moved)


@router.post("/stock/counts", response_model=CountView, status_code=201, summary="A stocktake: each difference becomes a movement")
def count(body: CountIn, hub: Hub, user: Annotated[Staff, Depends(can("stock.manage"))]) -> CountView:
    counts = tuple((line.item, line.counted_milli) for line in body.counts)
    count_id = hub.execute(CountStock(counts=counts, note=body.note, form_key=body.request_id, actor=user.username))
    view = hub.reads.stock.count(count_id)
    if view is None:
        raise NotFound("There is no such stocktake.")
    return view


@router.post("/stock/returns", status_code=204, summary="Give a sold item's stock back (a payment's reversal does not)")
def return_to_stock(body: ReturnIn, hub: Hub, user: Annotated[Staff, Depends(can("stock.manage"))]) -> Response:
    hub.execute(body.to(ReturnToStock, actor=user.username))
    return Response(status_code=204)


@router.get("/stock/report", response_model=StockReport, summary="Stock value, margin per product and month, shrinkage")
def report(
    reads: Reads, user: Annotated[Staff, Depends(can("stock.manage"))], year: Annotated[int | None, Query(ge=2000, le=2100)] = None
) -> StockReport:
    return reads.stock.report(year or reads.today().year)
