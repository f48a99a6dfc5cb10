"""Tabs and the product list: a table's tab (one per game) or a walk-in's at the bar; items put on
them, voided with a reason; tabs merged into one bill, or split into parts to pay.

Runs on the hub's writer (see broker.till): every public method submits its work there and
waits, so two taps on two tablets are validated one after the other. Every change is audited
(who, when, why); nothing is deleted: an item is voided, a product deactivated, a merge and a
split are recorded on the tab and in the audit log.

The rules, each in one place here:
- an item copies the product's name, price, VAT rate and category when it is put on a tab, so a
  later price change never changes a tab;
- staff void an item while nothing is paid on its tab; after a payment only a manager
  (`may_void_paid`, the dashboard's "tabs.void_paid"), and only while a later receipt can still
  correct what the earlier ones said: a void that would leave nothing to pay on a stopped tab whose
  receipts then no longer match its bill (per VAT rate and category), or money paid for nothing,
  waits for the payment's reversal; the same rule (`receipts_stay_right`) holds for the other
  change that can lower a bill with payments: a manager's correction of the tab's game
  (broker.till; a merge only adds to a bill still owing, a split is made before any payment);
- a merged tab takes nothing more (its lines count on the tab it was merged into); only unpaid
  tabs merge (B has no payment, A is not paid in full), never into itself, a merged tab or a chain;
- a split (broker.domain.till.split) is made on a tab whose game is stopped and that has no payment
  yet, and it freezes the bill: no item, void, merge or correction of its game changes a split tab until the split is
  cancelled (only while no part is paid);
- a tab opened for one thing (`Tab.holds`: a player's tournament entry fee, whose payments are the
  prize pot; a booking's deposit, kept or given back whole) holds items of that category only and
  is merged with no other tab, either way: what is paid on it is that thing's money and nothing
  else, whatever is split, voided or reversed on it later (a drink goes on the guest's own tab).

Double taps: a form carries a one-time key (`form_key`), stored with the tab or item it made
(unique in its table, like a payment's `request_id`), so a repeat is answered with what the first
made, also after a hub restart between the two taps; a key that made something on another tab
belongs to a stale or copied form and is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.events import SessionChanged
from broker.core.ports import HallState
from broker.domain.euros import PRODUCT_CATEGORIES, VAT_RATES
from broker.domain.floor import game_ops
from broker.domain.floor.game_log import replay_row
from broker.domain.refusals import N_, Name, Refusal
from broker.domain.tariffs import local
from broker.domain.till.money import TABLE_TIME, MoneyLine, TabBill, tab_bill
from broker.domain.till.payment_rules import settled_exactly
from broker.domain.till.receipt import ReceiptLine, lines_from_json
from broker.domain.till.split import split_amounts, split_equal, split_items
from broker.domain.till.tab_name import bar_label, tab_name
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import Game, Payment, Product, Tab, TabItem
from broker.till.business_days import open_day
from broker.till.events import TabChanged

MAX_QUANTITY = 99  # more of one thing at once is a typing mistake
MAX_PRICE_CENTS = 100_000  # 1 000 € for one product is a typing mistake
MAX_NAME = 120
MAX_LABEL = 60
REASON_MIN, REASON_MAX = 3, 200
MIN_FORM_KEY, MAX_FORM_KEY = 8, 64  # the column's width; shorter is no one-time key
# What a tab that holds one category only is for, as a refusal names it (`Tab.holds`; "deposit":
# a booking's deposit tab, made by broker.bookings.bookings).
HOLDS = {
    "tournament_entry": Name("štartovné na turnaj", "tournament entry fees"),
    "deposit": Name("zálohu na rezerváciu", "the booking deposit"),
    "credit_sale": Name("kredit člena", "a member's credit"),
    "package": Name("balík člena", "a member's package"),
}


def takes(holds: str | None, category: str) -> bool:
    """Whether a tab that holds `holds` only (None: anything) takes a product of `category`: the
    rule AddTabItem refuses by, and the pages offer by (a fee tab's page offers the fees alone)."""
    return holds is None or category == holds


def merges(holds: str | None) -> bool:
    """Whether a tab that holds `holds` only is merged with others (either way): only a tab for
    anything is (its payments would pay for the other's lines, or the other's for its own)."""
    return holds is None


class TabRefused(Refusal):
    """A tab or product change refused; nothing was changed. The facade turns it into the hub's ServiceError."""


class TabMissing(TabRefused):
    """No such tab, item or product (the hub's NotFound)."""


@command
class AddProduct(Command[int]):
    """A new product on the list (the manager's); answers its id."""

    name: str
    name_en: str
    price_cents: int
    vat_percent: int
    category: str


@command
class UpdateProduct(Command[None]):
    """Change a product (None keeps a field); items already on tabs keep what they copied."""

    product_id: int
    name: str | None = None
    name_en: str | None = None
    price_cents: int | None = None
    vat_percent: int | None = None
    category: str | None = None
    active: bool | None = None

    def changes(self) -> dict[str, Any]:
        fields = ("name", "name_en", "price_cents", "vat_percent", "category", "active")
        return {f: getattr(self, f) for f in fields if getattr(self, f) is not None}


@command
class OpenWalkInTab(Command[int]):
    """A tab with no table (a sale at the bar), named by `label` or, without one, by the time it
    opens ("Bar 18:42"); answers its id. A repeated `form_key` (a double tap, a resent form)
    answers the tab the first submit opened. `holds`: a product category the tab holds only (a
    tournament entry fee's tab: "tournament_entry"), merged with no other tab."""

    label: str = ""
    form_key: str | None = None
    holds: str | None = None


@command
class AddTabItem(Command[int]):
    """Put `quantity` of a product on a tab; answers the item's id (the first one's for a repeated form_key)."""

    tab: int
    product: int
    quantity: int = 1
    form_key: str | None = None


@command
class VoidTabItem(Command[None]):
    """Void an item with a reason; after a payment only with `may_void_paid` (the manager's tabs.void_paid),
    and never so that nothing is left to pay while the receipts no longer match the bill (reverse the payment first)."""

    tab: int
    item: int
    reason: str
    may_void_paid: bool = False


@command
class MergeTabs(Command[None]):
    """Put tab `from_tab` onto `into`: one bill for both."""

    into: int
    from_tab: int


@command
class SplitTab(Command[dict[str, Any]]):
    """Split a stopped, unpaid tab: equal `parts`, by items (`assignment`: line key -> part) or by
    `amounts`; answers the stored plan."""

    tab: int
    mode: str
    parts: int = 0
    assignment: Mapping[str, int] | None = None
    amounts: tuple[int, ...] = ()


@command
class CancelSplit(Command[None]):
    """Undo a split while no part of it is paid."""

    tab: int


# The product list a new hall starts with, when the table is empty (Tabs.start). The venue file's
# [[extras]] come first (the club's website lists them; one added to the file later becomes a
# product at the next start), at the venue's VAT rate ([billing] vat_percent), which is what the
# club's bills charged for them when they were a game's extras. Then a few drinks typical for a
# Slovak pool hall (our decision: the manager edits them on /products).
# VAT of the rest (our choice per category; the manager changes it on /products): drinks 23 %
# (alcohol and soft drinks served at a bar are not on the reduced list), food 19 % (served food:
# the 2025 reduced rate for restaurant services), tournament entry and cue service 23 % (services).
SEED_VAT = {"drinks": 23, "food": 19, "pizza_toppings": 19, "tournament_entry": 23, "cue_service": 23, "other": 23}
SEED_CATEGORY = {"topping": "pizza_toppings", "pizza_box": "food", "entry_member": "tournament_entry", "entry_guest": "tournament_entry"}
SEED_DRINKS = (  # (Slovak, English, cents) — our decision: the manager edits them
    ("Pivo 0,5 l", "Beer 0.5 l", 250),
    ("Nealko pivo 0,5 l", "Alcohol-free beer 0.5 l", 230),
    ("Kofola 0,5 l", "Kofola 0.5 l", 200),
    ("Minerálka 0,33 l", "Mineral water 0.33 l", 150),
    ("Káva espresso", "Espresso", 160),
    ("Borovička 4 cl", "Borovička 4 cl", 250),
)


def _clean(text: str | None, limit: int) -> str:
    return " ".join((text or "").split())[:limit]


def _form_key(key: object) -> str | None:
    """A form's one-time key as stored (None: the caller sent none, so every submit makes a new row)."""
    if key is None or key == "":
        return None
    if not isinstance(key, str) or not MIN_FORM_KEY <= len(key) <= MAX_FORM_KEY or not key.isascii():
        raise TabRefused(N_("This form is broken; open the tab again."))
    return key


class ItemHook(Protocol):
    def __call__(self, db: Db, item: TabItem, now: datetime, actor: str) -> None: ...


class Tabs:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.h = hall
        self._write = write
        # The stock (broker.stock, given at composition): an item put on a tab, or voided, moves its
        # product's stock in the same transaction (the writer's); None: no stock kept.
        self.item_sold: ItemHook | None = None
        self.item_voided: ItemHook | None = None

    def start(self) -> None:
        """At the hub's start, before anything is served: seed the product list when it is empty (each
        venue extra a product, always), and give a tab to a game that has none."""
        self._write(self._seed)
        self._write(self._tabs_for_untabbed_games)

    def _tabs_for_untabbed_games(self) -> None:
        # A game that was running when the till was installed (started before migration 0005)
        # has no tab, so it could not be paid; it gets one now and is paid like any other.
        # Stopped games of before are left alone: they were settled without the till.
        with self.h.store.session() as db:
            games = db.scalars(
                select(Game).outerjoin(Tab, Tab.session_id == Game.id).where(Game.stopped_at.is_(None), Tab.id.is_(None)).order_by(Game.id)
            ).all()
            for game in games:
                tab = self.open_for_game(db, game, "system")
                db.flush()
                record_audit(db, "system", "tab.open", f"tab:{tab.id}", {"session_id": game.id, "why": "a game without a tab"})

    def _seed(self) -> None:
        with self.h.store.session() as db:
            empty = not db.scalar(select(func.count()).select_from(Product))
            linked = self._link_extras(db)
            if not empty:
                if linked:  # an extra the venue file has gained since
                    record_audit(db, "system", "products.seed", "products", {"count": len(linked), "extras": linked})
                return
            for name, name_en, cents in SEED_DRINKS:
                db.add(Product(name=name, name_en=name_en, price_cents=cents, vat_percent=SEED_VAT["drinks"], category="drinks"))
            record_audit(db, "system", "products.seed", "products", {"count": len(linked) + len(SEED_DRINKS)})

    def _link_extras(self, db: Db) -> list[str]:
        """Each of the venue file's [[extras]] is a product (its `code` the extra's id): one made here
        when none stands for it yet, or the product of its name seeded before products had codes.
        The file only seeds: price, VAT and category are the manager's on /products from then on."""
        added = []
        # By name in Python: SQLite's lower() leaves "Š" as it is.
        by_name = {p.name.lower(): p for p in db.scalars(select(Product))}
        coded = {p.code for p in by_name.values()}
        for e in self.h.venue.extras:
            if e.id in coded:
                continue
            same = by_name.get(e.name.lower())
            if same is not None and same.code is None:
                same.code = e.id
                record_audit(db, "system", "product.change", f"product:{same.id}", {"code": [None, e.id]})
                continue
            category = SEED_CATEGORY.get(e.id, "other")
            rate = self.h.venue.billing.vat_percent
            rate = rate if rate in VAT_RATES else SEED_VAT[category]  # a venue file with a rate Slovakia does not have
            name = e.name if same is None else _clean(f"{e.name} ({e.id})", MAX_NAME)  # the name is another extra's
            db.add(Product(name=name, name_en=e.name_en, price_cents=e.price_cents, vat_percent=rate, category=category, code=e.id))
            added.append(e.id)
        return added

    # -- the product list (the manager's) -----------------------------------------------------

    def _check_product(self, db: Db, name: str, price_cents: int, vat_percent: int, category: str, same: int | None) -> None:
        if len(name) < 2:
            raise TabRefused(N_("Give the product a name (at least 2 letters)."))
        if isinstance(price_cents, bool) or not isinstance(price_cents, int) or not 0 <= price_cents <= MAX_PRICE_CENTS:
            raise TabRefused(N_("A price is from 0,00 € to %(max)s."), max="1 000,00 €")
        if vat_percent not in VAT_RATES:
            raise TabRefused(N_("VAT is one of %(rates)s %%."), rates=", ".join(str(r) for r in VAT_RATES))
        if category not in PRODUCT_CATEGORIES:
            raise TabRefused(N_("There is no such category."))
        other = db.scalar(select(Product).where(func.lower(Product.name) == name.lower()))
        if other is not None and other.id != same:
            raise TabRefused(N_("There is a product called %(product)s already."), product=other.name)

    @handles(AddProduct)
    def add_product(self, c: AddProduct) -> int:
        name, name_en, price_cents, vat_percent, category, actor = c.name, c.name_en, c.price_cents, c.vat_percent, c.category, c.actor
        sk, en = _clean(name, MAX_NAME), _clean(name_en, MAX_NAME)
        with self.h.store.session() as db:
            self._check_product(db, sk, price_cents, vat_percent, category, None)
            p = Product(name=sk, name_en=en or None, price_cents=price_cents, vat_percent=vat_percent, category=category, active=True)
            db.add(p)
            db.flush()
            record_audit(db, actor, "product.add", f"product:{p.id}", _product_doc(p), at=self.h.clock())
            return p.id

    @handles(UpdateProduct)
    def update_product(self, c: UpdateProduct) -> None:
        """Change name, English name, price, VAT, category or active; items already on tabs keep what they copied."""
        product_id, changes, actor = c.product_id, c.changes(), c.actor
        allowed = {"name", "name_en", "price_cents", "vat_percent", "category", "active"}
        with self.h.store.session() as db:
            p = db.get(Product, product_id)
            if p is None:
                raise TabMissing(N_("There is no such product."))
            before = _product_doc(p)
            new = {**before, **{k: v for k, v in changes.items() if k in allowed and v is not None}}
            new["name"], new["name_en"] = _clean(new["name"], MAX_NAME), _clean(new["name_en"], MAX_NAME)
            self._check_product(db, new["name"], new["price_cents"], new["vat_percent"], new["category"], p.id)
            p.name, p.name_en = new["name"], new["name_en"] or None
            p.price_cents, p.vat_percent, p.category, p.active = (
                new["price_cents"],
                new["vat_percent"],
                new["category"],
                bool(new["active"]),
            )
            changed = {k: [before[k], new[k]] for k in before if before[k] != _product_doc(p)[k]}
            if changed:
                record_audit(db, actor, "product.change", f"product:{p.id}", changed, at=self.h.clock())

    # -- opening tabs -------------------------------------------------------------------------

    def open_for_game(self, db: Db, game: Game, actor: str) -> Tab:
        """The tab of a game that is starting: the game's bill and what is put on its table go on it.

        Called by the hub inside the start's transaction (the writer), so no game is without one.
        """
        tab = Tab(
            table_id=game.table_id,
            session_id=game.id,
            opened_at=game.started_at,
            opened_by=actor,
            business_day=open_day(db, self.h.venue, game.started_at),  # after the close-out: the next day's
        )
        db.add(tab)
        return tab

    @handles(OpenWalkInTab)
    def open_walk_in(self, c: OpenWalkInTab) -> int:
        """A tab with no table (a sale at the bar), named by `label` (a name, a description) or,
        with none, by the time it opens (broker.domain.till.tab_name.bar_label): selling needs no typing."""
        label, actor, form_key = c.label, c.actor, c.form_key
        key = _form_key(form_key)
        if c.holds is not None and c.holds not in PRODUCT_CATEGORIES:
            raise TabRefused(N_("There is no such category."))
        name = _clean(label if isinstance(label, str) else "", MAX_LABEL)
        if len(name) == 1:
            raise TabRefused(N_("Name the tab (e.g. the guest's name), at least 2 letters, or leave the name empty."))
        now = self.h.clock()
        with self.h.store.session() as db:
            again = db.scalar(select(Tab.id).where(Tab.form_key == key)) if key else None
            if again is not None:
                return again
            day = open_day(db, self.h.venue, now)  # after the close-out: the next day's
            if not name:
                taken = db.scalars(select(Tab.label).where(Tab.business_day == day, Tab.table_id.is_(None))).all()
                name = bar_label(local(now, self.h.venue), set(taken))
            tab = Tab(
                table_id=None,
                session_id=None,
                label=name,
                opened_at=now,
                opened_by=actor,
                business_day=day,
                form_key=key,
                holds=c.holds,
            )
            db.add(tab)
            db.flush()
            record_audit(db, actor, "tab.open", f"tab:{tab.id}", {"label": name, "holds": c.holds}, at=now)
            tab_id = tab.id
            self.notify(db, None, tab_id)
        return tab_id

    # -- items ------------------------------------------------------------------------------

    @handles(AddTabItem)
    def add_item(self, c: AddTabItem) -> int:
        """Put `quantity` of a product on a tab (a copy of its name, price and VAT); the new item's id.

        A repeated `form_key` (a double tap, a resent form) answers the item made the first time."""
        tab_id, product_id, quantity, actor, form_key = c.tab, c.product, c.quantity, c.actor, c.form_key
        key = _form_key(form_key)
        if isinstance(quantity, bool) or not isinstance(quantity, int) or not 1 <= quantity <= MAX_QUANTITY:
            raise TabRefused(N_("The quantity is a whole number from 1 to %(max)d."), max=MAX_QUANTITY)
        now = self.h.clock()
        with self.h.store.session() as db:
            again = db.scalar(select(TabItem).where(TabItem.form_key == key)) if key else None
            if again is not None:
                if again.tab_id != tab_id:
                    raise TabRefused(N_("This form was already used on another tab; open the tab again."))
                return again.id
            tab = self._tab(db, tab_id)
            self._takes_more(db, tab)
            p = db.get(Product, product_id)
            if p is None:
                raise TabMissing(N_("There is no such product."))
            if not p.active:
                raise TabRefused(N_("%(product)s is no longer sold (the manager switched it off)."), product=p.name)
            if not takes(tab.holds, p.category):
                raise TabRefused(
                    N_("%(tab)s holds %(what)s only: what is paid on it is counted apart from the bar. Put %(product)s on another tab."),
                    tab=self._name(db, tab),
                    what=_holds(tab),
                    product=p.name,
                )
            item = TabItem(
                tab_id=tab.id,
                product_id=p.id,
                name=p.name,
                name_en=p.name_en,
                category=p.category,
                unit_cents=p.price_cents,
                vat_percent=p.vat_percent,
                quantity=quantity,
                added_at=now,
                added_by=actor,
                form_key=key,
            )
            db.add(item)
            db.flush()
            if self.item_sold is not None:
                self.item_sold(db, item, now, actor)
            record_audit(
                db,
                actor,
                "tab.item_add",
                f"tab:{tab.id}",
                {"item_id": item.id, "product_id": p.id, "name": p.name, "quantity": quantity, "unit_cents": p.price_cents},
                at=now,
            )
            item_id, table = item.id, tab.table_id
            self.notify(db, table, tab_id)
        return item_id

    @handles(VoidTabItem)
    def void_item(self, c: VoidTabItem) -> None:
        """Void an item with a reason: it stays on the tab struck through and no longer counts."""
        tab_id, item_id, reason, actor, may_void_paid = c.tab, c.item, c.reason, c.actor, c.may_void_paid
        why = _clean(reason, REASON_MAX)
        if len(why) < REASON_MIN:
            raise TabRefused(N_("Write why the item is voided (at least %(min)d letters)."), min=REASON_MIN)
        now = self.h.clock()
        with self.h.store.session() as db:
            tab = self._tab(db, tab_id)
            item = db.get(TabItem, item_id)
            if item is None or item.tab_id != tab.id:
                raise TabMissing(N_("There is no such item on %(tab)s."), tab=self._name(db, tab))
            if item.voided_at is not None:
                raise TabRefused(N_("%(item)s is voided already."), item=item.name)
            self.not_split(db, tab)
            home = self._home(db, tab)
            self._void_allowed(db, home, may_void_paid)
            item.voided_at, item.voided_by, item.void_reason = now, actor, why
            self.receipts_stay_right(  # raising rolls the void back
                db,
                home,
                now,
                N_(
                    "Without %(item)s nothing would be left to pay on %(tab)s, and its receipts would no longer match its bill:"
                    " reverse its payment first (the refund), then void the item and take the payment of what is left."
                ),
                item=item.name,
            )
            if self.item_voided is not None:
                self.item_voided(db, item, now, actor)
            record_audit(
                db,
                actor,
                "tab.item_void",
                f"tab:{tab.id}",
                {"item_id": item.id, "name": item.name, "quantity": item.quantity, "amount_cents": item.quantity * item.unit_cents},
                reason=why,
                at=now,
            )
            table = tab.table_id
            self.notify(db, table, tab_id)

    # -- merge --------------------------------------------------------------------------------

    @handles(MergeTabs)
    def merge(self, c: MergeTabs) -> None:
        """Put tab `from_id` (B) onto `into_id` (A): B's lines count on A's bill, B takes nothing more."""
        into_id, from_id, actor = c.into, c.from_tab, c.actor
        now = self.h.clock()
        with self.h.store.session() as db:
            a, b = self._tab(db, into_id), self._tab(db, from_id)
            if a.id == b.id:
                raise TabRefused(N_("A tab cannot be merged into itself."))
            for t in (a, b):
                if not merges(t.holds):
                    raise TabRefused(
                        N_("%(tab)s holds %(what)s only and is paid on its own: it is merged with no other tab."),
                        tab=self._name(db, t),
                        what=_holds(t),
                    )
            for t in (a, b):
                if t.merged_into is not None:
                    raise TabRefused(N_("%(tab)s is merged into another bill already."), tab=self._name(db, t))
            if db.scalar(select(func.count()).select_from(Tab).where(Tab.merged_into == b.id)):
                raise TabRefused(
                    N_("Other tabs are merged into %(tab)s; merge them one by one into the bill that pays."), tab=self._name(db, b)
                )
            for t in (a, b):
                self.not_split(db, t)
            if _paid(db, b.id) != 0:
                raise TabRefused(N_("%(tab)s has a payment already and cannot be merged."), tab=self._name(db, b))
            bill = bill_of_tab(db, self.h, a.id, now)
            if bill.status == "paid":
                raise TabRefused(N_("%(tab)s is paid; merge into a bill that is still open."), tab=self._name(db, a))
            # No receipts check (`receipts_stay_right`) needed: B adds lines, none below nothing (items
            # cost something, a game's bill stops at 0,00 €), to a bill that still owes: a later
            # receipt pays them.
            b.merged_into = a.id
            record_audit(db, actor, "tab.merge", f"tab:{a.id}", {"merged": b.id, "into": a.id}, at=now)
            for table in (a.table_id, b.table_id):
                self.notify(db, table, into_id)

    # -- split --------------------------------------------------------------------------------

    @handles(SplitTab)
    def split(self, c: SplitTab) -> dict[str, Any]:
        """Split a stopped, unpaid tab's bill (broker.domain.till.split); replaces an earlier split while no part is paid."""
        tab_id, mode, actor, parts, assignment, amounts = c.tab, c.mode, c.actor, c.parts, c.assignment, c.amounts
        now = self.h.clock()
        with self.h.store.session() as db:
            tab = self._tab(db, tab_id)
            if tab.merged_into is not None:
                raise TabRefused(N_("%(tab)s is merged into another bill: split that one."), tab=self._name(db, tab))
            bill = bill_of_tab(db, self.h, tab.id, now)
            if not bill.closed:
                raise TabRefused(N_("The game on %(tab)s is still running: stop it before splitting the bill."), tab=self._name(db, tab))
            if bill.paid_cents != 0 or _payments(db, tab.id):
                raise TabRefused(N_("%(tab)s has a payment already: it can no longer be split."), tab=self._name(db, tab))
            short = name_of(self.h, tab, short=True)
            label, label_en = short.name, str(short)
            if mode == "equal":
                plan = split_equal(bill.lines, parts, label, label_en)
            elif mode == "amounts":
                plan = split_amounts(bill.lines, list(amounts), label, label_en)
            elif mode == "items":
                plan = split_items(bill.lines, dict(assignment or {}))
            else:
                raise TabRefused(N_("Split equally, by items or by amounts."))
            plan = {**plan, "at": now.isoformat(), "by": actor}
            tab.split = plan
            record_audit(
                db, actor, "tab.split", f"tab:{tab.id}", {"mode": mode, "parts": [p["amount_cents"] for p in plan["parts"]]}, at=now
            )
            table = tab.table_id
            self.notify(db, table, tab_id)
        return plan

    @handles(CancelSplit)
    def cancel_split(self, c: CancelSplit) -> None:
        tab_id, actor = c.tab, c.actor
        now = self.h.clock()
        with self.h.store.session() as db:
            tab = self._tab(db, tab_id)
            if not tab.split:
                raise TabRefused(N_("%(tab)s is not split."), tab=self._name(db, tab))
            if _payments(db, tab.id):
                raise TabRefused(N_("A part of %(tab)s is paid already: the split stays."), tab=self._name(db, tab))
            record_audit(db, actor, "tab.split_cancel", f"tab:{tab.id}", {"mode": tab.split.get("mode")}, at=now)
            tab.split = None
            table = tab.table_id
            self.notify(db, table, tab_id)

    # -- helpers (the writer) -----------------------------------------------------------------

    def _tab(self, db: Db, tab_id: int) -> Tab:
        tab = db.get(Tab, tab_id)
        if tab is None:
            raise TabMissing(N_("There is no such tab."))
        return tab

    def _void_allowed(self, db: Db, home: Tab, may_void_paid: bool) -> None:
        """Once money is in on a tab, only a manager voids what is on it (a drink, a game's extra):
        a void then changes what was paid for, which needs a refund decided by a manager."""
        if _paid(db, home.id) != 0 and not may_void_paid:
            raise TabRefused(N_("%(tab)s has a payment already: only a manager voids an item now."), tab=self._name(db, home))

    def receipts_stay_right(self, db: Db, tab: Tab, now: datetime, refused: str, **params: object) -> None:
        """The one check of every change that can lower a bill with payments on it, in the change's
        transaction before its commit: a void (here), a manager's correction of the tab's game
        (broker.till.Till.bill_corrected). When the receipts taken could no longer
        be right (`_receipts_right`), raises `refused` (a message naming %(tab)s, the bill that
        pays, and `params`), which rolls the change back: the manager reverses the payment first."""
        home = self._home(db, tab)
        if not self._receipts_right(db, home, now):
            raise TabRefused(refused, tab=self._name(db, home), **params)

    def _receipts_right(self, db: Db, home: Tab, now: datetime) -> bool:
        """After a change (flushed, not committed): a tab with payments must still owe something (or
        have a game running, whose bill is paid at its end), so a later receipt can correct what the
        earlier ones said (a rate or category paid for an item no longer on the bill;
        broker.domain.till.payment_rules), or its receipts must already say exactly what is left.
        Otherwise the void would leave money paid for nothing, or receipts declaring VAT on goods
        given back, with no receipt to come that could correct them (the Z report would count goods
        never sold): the manager reverses the payment first."""
        payments = _paid_on(db, home.id)
        if not payments:
            return True
        db.flush()
        bill = bill_of_tab(db, self.h, home.id, now)
        if bill.owed_cents > 0 or (bill.owed_cents == 0 and not bill.closed):
            return True
        lines = [
            ReceiptLine(x.description, x.description_en, x.quantity, x.unit_cents, x.amount_cents, x.vat_percent, x.category)
            for x in bill.lines
        ]
        return bill.owed_cents == 0 and settled_exactly(lines, [x for p in payments for x in lines_from_json(p.lines, moves=True)])

    def _home(self, db: Db, tab: Tab) -> Tab:
        """The tab whose bill this tab's lines count on (itself, or the one it is merged into)."""
        while tab.merged_into is not None:
            tab = self._tab(db, tab.merged_into)
        return tab

    def not_split(self, db: Db, tab: Tab) -> None:
        """A split freezes the bill: no item, void, merge or correction of its game until it is cancelled."""
        home = self._home(db, tab)
        if home.split:
            raise TabRefused(N_("The bill of %(tab)s is split: cancel the split first."), tab=self._name(db, home))

    def _takes_more(self, db: Db, tab: Tab) -> None:
        if tab.merged_into is not None:
            into = self._tab(db, tab.merged_into)
            raise TabRefused(N_("%(tab)s is merged into %(into)s: put it there."), tab=self._name(db, tab), into=self._name(db, into))
        self.not_split(db, tab)
        if bill_of_tab(db, self.h, tab.id).status == "paid":
            raise TabRefused(N_("%(tab)s is paid; open a new tab."), tab=self._name(db, tab))

    def _name(self, db: Db, tab: Tab) -> Name:
        """The tab as a refusal names it (Slovak on a Slovak page, English in the API)."""
        return name_of(self.h, tab)

    def notify(self, db: Db, table: str | None, tab_id: int) -> None:
        # Pages with the tab (the table's card and page, the bills list) refresh on "table" / "tab".
        effects = after_commit(db)
        if table is not None:
            effects.add(lambda: self.h.listeners.notify(SessionChanged(table=table, action="tab", tab=tab_id)))
        effects.add(lambda: self.h.listeners.notify(TabChanged(tab=tab_id)))


def name_of(hall: HallState, tab: Tab, *, short: bool = False) -> Name:
    """What staff call this tab (broker.domain.till.tab_name holds the rule)."""
    table = None
    if tab.table_id is not None:
        spec = hall.tables.get(tab.table_id)
        table = Name(spec.name, spec.name_en) if spec else Name(tab.table_id)
    return tab_name(table, tab.session_id, tab.label, tab.id, short=short)


def _holds(tab: Tab) -> Name:
    return HOLDS.get(tab.holds or "", Name(tab.holds or ""))


def _product_doc(p: Product) -> dict[str, Any]:
    return {
        "name": p.name,
        "name_en": p.name_en or "",
        "price_cents": p.price_cents,
        "vat_percent": p.vat_percent,
        "category": p.category,
        "active": bool(p.active),
    }


def _payments(db: Db, tab_id: int) -> int:
    return db.scalar(select(func.count()).select_from(Payment).where(Payment.tab_id == tab_id)) or 0


def _paid_on(db: Db, tab_id: int) -> list[Payment]:
    return list(db.scalars(select(Payment).where(Payment.tab_id == tab_id).order_by(Payment.id)))


def _paid(db: Db, tab_id: int) -> int:
    return int(db.scalar(select(func.coalesce(func.sum(Payment.amount_cents), 0)).where(Payment.tab_id == tab_id)) or 0)


def game_lines(db: Db, hall: HallState, tab: Tab, now: datetime) -> tuple[list[MoneyLine], bool]:
    """The lines of the tab's game (table time, minimum, corrections) at the venue's VAT rate,
    and whether the game is over (its bill is final)."""
    if tab.session_id is None:
        return [], True
    game = db.get(Game, tab.session_id)
    if game is None:
        return [], True
    state = replay_row(game, hall.venue)
    bill = game_ops.bill(state, hall.venue, now)
    rate = hall.venue.billing.vat_percent
    lines = [
        MoneyLine(
            key=f"session:{game.id}:{n}",
            description=line.description,
            description_en=line.description_en,
            quantity=line.quantity,
            unit_cents=line.unit_cents,
            amount_cents=line.amount_cents,
            vat_percent=rate,
            category=TABLE_TIME,
            tab_id=tab.id,
        )
        for n, line in enumerate(bill.lines)
    ]
    return lines, not state.is_open


def _item_lines(db: Db, tab: Tab) -> list[MoneyLine]:
    items = db.scalars(select(TabItem).where(TabItem.tab_id == tab.id, TabItem.voided_at.is_(None)).order_by(TabItem.id)).all()
    return [
        MoneyLine(
            key=f"item:{i.id}",
            description=i.name,
            description_en=i.name_en or i.name,
            quantity=i.quantity,
            unit_cents=i.unit_cents,
            amount_cents=i.quantity * i.unit_cents,
            vat_percent=i.vat_percent,
            category=i.category,
            tab_id=tab.id,
        )
        for i in items
    ]


def merged_tabs(db: Db, tab: Tab) -> list[Tab]:
    """The tab and every tab merged into it (and into those), the tab first, then by id."""
    out: list[Tab] = []
    todo = [tab]
    while todo:
        t = todo.pop(0)
        out.append(t)
        todo += db.scalars(select(Tab).where(Tab.merged_into == t.id).order_by(Tab.id)).all()
    return out


def bill_of_tab(db: Db, hall: HallState, tab_id: int, now: datetime | None = None) -> TabBill:
    """What a tab owes now: its game's bill, its items and those of every tab merged into it, less its payments.

    Any thread (it only reads `db`); a running game is billed up to `now` (default: the hub's clock).
    """
    now = now or hall.clock()
    tab = db.get(Tab, tab_id)
    if tab is None:
        raise KeyError(tab_id)
    lines: list[MoneyLine] = []
    closed = True
    for t in merged_tabs(db, tab):
        game, over = game_lines(db, hall, t, now)
        lines += game + _item_lines(db, t)
        closed = closed and over
    return tab_bill(lines, _paid(db, tab_id), closed=closed)
