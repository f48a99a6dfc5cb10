"""The demo's bar: the till as staff run it during the evening (sim/demo.py calls it).

Through the hub's facade only, as the pages do: the day opened with a float, drinks and pizza
toppings on some games' tabs, each stopped game paid (cash with change, card, or left open a while
and paid later), one walk-in drink at the bar, and at closing time the last tabs paid and the day
closed with its Z report. Which party does what follows from its number, so the same seed tells
the same story. Refusals are told, never raised: the evening goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from broker.domain.billing import format_eur
from broker.hall.facade import HubFacade
from broker.hall.hub import ServiceError
from broker.till.closeout import CloseDay, OpenDay
from broker.till.payments import PayTab
from broker.till.tab_views import ProductView
from broker.till.tabs import AddTabItem, OpenWalkInTab

FLOAT_CENTS = 100_00  # the drawer's float at opening
VARIANCE_CENTS = -50  # the drawer is counted 0,50 € short: the Z report shows a variance
LEFT_OPEN_EVERY = 5  # every fifth party's tab stays open a while ("we pay when we leave")
PAID_LATER_AFTER = 2  # ...and is paid when that many more games have been paid


def tendered_for(owed_cents: int) -> int:
    """What a guest hands over in cash: the bill rounded up to the next 5 € (to 10 € above 20 €)."""
    step = 500 if owed_cents <= 20_00 else 1000
    return -(-owed_cents // step) * step


def eur(cents: int) -> str:
    return format_eur(cents)  # "12,40 €", as the rest of the demo's story and the receipts write it


@dataclass
class Bar:
    """The till's side of the demo evening."""

    hub: HubFacade
    say: Callable[[str, str, str], None]
    staff: str
    manager: str
    day: date | None = None
    left_open: list[tuple[int, str, int]] = field(default_factory=list)  # (tab, table, paid count when left)
    paid_games: int = 0
    walk_in_done: bool = False

    # -- the evening's start and the games ----------------------------------------------------

    def open(self) -> None:
        """The bartender counts the float into the drawer and opens the day."""
        try:
            self.day = self.hub.execute(OpenDay(float_cents=FLOAT_CENTS, actor=self.staff))
            self.say("bar", f"business day {self.day.isoformat()} opened with a float of {eur(FLOAT_CENTS)}", "blue")
        except ServiceError as e:
            self.say("bar", f"staff could not open the day: {e}", "yellow")

    def game_started(self, party: int, table: str, game_id: int) -> None:
        """Some parties order: a drink for every second one, a pizza topping for every third."""
        tab = self.hub.reads.till.tab_of_game(game_id)
        if tab is None:
            return
        products = self.hub.reads.till.products(active_only=True)
        drinks = [p for p in products if p.category == "drinks"]
        toppings = [p for p in products if p.category == "pizza_toppings"]
        orders = []
        if drinks and party % 2 == 0:
            orders.append((drinks[party % len(drinks)], 1 + party % 3))
        if toppings and party % 3 == 0:
            orders.append((toppings[0], 2))
        for product, quantity in orders:
            try:
                self.hub.execute(
                    AddTabItem(tab=tab, product=product.id, quantity=quantity, form_key=f"demo-item-{tab}-{product.id}", actor=self.staff)
                )
                self.say(
                    table, f"{quantity} × {product.name_en or product.name} on the tab ({eur(product.price_cents * quantity)})", "blue"
                )
            except ServiceError as e:
                self.say(table, f"staff could not add {product.name_en or product.name}: {e}", "yellow")
        if not self.walk_in_done and party >= 2:
            self.walk_in_done = True
            self.walk_in(drinks)

    def walk_in(self, drinks: list[ProductView]) -> None:
        """Someone at the bar has a drink, no table: a walk-in tab paid in cash at once."""
        if not drinks:
            return
        try:
            tab = self.hub.execute(OpenWalkInTab(label="Bar", form_key="demo-walk-in-1", actor=self.staff))
            drink = drinks[0]
            self.hub.execute(AddTabItem(tab=tab, product=drink.id, quantity=1, form_key=f"demo-item-{tab}-{drink.id}", actor=self.staff))
            self.say("bar", f"walk-in tab {tab}: 1 × {drink.name_en or drink.name} at the bar", "blue")
            self.pay(tab, "bar", "cash")
        except ServiceError as e:
            self.say("bar", f"staff could not serve the walk-in: {e}", "yellow")

    def game_stopped(self, party: int, table: str, game_id: int) -> None:
        """The game is over: pay its tab now (cash or card), or leave it open for later."""
        tab = self.hub.reads.till.tab_of_game(game_id)
        if tab is None:
            return
        if party % LEFT_OPEN_EVERY == 0:
            self.left_open.append((tab, table, self.paid_games))
            self.say(table, f"tab {tab} left open: they pay when they leave", "magenta")
        else:
            self.pay(tab, table, "card" if party % 3 == 1 else "cash")
            self.paid_games += 1
        for waiting in [w for w in self.left_open if self.paid_games - w[2] >= PAID_LATER_AFTER]:
            self.left_open.remove(waiting)
            self.pay(waiting[0], waiting[1], "cash", later=True)

    def pay(self, tab: int, table: str, method: str, *, later: bool = False) -> None:
        """Pay what the tab owes; cash with a rounded-up amount given and the change told."""
        try:
            view = self.hub.reads.till.tab_payments(tab)
            if view is None or view.owed_cents <= 0:
                return
            owed = view.owed_cents
            tendered = tendered_for(owed) if method == "cash" else None
            taken = self.hub.execute(
                PayTab(
                    tab=tab,
                    method=method,
                    amount_cents=owed,
                    tendered_cents=tendered,
                    request_id=f"demo-pay-{tab}-{len(view.payments) + 1}",
                    actor=self.staff,
                )
            )
            p = self.hub.reads.till.payment(taken.payment_id)
            no = p.receipt_no if p else "?"
            when = "paid later" if later else "paid"
            change = p.change_cents if p else 0  # the cash due may be rounded to 0,05 €: the payment says
            how = f"cash ({eur(tendered)} given, {eur(change)} change)" if tendered is not None else "by card"
            self.say(table, f"tab {tab} {when}: {eur(owed)} {how}, receipt no. {no}", "green")
        except ServiceError as e:
            self.say(table, f"staff could not take the payment: {e}", "yellow")

    # -- closing time --------------------------------------------------------------------------

    def close(self, dashboard_url: str | None) -> None:
        """Pay what is left open and close the day: counted cash, the Z report's figures."""
        for tab, table, _ in self.left_open:
            self.pay(tab, table, "cash", later=True)
        self.left_open.clear()
        try:
            overview = self.hub.reads.till.day_overview()
            for left in self.hub.reads.till.unpaid_tabs():
                self.pay(left.id, left.table_id or "bar", "card", later=True)
            day = self.day or overview.day
            expected = self.hub.reads.till.day_report(day).expected_cash_cents
            counted = expected + VARIANCE_CENTS
            self.say("bar", f"drawer counted: {eur(counted)} (expected {eur(expected)})", "blue")
            z = self.hub.execute(CloseDay(day=day, counted_cents=counted, actor=self.manager))
        except ServiceError as e:
            self.say("bar", f"staff could not close the day: {e}", "yellow")
            return
        card = sum(m.net_cents for m in z.by_method if m.method == "card")
        self.say(
            "bar",
            f"day {z.day.isoformat()} closed, Z report: cash {eur(z.cash_cents)}, card {eur(card)}, "
            f"total {eur(z.total_cents)} in {z.payments_count} payments, variance {eur(z.variance_cents or 0)}",
            "bold",
        )
        where = f"{dashboard_url.rstrip('/')}/day/{z.day.isoformat()}/report" if dashboard_url else f"/day/{z.day.isoformat()}/report"
        self.say("bar", f"the Z report: {where} (manager login)", "bold")
