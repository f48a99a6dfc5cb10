"""The business day: the shift opened with a float, and its close-out (the Z report), once.

Runs on the hub's writer (see broker.hall.till).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from sqlalchemy.orm import Session as Db

from broker.domain.schedule import business_day
from broker.hall.ports import HallState


class CloseOut:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.h = hall
        self._write = write

    def day_for(self, db: Db, at: datetime) -> date:
        """The business day a payment taken at `at` counts on (the writer, in the payment's transaction)."""
        return business_day(at, self.h.venue)
