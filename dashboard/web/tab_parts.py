"""What the tab pages and the table page share: the products by category, the words for categories
and statuses, the one-time form keys, the table page's tab part. (No page imports here, so the
table page and the tab pages can both use it.)"""

from __future__ import annotations

import uuid
from typing import Any

from broker.domain.euros import PRODUCT_CATEGORIES
from broker.domain.stock.rules import few_left
from broker.domain.till.payment_rules import PARTIAL
from broker.domain.till.revenue import UNASSIGNED
from broker.hall.read_models import HallReads
from broker.till.tab_views import ProductView, TabView
from dashboard.web.i18n import N_, gettext

CATEGORY_WORDS = {
    "table_time": N_("Table time"),
    "drinks": N_("Drinks"),
    "food": N_("Food"),
    "pizza_toppings": N_("Pizza toppings"),
    "tournament_entry": N_("Tournament entry"),
    "cue_service": N_("Cue service"),
    "other": N_("Other"),
    "deposit": N_("Booking deposits"),  # broker.bookings.bookings: a deposit's line on its own tab
}
# What money paid for, as the Z report and the reports name it: the products' categories, and money
# no line explains (UNASSIGNED; PARTIAL in a Z report frozen before part payments said what they paid for).
MONEY_CATEGORY_WORDS = {**CATEGORY_WORDS, UNASSIGNED: N_("Not itemised"), PARTIAL: N_("Part payments, not itemised")}
STATUS_WORDS = {"open": N_("not paid yet"), "partly_paid": N_("partly paid"), "paid": N_("paid in full")}


def category_word(category: str) -> str:
    """A category in the page's language (an unknown one as it is stored)."""
    word = CATEGORY_WORDS.get(category)
    return gettext(word) if word else category


def status_word(status: str) -> str:
    return gettext(STATUS_WORDS[status])


def new_form_key() -> str:
    return uuid.uuid4().hex


PRODUCTS_SHOWN = 12  # the product grid's buttons on screen before a search: three rows on the tablet


def most_sold(products: list[ProductView]) -> list[ProductView]:
    """Active products, the most sold (the last month) first; ties in the categories' order (drinks
    first), then by name: what the bar sells most is where the finger is."""
    order = {c: n for n, c in enumerate(PRODUCT_CATEGORIES)}
    active = [p for p in products if p.active]
    return sorted(active, key=lambda p: (-p.sold, order.get(p.category, len(order)), p.name.casefold()))


def product_grid(reads: HallReads, tab: TabView) -> dict[str, Any]:
    """What templates/_product_buttons.html needs besides the tab: the products `tab` takes (a
    tournament fee's tab the fees alone, a deposit's the deposit: TabView.takes, the rule that refuses the rest)."""
    products = [p for p in most_sold(reads.till.products(active_only=True)) if tab.takes(p.category)]
    return {"products": products, "products_shown": PRODUCTS_SHOWN, "form_key": new_form_key, "stock_left": stock_left(reads)}


def stock_left(reads: HallReads) -> dict[int, int]:
    """What a product button says is left (broker.domain.stock.rules.few_left: "posledné 3"): the
    tracked products with 3 or fewer portions left, none refused (a count may be wrong)."""
    return {p: n for p, n in reads.stock.left_by_product().items() if few_left(n)}


def tabs_panel(reads: HallReads, table_id: str) -> dict[str, Any]:
    """The table page's tab part: the running game's tab (products to put on it) or the last game's unpaid tab."""
    snap = reads.floor.hall_snapshot().open.get(table_id)
    tab_id = reads.till.tab_of_game(snap.id) if snap is not None else None
    unpaid = None if snap is not None else reads.till.unpaid_by_table(table_id).get(table_id)
    tab = reads.till.tab(tab_id) if tab_id is not None else None
    while tab is not None and tab.merged_into is not None:  # merged: what the table buys goes on the shared bill
        tab = reads.till.tab(tab.merged_into)
    return {
        "game_tab": tab,
        "unpaid_tab": unpaid,
        **(
            product_grid(reads, tab)
            if tab is not None
            else {"products": [], "products_shown": PRODUCTS_SHOWN, "form_key": new_form_key, "stock_left": {}}
        ),
    }
