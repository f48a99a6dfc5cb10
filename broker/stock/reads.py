"""The stock's reads (`reads.stock`): items and their levels, recipes, what the bar's buttons say is
left, movements, stocktakes, and the stock report (value at purchase price, margin per product and
month, shrinkage from the last stocktake). Read-only queries on any thread."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time

from sqlalchemy import case, func, select

from broker.core.ports import HallState
from broker.domain.dates import wall_clock
from broker.domain.stock import rules
from broker.storage.models import Product, StockCount, StockItem, StockMovement, StockRecipeLine, TabItem


@dataclass(frozen=True)
class StockItemView:
    id: int
    name: str
    unit: str
    threshold_milli: int
    level_milli: int
    unit_cost_cents: int
    active: bool
    state: str  # ok, low, negative (broker.domain.stock.rules.stock_state)
    value_cents: int  # the level at the purchase price excl. VAT (nothing for a negative level)


@dataclass(frozen=True)
class RecipeLineView:
    item: int
    item_name: str
    unit: str
    quantity_milli: int


@dataclass(frozen=True)
class MovementView:
    id: int
    item: int
    item_name: str
    unit: str
    kind: str
    quantity_milli: int
    value_cents: int
    at: datetime
    actor: str
    reason: str | None
    note: str | None
    supplier: str | None
    price_net_cents: int | None
    price_gross_cents: int | None
    vat_percent: int | None
    tab_item: int | None
    count: int | None


@dataclass(frozen=True)
class CountView:
    id: int
    at: datetime
    by: str
    note: str
    items: int
    moved: int  # items whose count differed


@dataclass(frozen=True)
class MarginRow:
    month: str  # "2026-11"
    product: int
    name: str
    name_en: str | None
    quantity: int
    revenue_gross_cents: int
    revenue_net_cents: int
    cost_cents: int
    margin_cents: int
    margin_percent: int | None


@dataclass(frozen=True)
class ShrinkRow:
    item: int
    name: str
    unit: str
    quantity_milli: int  # the count's difference: negative, stock went missing
    value_cents: int


@dataclass(frozen=True)
class StockReport:
    year: int
    value_cents: int
    items: list[StockItemView]
    margins: list[MarginRow]
    last_count: CountView | None
    shrinkage: list[ShrinkRow]
    write_offs: dict[str, tuple[int, int]]  # reason -> (movements, value cents) in the year


def _view(i: StockItem) -> StockItemView:
    return StockItemView(
        i.id,
        i.name,
        i.unit,
        i.threshold_milli,
        i.level_milli,
        i.unit_cost_cents,
        i.active,
        rules.stock_state(i.level_milli, i.threshold_milli),
        rules.value_of(max(i.level_milli, 0), i.unit_cost_cents),
    )


class StockReads:
    def __init__(self, hall: HallState) -> None:
        self.h = hall

    def items(self, *, active_only: bool = False) -> list[StockItemView]:
        with self.h.store.reader() as db:
            q = select(StockItem).order_by(func.lower(StockItem.name))
            if active_only:
                q = q.where(StockItem.active.is_(True))
            return [_view(i) for i in db.scalars(q)]

    def item(self, item_id: int) -> StockItemView | None:
        with self.h.store.reader() as db:
            i = db.get(StockItem, item_id)
            return _view(i) if i is not None else None

    def recipes(self) -> dict[int, list[RecipeLineView]]:
        """Each tracked product's recipe (product id → its lines)."""
        with self.h.store.reader() as db:
            rows = db.execute(
                select(StockRecipeLine.product_id, StockItem.id, StockItem.name, StockItem.unit, StockRecipeLine.quantity_milli)
                .join(StockItem, StockItem.id == StockRecipeLine.item_id)
                .order_by(StockRecipeLine.product_id, StockRecipeLine.id)
            ).all()
        out: dict[int, list[RecipeLineView]] = defaultdict(list)
        for product, item, name, unit, qty in rows:
            out[product].append(RecipeLineView(item, name, unit, qty))
        return dict(out)

    def left_by_product(self) -> dict[int, int]:
        """How many of each tracked product the stock still makes (the bar's "posledné 3"); one query."""
        with self.h.store.reader() as db:
            rows = db.execute(
                select(StockRecipeLine.product_id, StockItem.level_milli, StockRecipeLine.quantity_milli).join(
                    StockItem, StockItem.id == StockRecipeLine.item_id
                )
            ).all()
        lines: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for product, level, qty in rows:
            lines[product].append((level, qty))
        return {p: left for p, ls in lines.items() if (left := rules.portions_left(ls)) is not None}

    def movement(self, movement_id: int) -> MovementView | None:
        found = self.movements(movement=movement_id, limit=1)
        return found[0] if found else None

    def movements(
        self, *, kinds: tuple[str, ...] = (), item: int | None = None, movement: int | None = None, limit: int = 200
    ) -> list[MovementView]:
        with self.h.store.reader() as db:
            q = select(StockMovement, StockItem.name, StockItem.unit).join(StockItem, StockItem.id == StockMovement.item_id)
            if movement is not None:
                q = q.where(StockMovement.id == movement)
            if kinds:
                q = q.where(StockMovement.kind.in_(kinds))
            if item is not None:
                q = q.where(StockMovement.item_id == item)
            rows = db.execute(q.order_by(StockMovement.id.desc()).limit(limit)).all()
            return [
                MovementView(
                    m.id,
                    m.item_id,
                    name,
                    unit,
                    m.kind,
                    m.quantity_milli,
                    m.value_cents,
                    m.at,
                    m.actor,
                    m.reason,
                    m.note,
                    m.supplier,
                    m.price_net_cents,
                    m.price_gross_cents,
                    m.vat_percent,
                    m.tab_item_id,
                    m.count_id,
                )
                for m, name, unit in rows
            ]

    def count(self, count_id: int) -> CountView | None:
        found = self.counts(count=count_id, limit=1)
        return found[0] if found else None

    def counts(self, *, count: int | None = None, limit: int = 20) -> list[CountView]:
        with self.h.store.reader() as db:
            q = select(StockCount) if count is None else select(StockCount).where(StockCount.id == count)
            rows = db.scalars(q.order_by(StockCount.id.desc()).limit(limit)).all()
            moved = dict(
                db.execute(
                    select(StockMovement.count_id, func.count())
                    .where(StockMovement.count_id.in_([r.id for r in rows]))
                    .group_by(StockMovement.count_id)
                ).all()
            )
            return [CountView(r.id, r.at, r.by, r.note, len(r.counts), moved.get(r.id, 0)) for r in rows]

    def level_sum(self, item_id: int) -> int:
        """The item's level as the sum of its movements (what `level_milli` must equal)."""
        with self.h.store.reader() as db:
            return int(db.scalar(select(func.sum(StockMovement.quantity_milli)).where(StockMovement.item_id == item_id)) or 0)

    def report(self, year: int) -> StockReport:
        """The stock report of a calendar year (the hall's local months)."""
        tz = self.h.venue.tz
        start, end = wall_clock(date(year, 1, 1), time(0), tz), wall_clock(date(year + 1, 1, 1), time(0), tz)
        with self.h.store.reader() as db:
            items = [_view(i) for i in db.scalars(select(StockItem).order_by(func.lower(StockItem.name)))]
            # A sale's month is its local one: each month's bounds in UTC, bucketed by a CASE in SQL
            # (the same on SQLite and PostgreSQL), so the database sums and hands back product × month.
            bounds = [wall_clock(date(year, m, 1), time(0), tz) for m in range(2, 13)]
            month = case(*((TabItem.added_at < b, n) for n, b in enumerate(bounds, start=1)), else_=12).label("month_no")
            sold_in_year = (TabItem.added_at >= start, TabItem.added_at < end, TabItem.voided_at.is_(None), TabItem.product_id.is_not(None))
            sold = db.execute(
                select(
                    TabItem.product_id,
                    month,
                    TabItem.vat_percent,
                    func.sum(TabItem.quantity),
                    func.sum(TabItem.quantity * TabItem.unit_cents),
                )
                .where(*sold_in_year)
                .group_by(TabItem.product_id, "month_no", TabItem.vat_percent)
            ).all()
            # What the year's sales took from stock at purchase price, less what went back (a return;
            # a voided item is no sale: its sale and void cancel, and it is left out above).
            costs = {
                (product, m): -int(value or 0)
                for product, m, value in db.execute(
                    select(TabItem.product_id, month, func.sum(StockMovement.value_cents))
                    .join(TabItem, TabItem.id == StockMovement.tab_item_id)
                    .where(*sold_in_year)
                    .group_by(TabItem.product_id, "month_no")
                ).all()
            }
            names = {p.id: (p.name, p.name_en) for p in db.scalars(select(Product))}
            tracked = set(db.scalars(select(StockRecipeLine.product_id).distinct()))
            last = db.scalar(select(StockCount).order_by(StockCount.id.desc()).limit(1))
            last_count: CountView | None = None
            shrinkage: list[ShrinkRow] = []
            if last is not None:
                diffs = db.execute(
                    select(StockItem.id, StockItem.name, StockItem.unit, StockMovement.quantity_milli, StockMovement.value_cents)
                    .join(StockItem, StockItem.id == StockMovement.item_id)
                    .where(StockMovement.count_id == last.id)
                    .order_by(StockMovement.value_cents, StockItem.name)
                ).all()
                shrinkage = [ShrinkRow(i, n, u, q, v) for i, n, u, q, v in diffs]
                last_count = CountView(last.id, last.at, last.by, last.note, len(last.counts), len(shrinkage))
            offs = db.execute(
                select(StockMovement.reason, func.count(), func.sum(StockMovement.value_cents))
                .where(StockMovement.kind == "write_off", StockMovement.at >= start, StockMovement.at < end)
                .group_by(StockMovement.reason)
            ).all()
        groups: dict[tuple[str, int], list[int]] = {}
        for product, m, vat, qty, gross in sold:
            if product not in tracked and (product, m) not in costs:
                continue  # not kept in stock: no cost to set a margin against
            g = groups.setdefault((f"{year}-{m:02d}", product), [0, 0, 0, costs.get((product, m), 0)])
            g[0] += int(qty)
            g[1] += int(gross)
            g[2] += rules.net_of(int(gross), vat)  # VAT per rate on the month's sum, as a receipt's VAT rows
        margins = [
            MarginRow(
                month,
                product,
                names.get(product, ("?", None))[0],
                names.get(product, ("?", None))[1],
                q,
                gross,
                net,
                cost,
                rules.margin_cents(net, cost),
                rules.margin_percent(net, cost),
            )
            for (month, product), (q, gross, net, cost) in sorted(groups.items(), key=lambda kv: (kv[0][0], names.get(kv[0][1], ("",))[0]))
        ]
        return StockReport(
            year,
            sum(i.value_cents for i in items if i.active),
            items,
            margins,
            last_count,
            shrinkage,
            {str(r): (int(n), -int(v or 0)) for r, n, v in offs},
        )
