"""The till (issue 12): tabs and the product list, payments and receipts, the business day and its
close-out, and the eKasa registration of every sale.

Each part is a module of its own with its rules and the handlers of its commands (broker.hall.
commands); the hub's one writer (broker.core.writer) runs them, so that is the only place money
changes. `Till` only builds the parts. Money is integer cents, never deleted, only reversed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.refusals import N_
from broker.domain.till.payment_rules import PaymentRefused
from broker.domain.till.split import SplitError
from broker.storage.models import Tab
from broker.till.closeout import CloseOut, DayRefused
from broker.till.fiscal import Fiscal, FiscalRefusal
from broker.till.payments import PaymentNotFound, Payments
from broker.till.tabs import TabMissing, TabRefused, Tabs

T = TypeVar("T")
Write = Callable[[Callable[[], T]], T]


class Till(Part):
    """The till's parts, built once by the hub; see each module for what it owns."""

    as_not_found = (TabMissing, PaymentNotFound)
    as_service_error = (TabRefused, SplitError, PaymentRefused, DayRefused, FiscalRefusal)

    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.tabs = Tabs(hall, write)  # `write`: seeding the product list at start
        self.days = CloseOut(hall)
        self.fiscal = Fiscal(hall, write)  # `write`: the follow-up thread hands its results to the writer
        self.payments = Payments(hall, self.tabs, self.days, self.fiscal)

    def game_billed(self, db: Db, game_id: int) -> None:
        """A game's bill became final or changed after it (the writer, in that transaction): its tab's
        settled mark follows, e.g. a tab paid in full while the game ran is settled when it stops."""
        tab = db.scalar(select(Tab).where(Tab.session_id == game_id))
        if tab is not None:
            self.payments.game_stopped(db, tab.id)

    def bill_corrected(self, db: Db, game_id: int) -> None:
        """A manager corrected a game's bill, running or issued (the writer, in that transaction, the
        correction flushed): the tab's rules for every change of its bill hold, or the correction is
        refused (rolled back): not while the bill is split, and a tab with payments keeps receipts
        that add up to its bill (Tabs.receipts_stay_right); then its settled mark follows."""
        tab = db.scalar(select(Tab).where(Tab.session_id == game_id))
        if tab is None:
            return
        self.tabs.not_split(db, tab)  # a split's parts are the bill's: cancel it first
        self.tabs.receipts_stay_right(
            db,
            tab,
            self.tabs.h.clock(),
            N_(
                "After this correction nothing would be left to pay on %(tab)s, and its receipts would no longer match its bill:"
                " reverse its payment first (the refund), then correct the bill and take the payment of what is left."
            ),
        )
        self.payments.game_stopped(db, tab.id)

    def game_moved(self, db: Db, game_id: int, table: str) -> None:
        """A game moved to `table` (the writer, in the move's transaction): its tab moves with it, so
        the tab is named by the table the game is on (its page, the pay page, a receipt taken from
        now on, the bills list, the floor card); receipts already taken keep theirs (payment_reads)."""
        tab = db.scalar(select(Tab).where(Tab.session_id == game_id))
        if tab is not None and tab.table_id != table:
            tab.table_id = table
            self.tabs.notify(db, table, tab.id)

    def handlers(self) -> tuple[object, ...]:
        """The parts that hold command handlers."""
        return (self.tabs, self.days, self.fiscal, self.payments)

    def started(self) -> None:
        """After the hub's start: the product list is ready, the fiscal follow-up resumes what was left pending."""
        self.tabs.start()
        self.fiscal.start()

    def stopping(self) -> None:
        self.fiscal.close()
