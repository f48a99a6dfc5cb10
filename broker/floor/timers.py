"""Time-driven rules, checked every second: prepaid time, closing time, idle tables, check-ins.

The watchdog's own thread only keeps time: every round is submitted to the hub's writer and
runs there (broker.core.writer), like a staff command, so its flags, its alerts and the
games it stops change on the one thread that changes hall state. Alerts are opened in one
transaction and staff are told after its commit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select

from broker.core.ports import HallState, HubOps
from broker.domain.floor import alert_kinds, game_ops
from broker.domain.people import membership
from broker.domain.schedule import closing_time
from broker.floor.events import TableWarning
from broker.floor.games import StopGame
from broker.storage.events import prune_events
from broker.storage.models import FoosballCheckin, Game
from devices.kinds import Kind

log = logging.getLogger("lavos.hub.watchdog")

EVENT_RETENTION = timedelta(days=400)  # raw events: a year of analytics, plus a month to compare
PRUNE_EVERY = timedelta(hours=1)
WARNING_BLINK_S = 10  # long enough to be noticed from the table, short enough not to annoy

RunOnWriter = Callable[[Callable[[], Any]], Any]


class Watchdog:
    def __init__(self, hall: HallState, hub: HubOps, run_on_writer: RunOnWriter, interval_s: float = 1.0) -> None:
        self.h = hall
        self.hub = hub
        self._run_on_writer = run_on_writer
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lavos-watchdog", daemon=True)
        self._last_prune: datetime | None = None
        # The parts' own time-driven rules, run in every round after these (the bookings' no-shows,
        # the waiting list's offers: broker.bookings.bookings, waiting_list; a tournament's table calls
        # and walkover offers: broker.tournaments.calls).
        self.rounds: list[Callable[[datetime], None]] = []

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.tick()
            except Exception:
                log.exception("watchdog round failed")

    def tick(self) -> None:
        """One round, on the writer (waits for it; from the writer itself it runs inline)."""
        self._run_on_writer(self._tick)

    def _tick(self) -> None:
        now = self.h.clock()
        for table in list(self.h.games.view()):
            self._prepaid(table, now)
        self._closing(now)
        self._idle(now)
        self._checkins(now)
        for part in self.rounds:
            part(now)
        if self._last_prune is None or now - self._last_prune > PRUNE_EVERY:
            self._last_prune = now
            with self.h.store.session() as db:
                gone = prune_events(db, now - EVENT_RETENTION)
            if gone:
                log.info("pruned %d raw events older than %s", gone, EVENT_RETENTION)

    def _prepaid(self, table: str, now: datetime) -> None:
        s = self.h.games.get(table)
        if s is None or s.state.prepaid_until is None or s.state.state != "running":
            return
        left = game_ops.prepaid_remaining(s.state, max(now, s.state.last_at))
        rt = self.h.runtime.of(table)
        billing = self.h.venue.billing
        if left is not None and left <= timedelta(0):
            if billing.prepaid_expiry == "stop":
                log.info("%s: prepaid time used up, stopping game %s", table, s.id)
                self.hub.execute(StopGame(game=s.id, actor="system", reason="prepaid time used up", at=s.state.prepaid_until))
            elif rt.prepaid_alerted_for != s.state.prepaid_until:
                # Once per run-out (an extension buys a new one), not an upsert every second.
                until = s.state.prepaid_until
                self._raise(alert_kinds.prepaid_expired(table))
                rt.prepaid_alerted_for = until  # committed: not again for this run-out
        elif left is not None and left <= timedelta(minutes=billing.prepaid_warning_min) and rt.prepaid_warned_for != s.state.prepaid_until:
            self._warned(s.id, prepaid_warned_for=s.state.prepaid_until)
            rt.prepaid_warned_for = s.state.prepaid_until  # committed: not again for this end
            self.hub.send_light(table, True, blink_s=WARNING_BLINK_S)
            self.h.listeners.notify(TableWarning(table=table, kind="prepaid", left_s=int(left.total_seconds())))

    def _closing(self, now: datetime) -> None:
        closes = closing_time(self.h.venue, now)
        warn_at = closes - timedelta(minutes=self.h.venue.billing.closing_warning_min)
        if warn_at <= now < closes:
            for table in list(self.h.games.view()):
                rt = self.h.runtime.of(table)
                game = self.h.games.get(table)
                if game is not None and rt.closing_warned_for != closes and self.hub.desired_light(table):
                    self._warned(game.id, closing_warned_for=closes)
                    rt.closing_warned_for = closes  # committed: not again for this closing
                    self.hub.send_light(table, True, blink_s=WARNING_BLINK_S)
                    self.h.listeners.notify(TableWarning(table=table, kind="closing"))
        # Sessions are never cut at closing; staff are told instead. The previous period's
        # closing has passed when `now` is within an hour after it.
        last_close = closing_time(self.h.venue, now - timedelta(hours=1))
        if last_close <= now < last_close + timedelta(hours=1):
            late = [
                table
                for table, s in self.h.games.view().items()
                if s.state.started_at < last_close and self.h.runtime.of(table).closing_alerted_for != last_close
            ]
            self._raise(*(alert_kinds.open_after_closing(table) for table in late))
            for table in late:  # committed: once per closing
                self.h.runtime.of(table).closing_alerted_for = last_close

    def _idle(self, now: datetime) -> None:
        minutes = self.h.venue.billing.idle_alert_min
        limit = timedelta(minutes=minutes)
        idle = []
        for table, s in self.h.games.view().items():
            if self.h.tables[table].kind is not Kind.POOL or s.state.state != "running":
                continue
            rt = self.h.runtime.of(table)
            last = max(filter(None, (rt.last_drop_at, s.state.running_since, s.state.started_at)))
            if now - last >= limit and rt.idle_alerted_for != last:
                idle.append((table, last))
        self._raise(*(alert_kinds.idle_session(table, minutes) for table, _ in idle))
        for table, last in idle:  # committed: once per quiet spell (a rolled-back one is tried again)
            self.h.runtime.of(table).idle_alerted_for = last

    def _warned(self, game: int, **given: datetime | None) -> None:
        """Note on the game's row the warning about to be blinked: a hub that takes over (a
        failover, a restart) loads it and does not blink the same warning again."""
        with self.h.store.session() as db:
            row = db.get(Game, game)
            if row is not None:
                for name, value in given.items():
                    setattr(row, name, value)

    def _raise(self, *specs: alert_kinds.AlertSpec) -> None:
        """Open these alerts in one transaction; staff are told once it is committed."""
        if not specs:
            return
        with self.h.store.session() as db:
            for spec in specs:
                self.h.alerts.raise_alert(db, spec)

    def _checkins(self, now: datetime) -> None:
        window = membership.checkin_window(self.h.venue.billing.foosball_checkin_min)
        with self.h.store.session() as db:
            for c in db.scalars(select(FoosballCheckin).where(FoosballCheckin.ended_at.is_(None))):
                ends = membership.checkin_ends(c.checked_in_at, c.last_goal_at, window)
                if ends <= now:
                    c.ended_at = ends
