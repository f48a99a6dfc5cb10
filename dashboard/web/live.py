"""Live updates: service notifications → one bounded asyncio queue per open dashboard.

The hub calls listeners from its own threads (ingest, watchdog, request handlers) and must
never wait for a browser, so a listener only hands the event to the client's event loop with
call_soon_threadsafe. A client that falls behind (queue full) loses the detail, not the news:
its queue is emptied and it gets one "refresh" telling the page to re-fetch everything.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from broker.core.events import AlertAcked, AlertOpened, SessionChanged
from broker.domain.floor.alert_kinds import LOUD_KINDS
from broker.floor.events import LightChanged, SensorEventApplied, TableWarning

log = logging.getLogger("lavos.web.live")

QUEUE_MAX = 200
REFRESH = {"topic": "refresh"}


def page_events(topic: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    """What a page needs to know about a service notification (it re-fetches the details itself):
    one event per table that changed, so a page re-draws those cards and nothing else."""
    table = data.get("table") if isinstance(data.get("table"), str) else None
    if topic == SessionChanged.topic and data.get("action") == "transfer":
        moved_from = data.get("from_table")
        if not isinstance(moved_from, str):
            return [REFRESH]  # the other table that changed is unknown: re-draw everything
        return [{"topic": "table", "table": moved_from}, {"topic": "table", "table": table}]
    if topic in (SessionChanged.topic, SensorEventApplied.topic, LightChanged.topic, TableWarning.topic):
        return [{"topic": "table", "table": table}]
    if topic == AlertOpened.topic:
        return [{"topic": "alert", "table": table, "loud": data.get("kind") in LOUD_KINDS}]
    if topic == AlertAcked.topic:
        return [{"topic": "alert"}]
    return [{"topic": topic, "table": table}]


class Subscriber:
    """One open /events stream. `push` runs in service threads; everything else in the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, maxsize: int = QUEUE_MAX) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize)
        self.behind = False

    def push(self, topic: str, data: dict[str, Any]) -> None:
        events = page_events(topic, data)
        try:
            for event in events:
                self.loop.call_soon_threadsafe(self._put, event)
        except RuntimeError:
            pass  # the loop is closing with the server; the stream is ending anyway

    def _put(self, event: dict[str, Any]) -> None:
        if self.behind:
            return  # a refresh is already queued; it covers this event too
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(REFRESH)
            self.behind = True
            log.info("a dashboard fell behind by %d events; told it to refresh", self.queue.maxsize)

    async def next(self, timeout: float) -> dict[str, Any] | None:
        """The next event, or None after `timeout` seconds of quiet (time for a heartbeat)."""
        try:
            event = await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return None
        if event is REFRESH:
            self.behind = False
        return event
