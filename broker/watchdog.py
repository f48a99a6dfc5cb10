"""Time-driven rules, checked every second: prepaid time, closing time, idle tables, check-ins."""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import select

from broker import alert_kinds, sessions
from broker.db.events import prune_events
from broker.db.models import FoosballCheckin
from broker.schedule import closing_time
from devices.kinds import Kind

if TYPE_CHECKING:
    from broker.service import CentralService

log = logging.getLogger("lavos.hub.watchdog")

EVENT_RETENTION = timedelta(days=400)  # raw events: a year of analytics, plus a month to compare
PRUNE_EVERY = timedelta(hours=1)
WARNING_BLINK_S = 10  # long enough to be noticed from the table, short enough not to annoy


class Watchdog:
    def __init__(self, service: "CentralService", interval_s: float = 1.0) -> None:
        self.s = service
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lavos-watchdog", daemon=True)
        self._last_prune: datetime | None = None

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
            except Exception:  # noqa: BLE001 - a failed round must not stop the next one
                log.exception("watchdog round failed")

    def tick(self) -> None:
        now = self.s.clock()
        for table in list(self.s.open):
            self._prepaid(table, now)
        self._closing(now)
        self._idle(now)
        self._checkins(now)
        if self._last_prune is None or now - self._last_prune > PRUNE_EVERY:
            self._last_prune = now
            with self.s.store.session() as db:
                gone = prune_events(db, now - EVENT_RETENTION)
            if gone:
                log.info("pruned %d raw events older than %s", gone, EVENT_RETENTION)

    def _prepaid(self, table: str, now: datetime) -> None:
        s = self.s.open.get(table)
        if s is None or s.state.prepaid_until is None or s.state.state != "running":
            return
        left = sessions.prepaid_remaining(s.state, max(now, s.state.last_at))
        rt = self.s.runtime[table]
        billing = self.s.venue.billing
        if left is not None and left <= timedelta(0):
            if billing.prepaid_expiry == "stop":
                log.info("%s: prepaid time used up, stopping session %s", table, s.id)
                self.s.stop_session(s.id, actor="system", reason="prepaid time used up", at=s.state.prepaid_until)
            elif rt.prepaid_alerted_for != s.state.prepaid_until:
                # Once per run-out (an extension buys a new one), not an upsert every second.
                rt.prepaid_alerted_for = s.state.prepaid_until
                self._raise(alert_kinds.prepaid_expired(table))
        elif left is not None and left <= timedelta(minutes=billing.prepaid_warning_min) and not rt.prepaid_warned:
            rt.prepaid_warned = True
            self.s.send_light(table, True, blink_s=WARNING_BLINK_S)
            self.s.notify("warning", {"table": table, "kind": "prepaid", "left_s": int(left.total_seconds())})

    def _closing(self, now: datetime) -> None:
        closes = closing_time(self.s.venue, now)
        warn_at = closes - timedelta(minutes=self.s.venue.billing.closing_warning_min)
        if warn_at <= now < closes:
            for table in list(self.s.open):
                rt = self.s.runtime[table]
                if rt.closing_warned_for != closes and self.s.desired_light(table):
                    rt.closing_warned_for = closes
                    self.s.send_light(table, True, blink_s=WARNING_BLINK_S)
                    self.s.notify("warning", {"table": table, "kind": "closing"})
        # Sessions are never cut at closing; staff are told instead. The previous period's
        # closing has passed when `now` is within an hour after it.
        last_close = closing_time(self.s.venue, now - timedelta(hours=1))
        if last_close <= now < last_close + timedelta(hours=1):
            with self.s.lock:
                late = []
                for table, s in list(self.s.open.items()):
                    rt = self.s.runtime[table]
                    if s.state.started_at < last_close and rt.closing_alerted_for != last_close:
                        rt.closing_alerted_for = last_close
                        late.append(alert_kinds.open_after_closing(table))
                self._raise(*late)

    def _idle(self, now: datetime) -> None:
        minutes = self.s.venue.billing.idle_alert_min
        limit = timedelta(minutes=minutes)
        with self.s.lock:
            idle = []
            for table, s in self.s.open.items():
                if self.s.tables[table].kind is not Kind.POOL or s.state.state != "running":
                    continue
                last = max(filter(None, (self.s.runtime[table].last_drop_at, s.state.running_since, s.state.started_at)))
                rt = self.s.runtime[table]
                if now - last >= limit and rt.idle_alerted_for != last:
                    rt.idle_alerted_for = last
                    idle.append(table)
            self._raise(*(alert_kinds.idle_session(table, minutes) for table in idle))

    def _raise(self, *specs: alert_kinds.AlertSpec) -> None:
        """Open these alerts in one transaction; staff are told once it is committed."""
        if not specs:
            return
        from broker.service import AfterCommit

        after = AfterCommit()
        with self.s.lock, self.s.store.session() as db:
            for spec in specs:
                self.s.raise_alert(db, spec, after)
        after.run()

    def _checkins(self, now: datetime) -> None:
        window = timedelta(minutes=self.s.venue.billing.foosball_checkin_min)
        with self.s.lock, self.s.store.session() as db:
            for c in db.scalars(select(FoosballCheckin).where(FoosballCheckin.ended_at.is_(None))):
                ends = (c.last_goal_at or c.checked_in_at) + window
                if ends <= now:
                    c.ended_at = ends

