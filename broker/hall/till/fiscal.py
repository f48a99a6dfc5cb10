"""eKasa: every sale registered once through the certified client (broker.adapters.ekasa), followed
until it is; a hand-written paragón when the client is down. Off by default.

Runs on the hub's writer (see broker.hall.till); the calls to the client run on a thread of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from broker.hall.ports import HallState


class Fiscal:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.h = hall
        self._write = write

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass
