"""eKasa: every sale registered once through the certified client (broker.adapters.ekasa), followed
until it is; a hand-written paragón when the client is down. Off by default.

Runs on the hub's writer (see broker.hall.till); the calls to the client run on a thread of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session as Db

from broker.hall.effects import AfterCommit
from broker.hall.ports import HallState
from broker.storage.models import Payment


class Fiscal:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.h = hall
        self._write = write

    def payment_recorded(self, db: Db, payment: Payment, after: AfterCommit) -> None:
        """A payment (or a reversal) was just added in `db` (the writer, its transaction open, the
        payment flushed: it has its id and frozen lines). Off: it stays fiscal_state "none"."""

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass
