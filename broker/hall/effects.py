"""Effects that may happen only once the database has the change: MQTT publishes, live pushes, metrics.

Every writer path collects them in an AfterCommit while its transaction is open and runs them
after the commit returns, so a rolled-back change is never published, pushed or counted, and no
transaction waits on a socket.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("lavos.hub")


@dataclass
class AfterCommit:
    actions: list[Callable[[], None]] = field(default_factory=list)

    def add(self, fn: Callable[[], None]) -> None:
        self.actions.append(fn)

    def run(self) -> None:
        for fn in self.actions:
            try:
                fn()
            except Exception:
                log.exception("after-commit action failed")
        self.actions.clear()
