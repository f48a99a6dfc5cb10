"""The bar's stock (issue 32 §1): its commands, their handlers, and the till's sales moving it.

Every change of a level is a row of `stock_movements`, never changed or deleted; an item's level is
their sum (`StockItem.level_milli` is that sum kept beside them, in the same transaction, so the
bar's buttons read it without summing). The rules, each in one place here (`_move`):
- a sale on a tab moves its product's recipe out of stock at the moment of sale, in the tab item's
  own transaction on the writer (the till's AddTabItem calls `sold`); a void gives it back (`voided`);
- a payment's reversal moves nothing (the drink was drunk): the manager gives a sold item's stock
  back with ReturnToStock (a separate command, with a reason), once per item, never a voided one;
- deliveries (supplier, quantity, price incl. or excl. VAT: both kept), write-offs (a reason) and
  stocktakes (the count per item: the difference is a movement, never an overwrite);
- nothing is refused for lack of stock (a count may be wrong): an item at or under its threshold
  opens a low-stock alert, a negative level another; an open alert is touched by the next sale (its
  count), not pushed again; both close when the level is back (the alert book's rules).

Quantities are thousandths of the item's unit, money integer cents (broker.domain.stock.rules).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.euros import MAX_AMOUNT_CENTS, VAT_RATES
from broker.domain.floor.alert_kinds import AlertSpec
from broker.domain.refusals import N_, Refusal
from broker.domain.stock import rules
from broker.domain.stock.rules import MAX_PORTION_MILLI, MAX_QUANTITY_MILLI, UNITS, WRITE_OFF_REASONS
from broker.stock.events import StockChanged
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import Product, StockCount, StockItem, StockMovement, StockRecipeLine, TabItem
from broker.till import Till

MAX_NAME = 120
MAX_NOTE = 200
MAX_RECIPE_LINES = 12
MIN_FORM_KEY, MAX_FORM_KEY = 8, 64


class StockRefused(Refusal):
    """A stock change refused; nothing was changed (the hub's ServiceError)."""


class StockMissing(StockRefused):
    """No such stock item, product or tab item (the hub's NotFound)."""


@command
class AddStockItem(Command[int]):
    """A new stock item (the manager's): a name, its unit (piece, litre, kg), the low-stock threshold
    in thousandths of the unit; answers its id."""

    name: str
    unit: str = "piece"
    threshold_milli: int = 0


@command
class UpdateStockItem(Command[None]):
    """Change a stock item's name, threshold or whether it is kept (None keeps a field); its level
    changes only by movements."""

    item: int
    name: str | None = None
    threshold_milli: int | None = None
    active: bool | None = None


@command
class SetRecipe(Command[None]):
    """What one of a product takes from stock: (item, thousandths) lines, replacing the product's
    recipe (none: the product is not tracked). Sales made before keep what they moved."""

    product: int
    lines: tuple[tuple[int, int], ...] = ()


@command
class RecordDelivery(Command[int]):
    """Goods received: `quantity_milli` of an item from `supplier` for `price_cents` (the whole line,
    incl. VAT when `includes_vat`, else excl.) at `vat_percent`; the unit's purchase price follows.
    Answers the movement's id (the first one's for a repeated form_key)."""

    item: int
    quantity_milli: int
    price_cents: int
    vat_percent: int = 23
    includes_vat: bool = True
    supplier: str = ""
    note: str = ""
    form_key: str | None = None


@command
class WriteOffStock(Command[int]):
    """Take stock out with a reason (broken, expired, staff_drink, other); answers the movement's id."""

    item: int
    quantity_milli: int
    reason: str
    note: str = ""
    form_key: str | None = None


@command
class CountStock(Command[int]):
    """A stocktake: the count of each (item, thousandths); each difference from the level becomes a
    movement (never an overwrite). Answers the stocktake's id (the first one's for a repeated form_key)."""

    counts: tuple[tuple[int, int], ...]
    note: str = ""
    form_key: str | None = None


@command
class ReturnToStock(Command[None]):
    """Give a sold tab item's stock back (a manager's, with a reason), e.g. after its payment was
    reversed and the bottle came back unopened; once per item, never a voided one (its void did)."""

    tab_item: int
    reason: str


def _clean(text: str | None, limit: int) -> str:
    return " ".join((text or "").split())[:limit]


def _form_key(key: object) -> str | None:
    if key is None or key == "":
        return None
    if not isinstance(key, str) or not MIN_FORM_KEY <= len(key) <= MAX_FORM_KEY or not key.isascii():
        raise StockRefused(N_("This form is broken; open the page again."))
    return key


def _quantity(value: object, *, low: int = 1, high: int = MAX_QUANTITY_MILLI) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise StockRefused(N_("Give the quantity as a number, e.g. 1 or 0,5 (at most 3 decimals)."))
    return value


def low_key(item: int) -> str:
    return f"stock_low:{item}"


def negative_key(item: int) -> str:
    return f"stock_negative:{item}"


def _unit_word(unit: str) -> tuple[str, str]:
    return rules.UNIT_WORDS.get(unit, (unit, unit))


def low_alert(item: StockItem) -> AlertSpec:
    sk, en = _unit_word(item.unit)
    limit_sk, limit_en = rules.quantity_text(item.threshold_milli, "sk"), rules.quantity_text(item.threshold_milli, "en")
    return AlertSpec(
        "stock_low",
        low_key(item.id),
        None,
        "warning",
        f"Dochádza na sklade: {item.name} (hranica {limit_sk} {sk}); objednajte",
        f"Running low: {item.name} (threshold {limit_en} {en}); order more",
    )


def negative_alert(item: StockItem) -> AlertSpec:
    return AlertSpec(
        "stock_negative",
        negative_key(item.id),
        None,
        "warning",
        f"Záporný stav skladu: {item.name}. Predalo sa viac, než sklad eviduje: skontrolujte dodávky a inventúru",
        f"Negative stock: {item.name}. More was sold than the stock holds: check the deliveries and count it",
    )


class Stock(Part):
    """The stock part: its handlers, and the till's sales and voids moving stock (given at composition)."""

    as_not_found = (StockMissing,)
    as_service_error = (StockRefused,)

    def __init__(self, hall: HallState, till: Till) -> None:
        self.h = hall
        till.tabs.item_sold = self.sold
        till.tabs.item_voided = self.voided

    # -- one movement: the only place a level changes ------------------------------------------

    def _move(
        self, db: Db, item: StockItem, quantity: int, kind: str, at: datetime, actor: str, value: int | None = None, **fields: object
    ) -> StockMovement:
        """One movement as a row the caller gets back (its id: a delivery's, a write-off's answer).
        `value`: what it moved at purchase price (a delivery's own); else at the item's unit cost now."""
        value = rules.value_of(quantity, item.unit_cost_cents) if value is None else value
        m = StockMovement(item_id=item.id, kind=kind, quantity_milli=quantity, value_cents=value, at=at, actor=actor, **fields)
        db.add(m)
        self._moved(db, item, quantity, at)
        return m

    def _move_many(self, db: Db, moves: list[tuple[StockItem, int]], kind: str, at: datetime, actor: str, **fields: object) -> None:
        """Several movements of one kind at once (a sale's recipe, its void): one INSERT of many rows."""
        rows = [
            {
                "item_id": item.id,
                "kind": kind,
                "quantity_milli": quantity,
                "value_cents": rules.value_of(quantity, item.unit_cost_cents),
                "at": at,
                "actor": actor,
                **fields,
            }
            for item, quantity in moves
        ]
        db.execute(insert(StockMovement), rows)
        for item, quantity in moves:
            self._moved(db, item, quantity, at)

    def _moved(self, db: Db, item: StockItem, quantity: int, at: datetime) -> None:
        """The one place a level changes: beside its movement's row, then the item's alerts and the live event."""
        item.level_milli += quantity
        self._alerts(db, item, at)
        item_id = item.id
        after_commit(db).add(lambda: self.h.listeners.notify(StockChanged(item=item_id)))

    def _alerts(self, db: Db, item: StockItem, at: datetime) -> None:
        """Open, touch or close the item's low and negative alerts by its level now."""
        state = rules.stock_state(item.level_milli, item.threshold_milli)
        if state == "ok" or not item.active:
            self.h.alerts.settle(db, low_key(item.id), at)
        else:
            self.h.alerts.raise_alert(db, low_alert(item))
        if state == "negative" and item.active:
            self.h.alerts.raise_alert(db, negative_alert(item))
        else:
            self.h.alerts.settle(db, negative_key(item.id), at)

    # -- the till's sales (called inside AddTabItem's and VoidTabItem's transactions) -----------

    def sold(self, db: Db, item: TabItem, now: datetime, actor: str) -> None:
        """A product put on a tab: its recipe out of stock, per portion times the quantity."""
        if item.product_id is None:
            return
        lines = db.execute(
            select(StockRecipeLine.quantity_milli, StockItem)
            .join(StockItem, StockItem.id == StockRecipeLine.item_id)
            .where(StockRecipeLine.product_id == item.product_id)
            .order_by(StockRecipeLine.id)
        ).all()
        if lines:
            moves = [(stock_item, -portion * item.quantity) for portion, stock_item in lines]
            self._move_many(db, moves, "sale", now, actor, tab_item_id=item.id, product_id=item.product_id)

    def voided(self, db: Db, item: TabItem, now: datetime, actor: str) -> None:
        """An item voided: what its sale took goes back (less what a return gave back already)."""
        self._give_back(db, item, "void", now, actor, None)

    def _give_back(self, db: Db, item: TabItem, kind: str, now: datetime, actor: str, note: str | None) -> int:
        moved = db.execute(
            select(StockMovement.item_id, func.sum(StockMovement.quantity_milli))
            .where(StockMovement.tab_item_id == item.id)
            .group_by(StockMovement.item_id)
            .order_by(StockMovement.item_id)
        ).all()
        back = [(db.get(StockItem, item_id), -int(total)) for item_id, total in moved if total and total < 0]
        moves = [(stock_item, quantity) for stock_item, quantity in back if stock_item is not None]
        if moves:
            self._move_many(db, moves, kind, now, actor, tab_item_id=item.id, product_id=item.product_id, note=note)
        return len(moves)

    @handles(ReturnToStock)
    def return_to_stock(self, c: ReturnToStock) -> None:
        why = _clean(c.reason, MAX_NOTE)
        if len(why) < 3:
            raise StockRefused(N_("Write why the stock goes back (at least %(min)d letters)."), min=3)
        now = self.h.clock()
        with self.h.store.session() as db:
            item = db.get(TabItem, c.tab_item)
            if item is None:
                raise StockMissing(N_("There is no such item on a tab."))
            if item.voided_at is not None:
                raise StockRefused(N_("%(item)s is voided: its stock went back with the void."), item=item.name)
            returned = db.scalar(select(func.count()).where(StockMovement.tab_item_id == item.id, StockMovement.kind == "return"))
            if returned:
                raise StockRefused(N_("The stock of %(item)s went back already."), item=item.name)
            if not self._give_back(db, item, "return", now, c.actor, why):
                raise StockRefused(N_("%(item)s took nothing from stock."), item=item.name)
            record_audit(db, c.actor, "stock.return", f"tab_item:{item.id}", {"tab_id": item.tab_id, "name": item.name}, reason=why, at=now)

    # -- items and recipes (the manager's) -------------------------------------------------------

    def _item(self, db: Db, item_id: int) -> StockItem:
        item = db.get(StockItem, item_id) if isinstance(item_id, int) and not isinstance(item_id, bool) else None
        if item is None:
            raise StockMissing(N_("There is no such stock item."))
        return item

    def _check_name(self, db: Db, name: str, same: int | None) -> None:
        if len(name) < 2:
            raise StockRefused(N_("Give the stock item a name (at least 2 letters)."))
        other = db.scalar(select(StockItem).where(func.lower(StockItem.name) == name.lower()))
        if other is not None and other.id != same:
            raise StockRefused(N_("There is a stock item called %(item)s already."), item=other.name)

    @handles(AddStockItem)
    def add_item(self, c: AddStockItem) -> int:
        name = _clean(c.name, MAX_NAME)
        if c.unit not in UNITS:
            raise StockRefused(N_("The unit is one of: piece, litre, kg."))
        threshold = _quantity(c.threshold_milli, low=0)
        now = self.h.clock()
        with self.h.store.session() as db:
            self._check_name(db, name, None)
            item = StockItem(
                name=name, unit=c.unit, threshold_milli=threshold, level_milli=0, unit_cost_cents=0, active=True, created_at=now
            )
            db.add(item)
            db.flush()
            record_audit(
                db, c.actor, "stock.item_add", f"stock_item:{item.id}", {"name": name, "unit": c.unit, "threshold_milli": threshold}, at=now
            )
            return item.id  # no alert before its first delivery: an item is set up before the goods come

    @handles(UpdateStockItem)
    def update_item(self, c: UpdateStockItem) -> None:
        now = self.h.clock()
        with self.h.store.session() as db:
            item = self._item(db, c.item)
            before = {"name": item.name, "threshold_milli": item.threshold_milli, "active": item.active}
            if c.name is not None:
                name = _clean(c.name, MAX_NAME)
                self._check_name(db, name, item.id)
                item.name = name
            if c.threshold_milli is not None:
                item.threshold_milli = _quantity(c.threshold_milli, low=0)
            if c.active is not None:
                item.active = bool(c.active)
            after = {"name": item.name, "threshold_milli": item.threshold_milli, "active": item.active}
            changed = {k: [before[k], after[k]] for k in before if before[k] != after[k]}
            if changed:
                record_audit(db, c.actor, "stock.item_change", f"stock_item:{item.id}", changed, at=now)
            self._alerts(db, item, now)
            item_id = item.id
            after_commit(db).add(lambda: self.h.listeners.notify(StockChanged(item=item_id)))

    @handles(SetRecipe)
    def set_recipe(self, c: SetRecipe) -> None:
        if len(c.lines) > MAX_RECIPE_LINES:
            raise StockRefused(N_("A recipe has at most %(max)d lines."), max=MAX_RECIPE_LINES)
        now = self.h.clock()
        with self.h.store.session() as db:
            product = db.get(Product, c.product) if isinstance(c.product, int) else None
            if product is None:
                raise StockMissing(N_("There is no such product."))
            seen: set[int] = set()
            for item_id, qty in c.lines:
                self._item(db, item_id)
                _quantity(qty, high=MAX_PORTION_MILLI)
                if item_id in seen:
                    raise StockRefused(N_("Each stock item once in a recipe."))
                seen.add(item_id)
            old = db.scalars(select(StockRecipeLine).where(StockRecipeLine.product_id == product.id)).all()
            before = sorted((r.item_id, r.quantity_milli) for r in old)
            if before == sorted(c.lines):
                return
            for r in old:
                db.delete(r)
            db.flush()
            for item_id, qty in c.lines:
                db.add(StockRecipeLine(product_id=product.id, item_id=item_id, quantity_milli=qty))
            record_audit(
                db, c.actor, "stock.recipe", f"product:{product.id}", {"lines": [[i, q] for i, q in c.lines], "before": before}, at=now
            )

    # -- movements the manager and the bar record --------------------------------------------------

    @handles(RecordDelivery)
    def deliver(self, c: RecordDelivery) -> int:
        key = _form_key(c.form_key)
        quantity = _quantity(c.quantity_milli)
        price = c.price_cents
        if isinstance(price, bool) or not isinstance(price, int) or not 0 <= price <= MAX_AMOUNT_CENTS:
            raise StockRefused(N_("Give the price in euros, e.g. 12,50."))
        if c.vat_percent not in VAT_RATES:
            raise StockRefused(N_("VAT is one of %(rates)s %%."), rates=", ".join(str(r) for r in VAT_RATES))
        supplier = _clean(c.supplier, MAX_NAME)
        if len(supplier) < 2:
            raise StockRefused(N_("Name the supplier (at least 2 letters)."))
        now = self.h.clock()
        with self.h.store.session() as db:
            again = db.scalar(select(StockMovement.id).where(StockMovement.form_key == key)) if key else None
            if again is not None:
                return again
            item = self._item(db, c.item)
            d = rules.Delivery(price, c.vat_percent, c.includes_vat)
            item.unit_cost_cents = rules.unit_cost(d.net_cents, quantity)
            m = self._move(
                db,
                item,
                quantity,
                "delivery",
                now,
                c.actor,
                d.net_cents,
                supplier=supplier,
                price_net_cents=d.net_cents,
                price_gross_cents=d.gross_cents,
                vat_percent=c.vat_percent,
                note=_clean(c.note, MAX_NOTE) or None,
                form_key=key,
            )
            db.flush()
            return m.id

    @handles(WriteOffStock)
    def write_off(self, c: WriteOffStock) -> int:
        key = _form_key(c.form_key)
        quantity = _quantity(c.quantity_milli)
        if c.reason not in WRITE_OFF_REASONS:
            raise StockRefused(N_("Choose why it is written off: broken, expired, a staff drink or other."))
        note = _clean(c.note, MAX_NOTE)
        if c.reason == "other" and len(note) < 3:
            raise StockRefused(N_("Write what happened (at least %(min)d letters)."), min=3)
        now = self.h.clock()
        with self.h.store.session() as db:
            again = db.scalar(select(StockMovement.id).where(StockMovement.form_key == key)) if key else None
            if again is not None:
                return again
            item = self._item(db, c.item)
            m = self._move(db, item, -quantity, "write_off", now, c.actor, reason=c.reason, note=note or None, form_key=key)
            db.flush()
            return m.id

    @handles(CountStock)
    def count(self, c: CountStock) -> int:
        key = _form_key(c.form_key)
        if not c.counts:
            raise StockRefused(N_("Count at least one item."))
        seen: set[int] = set()
        for item_id, counted in c.counts:
            _quantity(counted, low=0)
            if item_id in seen:
                raise StockRefused(N_("Each stock item once in a count."))
            seen.add(item_id)
        now = self.h.clock()
        with self.h.store.session() as db:
            again = db.scalar(select(StockCount.id).where(StockCount.form_key == key)) if key else None
            if again is not None:
                return again
            items = [(self._item(db, item_id), counted) for item_id, counted in c.counts]
            doc = {str(item.id): {"counted": counted, "level": item.level_milli} for item, counted in items}
            stocktake = StockCount(at=now, by=c.actor, note=_clean(c.note, MAX_NOTE), counts=doc, form_key=key)
            db.add(stocktake)
            db.flush()
            for item, counted in items:
                diff = rules.counted_difference(item.level_milli, counted)
                if diff:
                    self._move(db, item, diff, "stocktake", now, c.actor, count_id=stocktake.id)
            record_audit(db, c.actor, "stock.count", f"stock_count:{stocktake.id}", {"items": len(items)}, at=now)
            return stocktake.id
