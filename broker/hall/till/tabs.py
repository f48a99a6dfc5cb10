"""Tabs and the product list: a table's tab (one per game) or a walk-in's at the bar; items put on
them, voided with a reason; tabs merged into one bill, or split into parts to pay.

Runs on the hub's writer (see broker.hall.till).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session as Db

from broker.domain.schedule import business_day
from broker.hall.ports import HallState
from broker.storage.models import Tab, TableSession


class Tabs:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.h = hall
        self._write = write

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
