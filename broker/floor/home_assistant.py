"""When the hub tells Home Assistant about the hall (what it says: broker.domain.floor.home_assistant).

- All discovery configs (retained), and every table's state: when the hub's link (re)connects
  and when HA announces itself on ``homeassistant/status`` ("online": HA restarted and forgot
  its MQTT entities). Both arrive as inbox items, so this runs on the hub's writer. HA's
  "online"s are coalesced: the first arms one announcement ONLINE_QUIET_S later and every other
  one meanwhile joins it. One announcement is ~60 retained publishes for the club's 14 tables:
  answered one by one, 60 "online"s in 10 ms (a flapping HA, or anyone with a hub login) made
  3,720 publishes and held the nodes' events back behind them for 0,7 s.
- A table's running amount: after every change of its game (the hub calls `table_changed` where
  it publishes the game summary, after the commit), and once a minute while a game is open,
  because the amount grows with time and nothing else is published meanwhile.

Everything here runs on the writer (the minute's tick is submitted to it like a watchdog round):
it reads open games, which only the writer may do consistently. Publishing only queues
(paho or the link process's pipe), so nothing blocks the writer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from broker.core.part import Part
from broker.domain.floor import home_assistant as ha
from broker.domain.venue import Venue
from devices import contract
from devices.kinds import Kind

log = logging.getLogger("lavos.hub.home_assistant")

AMOUNT_EVERY_S = 60.0
# HA's "online"s within this long of the first get one announcement, this long after it: HA reads
# retained configs anyway, so the wait costs nothing, and a burst of births costs one set.
ONLINE_QUIET_S = 0.5


class Publisher(Protocol):
    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None: ...


class HomeAssistant(Part):
    def __init__(
        self,
        venue: Venue,
        link: Publisher,
        summary: Callable[[str], contract.SessionSummary | None],
        run_on_writer: Callable[[Callable[[], Any]], Any],
        *,
        interval_s: float | None = None,
    ) -> None:
        self._venue = venue
        self._link = link
        self._summary = summary
        self._run_on_writer = run_on_writer
        self._billed = [t.id for t in venue.tables if Kind(t.kind).billed]
        self._discovery = ha.venue_discovery(venue)  # the venue does not change while the hub runs
        self.interval_s = interval_s or AMOUNT_EVERY_S  # read here, so a test can shorten the module's minute
        self.quiet_s = ONLINE_QUIET_S
        self.announced = 0
        self.online_seen = 0  # HA's "online"s, coalesced or not
        self._announce_due: float | None = None  # monotonic time of the armed announcement (the writer's)
        self._wake = threading.Event()  # the clock thread looks at _announce_due again
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lavos-home-assistant", daemon=True)

    def started(self) -> None:
        self.start()

    def stopping(self) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(5)

    # -- on the writer ------------------------------------------------------------------

    def ha_online(self) -> None:
        """HA said "online": one announcement `quiet_s` from the first of a burst (see the module's doc)."""
        self.online_seen += 1
        if self._announce_due is None:
            self._announce_due = time.monotonic() + self.quiet_s
            self._wake.set()

    def _announce_if_due(self) -> None:
        if self._announce_due is not None:  # not already answered by a reconnect's announce()
            self.announce()

    def announce(self) -> None:
        """Every discovery config, then every table's state (HA reads the state once it knows the entity)."""
        self._announce_due = None  # an armed one is answered by this one
        for d in self._discovery:
            self._link.publish(d.topic, d.payload(), retain=True)
        for table in self._billed:
            self.table_changed(table)
        self.announced += 1
        log.info("announced %d Home Assistant entities", len(self._discovery))

    def table_changed(self, table: str) -> None:
        if table not in self._billed:
            return
        s = self._summary(table)
        payload = ha.ha_state(0, "free") if s is None else ha.ha_state(s.amount_cents, s.state)
        self._link.publish(ha.ha_state_topic(table), payload, retain=True)

    def _tick(self) -> None:
        for table in self._billed:
            if self._summary(table) is not None:
                self.table_changed(table)

    # -- the minute's clock (its own thread; the work runs on the writer) -------------------

    def _run(self) -> None:
        next_tick = time.monotonic() + self.interval_s
        while not self._stop.is_set():
            due = self._announce_due  # a float read across threads: at worst one wake-up early or late
            until = min(next_tick, due) if due is not None else next_tick
            self._wake.wait(max(0.0, until - time.monotonic()))
            self._wake.clear()
            if self._stop.is_set():
                return
            now = time.monotonic()
            job: Callable[[], None] | None = None
            if due is not None and now >= due:
                job = self._announce_if_due
            elif now >= next_tick:
                next_tick = now + self.interval_s
                job = self._tick
            if job is None:
                continue
            try:
                self._run_on_writer(job)
            except Exception:
                log.exception("Home Assistant update failed")
