"""Payments and receipts: money taken for a tab (cash with change, card, the club's other methods),
reversed by a manager with a reason, never deleted; the receipt numbered and printed.

Runs on the hub's writer (see broker.hall.till).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from broker.hall.ports import HallState
from broker.hall.till.closeout import CloseOut
from broker.hall.till.fiscal import Fiscal
from broker.hall.till.tabs import Tabs


class Payments:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any], tabs: Tabs, days: CloseOut, fiscal: Fiscal) -> None:
        self.h = hall
        self._write = write
        self._tabs = tabs
        self._days = days  # which business day a payment counts on: days.day_for(db, at)
        self._fiscal = fiscal  # every payment (and reversal) goes to fiscal.payment_recorded(db, payment, after)
