"""Who is told about committed changes (the dashboard's live views, the demo, tests)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from broker.core.events import LiveEvent

log = logging.getLogger("lavos.hub")

Listener = Callable[[str, dict[str, Any]], None]


class Listeners:
    """subscribe/unsubscribe from any thread; notify runs on the writer, after the commit.

    list.append/remove are atomic under the GIL and notify iterates a copy, so no lock is
    needed. A listener must not block: it runs on the hub's writer thread.
    """

    def __init__(self) -> None:
        self._fns: list[Listener] = []

    def subscribe(self, fn: Listener) -> None:
        self._fns.append(fn)

    def unsubscribe(self, fn: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._fns.remove(fn)

    def __bool__(self) -> bool:
        return bool(self._fns)

    @property
    def compat_list(self) -> list[Listener]:
        """The list itself, for code that still appends to `hub.listeners` (to be removed)."""
        return self._fns

    def notify(self, event: LiveEvent) -> None:
        """Tell every listener `event` as (its topic, its payload) (broker.core.events)."""
        topic, data = event.topic, event.payload()
        for fn in tuple(self._fns):
            try:
                fn(topic, data)
            except Exception:
                log.exception("listener failed")
