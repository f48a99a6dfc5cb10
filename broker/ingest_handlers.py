"""What the service does with each message from the tables.

One batch is one database transaction; each message runs in its own savepoint, so a message
that trips a bug is counted and dropped without holding up the others (or being retried
forever). Events are applied only if their (table, boot, seq) is new.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker import alert_kinds
from broker.db.events import EventKey, count_reject, insert_events_once
from broker.db.models import FoosballCheckin, Node
from broker.hub_link import Inbound
from broker.members import is_valid_card
from broker.tariffs import local
from devices import contract
from devices.kinds import Kind

if TYPE_CHECKING:
    from broker.service import AfterCommit, CentralService

log = logging.getLogger("lavos.hub.ingest")

OUTBOX_ALERT_DEPTH = 200


class IngestHandlers:
    def __init__(self, service: "CentralService") -> None:
        self.s = service
        self.applied = 0
        self.duplicates = 0
        self.rejected = 0
        self._last_reject_log = 0.0
        self._last_metric_at = datetime.min.replace(tzinfo=timezone.utc)

    # -- batch ----------------------------------------------------------------------

    def apply_batch(self, batch: list[Inbound]) -> None:
        from broker.service import AfterCommit

        decoded: list[tuple[Inbound, contract.Message | None, str | None]] = []
        for m in batch:  # validation needs no database: do it outside the transaction
            try:
                msg = contract.decode(m.topic, m.payload)
                if msg.topic.table is not None and msg.topic.table not in self.s.tables:
                    raise contract.ContractError(f"table {msg.topic.table!r} is not in the venue file")
                decoded.append((m, msg, None))
            except contract.ContractError as e:
                decoded.append((m, None, str(e)))
        now = self.s.clock()
        # Fast path: the whole batch in one transaction, no savepoints (they cost as much as the
        # rest of the work). If any message trips a bug, the batch is rolled back and redone
        # with a savepoint per message, so only that message is dropped. In-memory effects wait
        # in `after` until the commit, so a redone batch never counts anything twice.
        for careful in (False, True):
            after = AfterCommit()
            try:
                self._apply(decoded, now, after, careful)
                break
            except Exception:
                self.s.load_open_causes()  # the transaction is gone: so are the alerts it opened or closed
                if careful:
                    raise
                log.warning("a message in a batch of %d failed; redoing the batch message by message", len(decoded))
        after.run()

    def _apply(self, decoded, now: datetime, after: "AfterCommit", careful: bool) -> None:
        with self.s.lock, self.s.store.session() as db:
            rows = [self._event_row(msg.body, now) for _, msg, _ in decoded if msg is not None and msg.topic.kind == "event"]
            new = insert_events_once(db, rows)  # one statement for the whole batch
            for m, msg, error in decoded:
                if msg is None:
                    self._reject(db, m.topic, "invalid", error or "", after)
                    continue
                if msg.topic.kind == "event":
                    key = EventKey(msg.body.table, msg.body.boot, msg.body.seq)
                    if key not in new:
                        after.add(self._count_duplicate)
                        continue
                    new.discard(key)  # the same event twice in one batch is applied once
                if not careful:
                    self._one(db, msg, now, after)
                    continue
                try:
                    with db.begin_nested():
                        self._one(db, msg, now, after)
                except Exception as e:  # noqa: BLE001 - one bad message must not block the rest
                    log.exception("error applying %s", m.topic)
                    self._reject(db, m.topic, "handler_error", repr(e), after)

    @staticmethod
    def _event_row(ev, now: datetime) -> dict:
        return dict(table_id=ev.table, boot=ev.boot, seq=ev.seq, type=ev.type, node_ts=ev.ts,
                    ts_synced=ev.ts_synced, data=ev.data.model_dump(mode="json"), received_at=now)

    def _count_duplicate(self) -> None:
        self.duplicates += 1

    def _reject(self, db: Db, topic: str, reason: str, error: str, after: "AfterCommit") -> None:
        after.add(lambda: self._log_reject(topic, error))
        # The topic of a garbage message can itself be garbage: count per table at most.
        parts = topic.split("/")
        key = "/".join(parts[:4]) if len(parts) > 4 else topic
        count_reject(db, key[:200], reason, error)

    def _log_reject(self, topic: str, error: str) -> None:
        self.rejected += 1
        now = time.monotonic()
        if now - self._last_reject_log > 1.0:  # a flood of garbage must not flood the log
            self._last_reject_log = now
            log.warning("dropped a message on %r: %s (%d dropped so far)", topic[:200], error, self.rejected)

    def _one(self, db: Db, msg: contract.Message, now: datetime, after: "AfterCommit") -> None:
        t = msg.topic
        if t.kind == "hub_status" or t.table is None:
            return
        if t.kind == "event":
            self._event(db, msg.body, now, after)
        elif t.kind == "status":
            self._status(db, t.table, msg.body, after)
        elif t.kind == "light_state":
            self._light_state(db, t.table, msg.body, after)
        elif t.kind == "telemetry":
            self._telemetry(db, t.table, msg.body, after)
        # light/set and session are ours; we see them only if someone else publishes them.

    # -- events ---------------------------------------------------------------------

    def _event(self, db: Db, ev, now: datetime, after: "AfterCommit") -> None:
        handler = getattr(self, f"_on_{ev.type}")
        handler(db, ev, now, after)
        after.add(lambda: self._applied(ev))

    def _applied(self, ev) -> None:
        self.applied += 1
        if self.s.listeners:
            self.s.notify("event", {"table": ev.table, "type": ev.type, "data": ev.data.model_dump(mode="json")})

    def _on_pocket(self, db: Db, ev, now: datetime, after: "AfterCommit") -> None:
        after.add(lambda: self._count_drop(ev.table, now))
        if self.s.metrics:
            at = self._metric_time(ev, now)
            after.add(lambda: self.s.metrics.pocket(ev.table, ev.data.pocket, at))
        if ev.table in self.s.open:
            self.s.settle(db, f"idle_session:{ev.table}", now)
        else:
            self.s.raise_alert(db, alert_kinds.play_without_session(ev.table), after)

    def _metric_time(self, ev, now: datetime) -> datetime:
        """When the ball dropped, for the time series.

        InfluxDB keeps one point per series and timestamp, so two drops in one pocket must never
        share one: a synced node's own timestamp is exact (and right even for events replayed
        after an outage); otherwise the receipt time, nudged forward to stay unique.
        """
        if ev is not None and ev.ts_synced:
            return ev.ts
        self._last_metric_at = max(now, self._last_metric_at + timedelta(milliseconds=1))
        return self._last_metric_at

    def _count_drop(self, table: str, now: datetime) -> None:
        rt = self.s.runtime[table]
        rt.last_drop_at = now
        rt.drops += 1

    def _active_checkins(self, db: Db, table: str, now: datetime) -> list[FoosballCheckin]:
        window = timedelta(minutes=self.s.venue.billing.foosball_checkin_min)
        rows = db.scalars(select(FoosballCheckin).where(FoosballCheckin.table_id == table, FoosballCheckin.ended_at.is_(None))).all()
        return [c for c in rows if (c.last_goal_at or c.checked_in_at) + window > now]

    def _foosball_play(self, db: Db, table: str, now: datetime, after: "AfterCommit", goal: bool) -> None:
        active = self._active_checkins(db, table, now)
        if not active:
            self.s.raise_alert(db, alert_kinds.foosball_no_member(table), after)
            return
        for c in active:
            if goal:
                c.goals += 1
            c.last_goal_at = now

    def _on_goal(self, db: Db, ev, now: datetime, after: "AfterCommit") -> None:
        if self.s.metrics:
            at = self._metric_time(ev, now)
            after.add(lambda: self.s.metrics.goal(ev.table, ev.data.side, at))
        if self.s.tables[ev.table].kind is Kind.FOOSBALL:
            self._foosball_play(db, ev.table, now, after, goal=True)

    def _on_activity(self, db: Db, ev, now: datetime, after: "AfterCommit") -> None:
        if self.s.tables[ev.table].kind is Kind.FOOSBALL:
            self._foosball_play(db, ev.table, now, after, goal=False)

    def _on_card(self, db: Db, ev, now: datetime, after: "AfterCommit") -> None:
        if self.s.tables[ev.table].kind is not Kind.FOOSBALL:
            log.info("card %s tapped on %s: only foosball tables check members in", ev.data.uid, ev.table)
            return
        check = is_valid_card(db, ev.data.uid, local(now, self.s.venue).date())
        if not check.ok:
            self.s.raise_alert(db, alert_kinds.card_refused(ev.table, ev.data.uid, check.message, check.message_en), after)
            return
        checkin(db, ev.table, check.member.id, now, "card")
        self.s.settle(db, f"foosball_no_member:{ev.table}", now)
        name = check.member.name
        after.add(lambda: self.s.notify("checkin", {"table": ev.table, "member": name}))

    def _on_button(self, db: Db, ev, now: datetime, after: "AfterCommit") -> None:
        pass  # the light/state that follows says what the button did

    def _on_sensor_fault(self, db: Db, ev, now: datetime, after: "AfterCommit") -> None:
        if ev.data.kind == "recovered":
            self.s.settle(db, f"sensor_fault:{ev.table}:{ev.data.sensor}", now)
        else:
            self.s.raise_alert(db, alert_kinds.sensor_fault(ev.table, ev.data.sensor, ev.data.kind), after)

    # -- node state -------------------------------------------------------------------

    def _node(self, db: Db, table: str) -> Node:
        node = db.get(Node, table)
        if node is None:
            node = Node(table_id=table, online=False, telemetry={}, reconnects=0)
            db.add(node)
        return node

    def _status(self, db: Db, table: str, st: contract.Status, after: "AfterCommit") -> None:
        now = self.s.clock()
        node = self._node(db, table)
        node.last_seen_at = now
        if st.state == "online":
            if not node.online or node.boot != st.boot:
                node.online_since = now
            node.online, node.boot, node.version = True, st.boot, st.version
            self.s.settle(db, f"node_offline:{table}", now)
            # A (re)born node has its boot state: tell it what it should be.
            after.add(lambda: self.s.resend_table(table))
        else:
            node.online = False
            if table in self.s.open:
                self.s.raise_alert(db, alert_kinds.node_offline(table), after)
        online = node.online
        after.add(lambda: self.s.notify("node", {"table": table, "online": online}))

    def _light_state(self, db: Db, table: str, ls: contract.LightState, after: "AfterCommit") -> None:
        now = self.s.clock()
        node = self._node(db, table)
        node.light_on, node.light_blink, node.light_cause, node.last_seen_at = ls.on, ls.blink, ls.cause, now
        if self.s.metrics:
            at = self._metric_time(None, now)  # two light changes in one batch are two points
            after.add(lambda: self.s.metrics.light(table, ls.on, at))
        want = self.s.desired_light(table)
        if want is not None:
            if ls.on and not want and ls.cause in ("button", "boot"):
                self.s.raise_alert(db, alert_kinds.light_without_session(table, ls.cause), after)
            elif not ls.on or want:
                self.s.settle(db, f"light_without_session:{table}", now)
        after.add(lambda: self.s.notify("light", {"table": table, "on": ls.on, "blink": ls.blink, "cause": ls.cause}))

    def _telemetry(self, db: Db, table: str, tm: contract.Telemetry, after: "AfterCommit") -> None:
        now = self.s.clock()
        node = self._node(db, table)
        node.telemetry = tm.model_dump(mode="json")
        node.telemetry_at = node.last_seen_at = now
        node.reconnects = tm.reconnects
        if self.s.metrics:
            at = self._metric_time(None, now)
            after.add(lambda: self.s.metrics.node(table, tm.uptime_s, tm.outbox, tm.cpu_temp_c, tm.reconnects, at))
        if tm.outbox >= OUTBOX_ALERT_DEPTH:
            self.s.raise_alert(db, alert_kinds.outbox_stuck(table, tm.outbox), after)
        else:
            self.s.settle(db, f"outbox_stuck:{table}", now)


def checkin(db: Db, table: str, member_id: int, now: datetime, by: str) -> FoosballCheckin:
    """Check a member in at a foosball table (a repeat tap refreshes the existing check-in)."""
    existing = db.scalars(select(FoosballCheckin).where(
        FoosballCheckin.table_id == table, FoosballCheckin.member_id == member_id, FoosballCheckin.ended_at.is_(None))).first()
    if existing is not None:
        existing.last_goal_at = now
        return existing
    row = FoosballCheckin(table_id=table, member_id=member_id, checked_in_at=now, goals=0, by=by)
    db.add(row)
    db.flush()
    return row
