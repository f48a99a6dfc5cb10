"""Tabs and the product list: a table's tab (one per game) or a walk-in's at the bar; items put on
them, voided with a reason; tabs merged into one bill, or split into parts to pay.

Runs on the hub's writer (see broker.hall.till).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.domain import sessions
from broker.domain.money import TABLE_TIME, MoneyLine, TabBill, tab_bill
from broker.domain.schedule import business_day
from broker.hall.ports import HallState
from broker.hall.session_log import replay_row
from broker.storage.models import Payment, Tab, TabItem, TableSession


class Tabs:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.h = hall
        self._write = write

    def start(self) -> None:
        """At the hub's start, before anything is served (e.g. seed the product list when it is empty)."""

    def open_for_game(self, db: Db, game: TableSession, actor: str) -> Tab:
        """The tab of a game that is starting: the game's bill and what is put on its table go on it.

        Called by the hub inside the start's transaction (the writer), so no game is without one.
        """
        tab = Tab(
            table_id=game.table_id,
            session_id=game.id,
            opened_at=game.started_at,
            opened_by=actor,
            business_day=business_day(game.started_at, self.h.venue),
        )
        db.add(tab)
        return tab


def _game_lines(db: Db, hall: HallState, tab: Tab, now: datetime) -> tuple[list[MoneyLine], bool]:
    """The lines of the tab's game (time, minimum, its extras and corrections) at the venue's VAT rate,
    and whether the game is over (its bill is final)."""
    if tab.session_id is None:
        return [], True
    game = db.get(TableSession, tab.session_id)
    if game is None:
        return [], True
    state = replay_row(game, hall.venue)
    bill = sessions.bill(state, hall.venue, now)
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
    todo = [tab]
    while todo:
        t = todo.pop(0)
        game, over = _game_lines(db, hall, t, now)
        lines += game + _item_lines(db, t)
        closed = closed and over
        todo += db.scalars(select(Tab).where(Tab.merged_into == t.id).order_by(Tab.id)).all()
    paid = db.scalar(select(func.coalesce(func.sum(Payment.amount_cents), 0)).where(Payment.tab_id == tab_id)) or 0
    return tab_bill(lines, int(paid), closed=closed)
