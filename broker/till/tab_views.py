"""What the pages and the API read about tabs and products: frozen values built in a reader session.

Built by broker.hall.read_models (HallReads, the "tabs and products" section) inside
`store.reader()`, so no ORM row leaves it. The money comes from the one reader,
`broker.till.tabs.bill_of_tab`; the views only add what a page shows beside it (voided
items struck through, where each line came from, the split).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Annotated, Any

from pydantic import Field
from sqlalchemy import ColumnElement, and_, case, func, or_, select
from sqlalchemy.orm import Session as Db

from broker.core.ports import HallState
from broker.domain.json_shape import HIDDEN, derived, every_field_sent, json_name
from broker.domain.till.money import MoneyLine, TabBill, TabStatus, VatRow
from broker.storage.models import Game, Payment, Product, Tab, TabItem
from broker.till.tabs import bill_of_tab, game_lines, merged_tabs, merges, name_of, takes

MAX_LISTED = 200  # unpaid tabs on the bills page: more than that is a hall that never settles
SOLD_DAYS = 30  # "most sold" counts the last month: this season's drinks, not last year's


@dataclass(frozen=True)
class ProductView:
    id: int
    name: str
    name_en: str | None
    price_cents: int
    vat_percent: int
    category: str
    active: bool
    used: bool  # an item refers to it: it can be deactivated, never deleted
    code: Annotated[str | None, HIDDEN] = None  # the venue file's extra it stands for ("topping"), if any
    sold: Annotated[int, HIDDEN] = 0  # units on tabs in the last SOLD_DAYS (voided ones not): the bar's buttons put the most sold first


@dataclass(frozen=True)
class TabItemView:
    id: int
    tab_id: Annotated[int, HIDDEN]  # its source's (TabSource.tab_id)
    name: str
    name_en: str | None
    category: str
    quantity: int
    unit_cents: int
    vat_percent: int
    added_at: datetime
    added_by: str
    voided_at: datetime | None
    voided_by: str | None
    void_reason: str | None
    product_id: Annotated[int | None, HIDDEN] = None
    code: Annotated[str | None, HIDDEN] = None  # its product's code: the venue file's extra it is ("topping")

    @derived
    def amount_cents(self) -> int:
        return self.quantity * self.unit_cents


@dataclass(frozen=True)
class TabSource:
    """One tab's own lines on a bill: the tab itself, or a tab merged into it."""

    tab_id: int
    name: str
    name_en: str
    game_lines: tuple[MoneyLine, ...]
    items: tuple[TabItemView, ...]  # voided ones included (shown struck through)
    game_id: Annotated[int | None, HIDDEN] = None  # its game, if it has one

    @derived
    def total_cents(self) -> int:
        return sum(x.amount_cents for x in self.game_lines) + sum(i.amount_cents for i in self.items if i.voided_at is None)


@every_field_sent
@dataclass(frozen=True)
class SplitPart:
    """One part of a split bill, as stored (broker.domain.till.split): what its payment pays for."""

    n: int  # 1-based: the payment's `part`
    amount_cents: int
    lines: list[dict[str, Any]]  # receipt-shaped lines (broker.domain.till.receipt.ReceiptLine's fields)
    vat: list[dict[str, int]]  # per VAT rate: vat_percent, gross_cents, vat_cents
    keys: list[str] | None = None  # items mode: the bill lines (MoneyLine.key) of the part


@dataclass(frozen=True)
class SplitPlan:
    """A tab's bill split into parts to pay (Tab.split, broker.domain.till.split)."""

    mode: str  # equal, items, amounts
    total_cents: int  # the bill's total when it was split
    parts: tuple[SplitPart, ...]

    @classmethod
    def of(cls, stored: Mapping[str, Any]) -> SplitPlan:
        parts = tuple(
            SplitPart(int(p["n"]), int(p["amount_cents"]), list(p.get("lines") or []), list(p.get("vat") or []), p.get("keys"))
            for p in stored.get("parts") or []
        )
        return cls(str(stored.get("mode", "")), int(stored.get("total_cents", 0)), parts)


@every_field_sent
@dataclass(frozen=True)
class TabView:
    """A tab with its bill: every line, VAT per rate, paid and owed; where its lines came from; its split."""

    id: int
    name: str
    name_en: str
    table_id: str | None
    game_id: Annotated[int | None, json_name("session_id")]
    label: str
    opened_at: datetime
    opened_by: str
    business_day: date
    merged_into: int | None
    merged_into_name: Annotated[str | None, HIDDEN]
    merged_into_name_en: Annotated[str | None, HIDDEN]
    split: SplitPlan | None
    bill: Annotated[TabBill, HIDDEN]  # the JSON says it as lines, vat, total, paid, owed, status
    sources: tuple[TabSource, ...]
    game_running: bool
    payments: Annotated[int, HIDDEN]  # how many payment rows (reversals included)
    holds: Annotated[
        str | None,
        Field(description="The product category this tab holds only (a tournament entry fee's, a booking deposit's); null: anything"),
    ] = None
    item_id: Annotated[int | None, Field(description="POST .../items: the item made (or found again by its request_id)")] = None

    def takes(self, category: str) -> bool:
        """Whether a product of `category` may go on this tab (broker.till.tabs.takes)."""
        return takes(self.holds, category)

    @property
    def merges(self) -> bool:
        """Whether this tab is merged with others (broker.till.tabs.merges)."""
        return merges(self.holds)

    @derived
    def status(self) -> TabStatus:
        return self.bill.status

    @derived
    def total_cents(self) -> int:
        return self.bill.total_cents

    @derived
    def paid_cents(self) -> int:
        return self.bill.paid_cents

    @derived
    def owed_cents(self) -> int:
        return self.bill.owed_cents

    @derived
    def lines(self) -> tuple[MoneyLine, ...]:
        return self.bill.lines

    @derived
    def vat(self) -> tuple[VatRow, ...]:
        return self.bill.vat

    @property
    def walk_in(self) -> bool:
        return self.table_id is None

    @property
    def games(self) -> tuple[int, ...]:
        """The games whose bills count on this tab (its own, and those of the tabs merged into it)."""
        return tuple(src.game_id for src in self.sources if src.game_id is not None)


@dataclass(frozen=True)
class UnpaidTab:
    """A line of the bills page's "unpaid" list and of the floor card's badge."""

    id: int
    name: str
    name_en: str
    table_id: str | None
    game_id: Annotated[int | None, json_name("session_id")]
    opened_at: datetime
    owed_cents: int
    status: TabStatus
    game_running: Annotated[bool, HIDDEN]  # the floor card's badge: the game is still on


@dataclass(frozen=True)
class SharedMember:
    """One tab of a shared (merged) bill: a table's game, or a walk-in."""

    tab_id: int
    table_id: str | None
    game_id: int | None
    name: str  # short: "Pool 2", or a walk-in's label
    name_en: str
    running: bool  # its game still runs


@dataclass(frozen=True)
class SharedTab:
    """A bill several tabs are merged into (a party on two tables): the floor card of each of its
    tables says so, and which of its games still run (it is paid when none does)."""

    home_id: int
    members: tuple[SharedMember, ...]

    def others(self, table: str) -> tuple[SharedMember, ...]:
        """The tabs sharing the bill with `table`'s."""
        return tuple(m for m in self.members if m.table_id != table)

    @property
    def running(self) -> tuple[SharedMember, ...]:
        return tuple(m for m in self.members if m.running)


def product_views(db: Db, *, active_only: bool, now: datetime | None = None) -> list[ProductView]:
    """The product list by category and name, each with whether an item refers to it and how many
    were sold since `now` - SOLD_DAYS (one pass over the items, as "used" alone took before)."""
    q = select(Product).order_by(Product.category, Product.name)
    if active_only:
        q = q.where(Product.active.is_(True))
    recent: ColumnElement[bool] = TabItem.voided_at.is_(None)
    if now is not None:
        recent = and_(recent, TabItem.added_at >= now - timedelta(days=SOLD_DAYS))
    sold_sum = func.sum(case((recent, TabItem.quantity), else_=0))
    per_product = select(TabItem.product_id, sold_sum).where(TabItem.product_id.is_not(None)).group_by(TabItem.product_id)
    counts: dict[int | None, int | None] = {row[0]: row[1] for row in db.execute(per_product)}
    return [_product_view(p, p.id in counts, int(counts.get(p.id) or 0)) for p in db.scalars(q)]


def _product_view(p: Product, used: bool, sold: int = 0) -> ProductView:
    return ProductView(p.id, p.name, p.name_en, p.price_cents, p.vat_percent, p.category, bool(p.active), used, p.code, sold)


def product_of_extra(db: Db, code: str) -> ProductView | None:
    """The product that stands for the venue file's extra `code` ("topping"), None if none does."""
    p = db.scalar(select(Product).where(Product.code == code))
    return _product_view(p, True) if p is not None else None


def _item_view(i: TabItem, code: str | None) -> TabItemView:
    return TabItemView(
        i.id, i.tab_id, i.name, i.name_en, i.category, i.quantity, i.unit_cents, i.vat_percent, i.added_at, i.added_by, i.voided_at,
        i.voided_by, i.void_reason, i.product_id, code,
    )  # fmt: skip


def _items(db: Db, tab_id: int) -> tuple[TabItemView, ...]:
    rows = db.execute(
        select(TabItem, Product.code)
        .outerjoin(Product, Product.id == TabItem.product_id)
        .where(TabItem.tab_id == tab_id)
        .order_by(TabItem.id)
    ).all()
    return tuple(_item_view(i, code) for i, code in rows)


def game_items(db: Db, game_ids: list[int]) -> dict[int, tuple[TabItemView, ...]]:
    """What was put on each game's own tab (voided items included), by game: one query for a list."""
    out: dict[int, list[TabItemView]] = {g: [] for g in game_ids}
    if not game_ids:
        return {}
    rows = db.execute(
        select(TabItem, Product.code, Tab.session_id)
        .join(Tab, Tab.id == TabItem.tab_id)
        .outerjoin(Product, Product.id == TabItem.product_id)
        .where(Tab.session_id.in_(game_ids))
        .order_by(TabItem.id)
    ).all()
    for i, code, game in rows:
        if game is not None:  # always: only games' tabs were asked for
            out[game].append(_item_view(i, code))
    return {g: tuple(items) for g, items in out.items()}


def tab_view(db: Db, hall: HallState, tab: Tab, now: datetime) -> TabView:
    bill = bill_of_tab(db, hall, tab.id, now)
    sources = []
    running = False
    for t in merged_tabs(db, tab):
        lines, over = game_lines(db, hall, t, now)
        running = running or not over
        sources.append(TabSource(t.id, name_of(hall, t).name, str(name_of(hall, t)), tuple(lines), _items(db, t.id), t.session_id))
    into = db.get(Tab, tab.merged_into) if tab.merged_into is not None else None
    count = db.scalar(select(func.count()).select_from(Payment).where(Payment.tab_id == tab.id)) or 0
    return TabView(
        id=tab.id,
        name=name_of(hall, tab).name,
        name_en=str(name_of(hall, tab)),
        table_id=tab.table_id,
        game_id=tab.session_id,
        label=tab.label,
        opened_at=tab.opened_at,
        opened_by=tab.opened_by,
        business_day=tab.business_day,
        merged_into=tab.merged_into,
        merged_into_name=name_of(hall, into).name if into else None,
        merged_into_name_en=str(name_of(hall, into)) if into else None,
        split=SplitPlan.of(tab.split) if tab.split else None,
        bill=bill,
        sources=tuple(sources),
        game_running=running,
        payments=count,
        holds=tab.holds,
    )


def unpaid_tabs(db: Db, hall: HallState, now: datetime) -> list[UnpaidTab]:
    """Tabs still to be paid, oldest first: walk-ins not paid in full, and stopped games' tabs with
    something owed. A tab merged into another counts there; a running game is on the floor, not here."""
    # A running game's own tab is left out before its bill is worked out (a replay of its ops): on a
    # full evening those are most of the unsettled tabs, and each cost a few milliseconds for nothing.
    rows = db.scalars(
        select(Tab)
        .outerjoin(Game, Game.id == Tab.session_id)
        .where(Tab.merged_into.is_(None), Tab.settled_at.is_(None), or_(Tab.session_id.is_(None), Game.state == "stopped"))
        .order_by(Tab.opened_at.desc(), Tab.id.desc())
        .limit(MAX_LISTED)
    ).all()
    out = []
    for tab in rows:
        bill = bill_of_tab(db, hall, tab.id, now)
        if bill.status == "paid" or not bill.closed:
            continue
        if tab.table_id is not None and bill.owed_cents <= 0:
            continue
        out.append(
            UnpaidTab(tab.id, name_of(hall, tab).name, str(name_of(hall, tab)), tab.table_id, tab.session_id, tab.opened_at,
                      bill.owed_cents, bill.status, False)
        )  # fmt: skip
    out.reverse()
    return out


def unpaid_by_table(db: Db, hall: HallState, now: datetime, only: str | None = None) -> dict[str, UnpaidTab]:
    """Per table with no game running, its last game's tab when that is unpaid (the floor card's badge)."""
    out: dict[str, UnpaidTab] = {}
    tables = select(Tab.table_id, func.max(Game.started_at).label("at")).join(Game, Game.id == Tab.session_id)
    tables = tables.where(Tab.table_id.is_not(None)) if only is None else tables.where(Tab.table_id == only)
    last = tables.group_by(Tab.table_id).subquery()
    rows = db.scalars(
        select(Tab)
        .join(Game, Game.id == Tab.session_id)
        .join(last, (last.c.table_id == Tab.table_id) & (last.c.at == Game.started_at))
        .where(Tab.settled_at.is_(None), Game.state == "stopped")
    ).all()
    for tab in rows:
        home = tab
        while home.merged_into is not None:
            nxt = db.get(Tab, home.merged_into)
            if nxt is None:
                break
            home = nxt
        bill = bill_of_tab(db, hall, home.id, now)
        if bill.status == "paid" or bill.owed_cents <= 0 or tab.table_id is None:
            continue
        out[tab.table_id] = UnpaidTab(
            home.id, name_of(hall, home).name, str(name_of(hall, home)), home.table_id, home.session_id, home.opened_at,
            bill.owed_cents, bill.status, not bill.closed,
        )  # fmt: skip
    return out


def mergeable_tabs(db: Db, hall: HallState, now: datetime) -> list[UnpaidTab]:
    """Tabs another may be merged onto or merged from (tabs.Tabs.merge has the rules): open, not
    merged, not split, nothing paid yet; a running game's too (a party playing on two tables)."""
    paid = select(Payment.tab_id)
    rows = db.scalars(
        select(Tab)
        .where(Tab.merged_into.is_(None), Tab.settled_at.is_(None), Tab.id.not_in(paid))
        .order_by(Tab.opened_at, Tab.id)
        .limit(MAX_LISTED)
    ).all()
    # JSON: a cancelled split is stored as JSON null, not NULL, so it is looked at here.
    return [_listed(db, hall, tab, now) for tab in rows if not tab.split and merges(tab.holds)]


def shared_tabs(db: Db, hall: HallState) -> dict[int, SharedTab]:
    """Every bill still to be paid that other tabs are merged into, by the id of each of its tabs."""
    homes = db.scalars(
        select(Tab).where(Tab.settled_at.is_(None), Tab.id.in_(select(Tab.merged_into).where(Tab.merged_into.is_not(None))))
    ).all()
    out: dict[int, SharedTab] = {}
    for home in homes:
        members = []
        for t in merged_tabs(db, home):
            game = db.get(Game, t.session_id) if t.session_id is not None else None
            short = name_of(hall, t, short=True)
            members.append(
                SharedMember(t.id, t.table_id, t.session_id, short.name, str(short), game is not None and game.stopped_at is None)
            )
        shared = SharedTab(home.id, tuple(members))
        out.update((m.tab_id, shared) for m in members)
    return out


def tab_of_game(db: Db, game_id: int) -> int | None:
    return db.scalar(select(Tab.id).where(Tab.session_id == game_id))


def todays_tabs(db: Db, hall: HallState, day: date, now: datetime) -> list[UnpaidTab]:
    """The tabs of a business day (walk-ins and games), newest first, with what each still owes."""
    rows = db.scalars(select(Tab).where(Tab.business_day == day).order_by(Tab.opened_at.desc(), Tab.id.desc()).limit(MAX_LISTED)).all()
    return [_listed(db, hall, tab, now) for tab in rows]


def _listed(db: Db, hall: HallState, tab: Tab, now: datetime) -> UnpaidTab:
    """A tab as a list shows it: its name, what it still owes and whether a game on it runs."""
    bill = bill_of_tab(db, hall, tab.id, now)
    name = name_of(hall, tab)
    return UnpaidTab(
        tab.id, name.name, str(name), tab.table_id, tab.session_id, tab.opened_at, bill.owed_cents, bill.status, not bill.closed
    )
