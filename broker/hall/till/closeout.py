"""The business day: the shift opened with a float, and its close-out (the Z report), once.

Runs on the hub's writer (see broker.hall.till).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from broker.hall.ports import HallState


class CloseOut:
    def __init__(self, hall: HallState, write: Callable[[Callable[[], Any]], Any]) -> None:
        self.h = hall
        self._write = write
