"""What the hub does with each message from the tables.

One batch is one database transaction; each message runs in its own savepoint, so a message
that trips a bug is counted and dropped without holding up the others (or being retried
forever). Events are applied only if their (table, boot, seq) is new.

A node's message is input, not truth: besides the wire contract it must fit the node as the
venue file wires it (broker.domain.floor.node_rules). What is refused is counted per node and reason, with
samples, for the monitoring page (broker.domain.floor.reject_tally).

Runs on the hub's writer thread only (broker.core.writer): it changes hall state (counters,
alerts) without a lock because nothing else changes it. It depends on the hall's state and a
few hub operations (broker.core.ports), not on the hub itself.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import exc as sa_exc
from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.adapters.inbox import Inbound
from broker.core.ports import HallState, HubOps
from broker.domain.floor import alert_kinds, node_rules
from broker.domain.floor import reject_tally as rejects
from broker.domain.people import membership
from broker.domain.tariffs import local
from broker.floor.events import CheckinChanged, LightChanged, NodeChanged, SensorEventApplied
from broker.floor.table_service import LIGHT_CAUSE
from broker.storage.after_commit import Effects, after_commit
from broker.storage.events import EventKey, insert_events_once
from broker.storage.foosball import checkin
from broker.storage.members import is_valid_card
from broker.storage.models import FoosballCheckin, Node
from broker.storage.rejects import record_rejects
from devices import contract
from devices.kinds import Kind

log = logging.getLogger("lavos.hub.ingest")

OUTBOX_ALERT_DEPTH = 200
REJECT_LOG_INTERVAL_S = 10.0  # a flood of garbage must not flood the log: one summary at most this often


class Decoded(NamedTuple):
    """One inbound message after the checks that need no database (a NamedTuple: one per message)."""

    inbound: Inbound
    msg: contract.Message | None  # None: refused, for `reason`
    reason: str | None = None
    error: str = ""
    clock_off: str | None = None  # applied at the hub's receive time; why the node's was not kept
    contract: int | None = None  # refused for CONTRACT: the version the node speaks
    table: str | None = None  # ... and the table whose node it is


class IngestHandlers:
    def __init__(self, hall: HallState, hub: HubOps) -> None:
        self.h = hall
        self.hub = hub
        self.applied = 0
        self.duplicates = 0
        self.rejected = 0  # messages dropped (an implausible node clock only flags its event)
        self.clock_flagged = 0
        self._last_reject_log = -REJECT_LOG_INTERVAL_S
        self._unlogged: Counter[tuple[str, str]] = Counter()
        self._last_metric_at = datetime.min.replace(tzinfo=UTC)
        # Hot path (bench/hub_ingest.py): the handler of each event type looked up once, not by
        # getattr on an f-string per event; ball drops' metrics points gathered per batch and
        # queued in one call after the commit (see _apply).
        self._handlers = {t: getattr(self, f"_on_{t}") for t in contract.EVENT_TYPES}
        self._drops: list[tuple[str, int, datetime]] = []
        self._touches: dict[str, tuple[alert_kinds.AlertSpec, int]] = {}
        # Tables whose node's last birth spoke another contract version: everything they send is
        # refused until a birth of ours (a retained birth comes again when the hub reconnects).
        self._other_contract: dict[str, int] = {}

    # -- batch ----------------------------------------------------------------------

    def apply_batch(self, batch: list[Inbound]) -> None:
        now = self.h.clock()
        decoded = [self._decode(m, now) for m in batch]  # validation needs no database: outside the transaction
        # Fast path: the whole batch in one transaction, no savepoints (they cost as much as the
        # rest of the work). If any message trips a bug, the batch is rolled back and redone
        # with a savepoint per message, so only that message is dropped. In-memory effects wait
        # for the commit (broker.storage.after_commit), so a redone batch never counts anything twice.
        for careful in (False, True):
            try:
                self._apply(decoded, now, careful)
                break
            except Exception:
                self.h.alerts.reload()  # the transaction is gone: so are the alerts it opened or closed
                if careful:
                    raise
                log.warning("a message in a batch of %d failed; redoing the batch message by message", len(decoded))

    def _decode(self, m: Inbound, now: datetime) -> Decoded:
        try:
            msg = contract.decode(m.topic, m.payload)
        except contract.ContractVersionError as e:
            return self._other_version(m, e)
        except contract.ContractError as e:
            return Decoded(m, None, rejects.INVALID, str(e))
        table = msg.topic.table
        if table is not None and table not in self.h.tables:
            return Decoded(m, None, rejects.UNKNOWN_TABLE, f"table {table!r} is not in the venue file")
        if table is not None and msg.topic.kind == "status":
            self._other_contract.pop(table, None)  # a birth of this version (or its will): the node speaks ours again
        elif table is not None and table in self._other_contract:
            speaks = self._other_contract[table]
            said = f"the node's birth said contract v{speaks}; this hub speaks v{contract.VERSION}"
            return Decoded(m, None, rejects.CONTRACT, said, contract=speaks, table=table)
        if msg.topic.kind != "event":
            return Decoded(m, msg)
        ev = msg.body
        if ev.type == "sensor_fault":
            why = node_rules.unknown_sensor(self.h.tables[ev.table], ev.data.sensor)
            if why:  # else any name a node makes up would open an alert of its own
                return Decoded(m, None, rejects.UNKNOWN_SENSOR, why)
        verdict = node_rules.judge_timestamp(ev.ts, ev.ts_synced, now)
        if verdict.off is None:
            return Decoded(m, msg)
        kept = ev.model_copy(update={"ts": verdict.ts, "ts_synced": verdict.synced})
        return Decoded(m, contract.Message(msg.topic, kept), clock_off=verdict.off)

    def _other_version(self, m: Inbound, e: contract.ContractVersionError) -> Decoded:
        """A message of another contract version: refused, and its node with it (CONTRACT)."""
        try:
            topic = contract.parse_topic(m.topic)
        except contract.ContractError:
            topic = None
        table = topic.table if topic is not None else None
        if table is None or table not in self.h.tables:
            return Decoded(m, None, rejects.INVALID, str(e))
        if topic is not None and topic.kind == "status":
            self._other_contract[table] = e.version
        return Decoded(m, None, rejects.CONTRACT, str(e), contract=e.version, table=table)

    def _refused(self, db: Db, tally: rejects.RejectTally, d: Decoded, now: datetime) -> None:
        self._reject(tally, d.inbound, d.reason or rejects.INVALID, d.error, now)
        if d.contract is not None and d.table is not None:
            # A node that speaks another contract: an alert naming both versions, and no longer
            # counted online (the hub does not command a node whose messages it cannot read).
            self.h.alerts.raise_alert(db, alert_kinds.node_contract(d.table, d.contract, contract.VERSION))
            node = db.get(Node, d.table)
            if node is not None:
                node.online = False

    def _apply(self, decoded: list[Decoded], now: datetime, careful: bool) -> None:
        tally = rejects.RejectTally()
        drops: list[tuple[str, int, datetime]] = []  # this attempt's ball drops, for one metrics call after its commit
        self._drops = drops
        # Drops on a table without a game touch its alert once per batch, not once per ball: a
        # touch is an upsert and a read (~0.7 ms), and a hall's backlog of such drops drained at
        # 1.5 k/s. Counted as many times as balls dropped; raised before this batch commits.
        touches: dict[str, tuple[alert_kinds.AlertSpec, int]] = {}
        self._touches = touches
        with self.h.store.session() as db:
            after = after_commit(db)
            if not careful:  # one statement for the whole batch
                new = insert_events_once(
                    db, [self._event_row(d.msg.body, now) for d in decoded if d.msg is not None and d.msg.topic.kind == "event"]
                )
            for d in decoded:
                m, msg = d.inbound, d.msg
                if msg is None:
                    self._refused(db, tally, d, now)
                    continue
                if not careful:
                    if self._fresh(msg, new, after):
                        self._one(db, msg, now, after)
                        self._flag_clock(tally, d, now)
                    continue
                try:
                    with db.begin_nested():
                        # Each event is stored in its own savepoint here too: one the database
                        # cannot store is dropped alone, instead of failing the batch for ever.
                        if msg.topic.kind == "event" and not insert_events_once(db, [self._event_row(msg.body, now)]):
                            after.add(self._count_duplicate)
                            continue
                        self._one(db, msg, now, after)
                    self._flag_clock(tally, d, now)
                except sa_exc.OperationalError:
                    # The database, not the message: a deadlock with another hub process, a
                    # locked SQLite file, a lost connection. Dropping the message would lose an
                    # event the broker already counts as delivered; the whole batch goes back to
                    # the ingest loop, which retries it and acks nothing meanwhile.
                    raise
                except Exception as e:
                    log.exception("error applying %s", m.topic)
                    self._reject(tally, m, rejects.HANDLER_ERROR, repr(e), now)
            for spec, times in touches.values():
                self.h.alerts.raise_alert(db, spec, times=times)
            if tally:
                record_rejects(db, tally, now)
                after.add(lambda: self._rejected(tally, now))
            if drops and self.h.metrics:
                metrics = self.h.metrics
                after.add(lambda: metrics.pockets(drops))
            after.add(self.h.runtime.publish)  # readers see this batch's counters from now on

    def _fresh(self, msg: contract.Message, new: set[EventKey], after: Effects) -> bool:
        """Is this message not an event stored before (or a second copy of one in this batch)?"""
        if msg.topic.kind != "event":
            return True
        key = EventKey(msg.body.table, msg.body.boot, msg.body.seq)
        if key not in new:
            after.add(self._count_duplicate)
            return False
        new.discard(key)  # the same event twice in one batch is applied once
        return True

    def _flag_clock(self, tally: rejects.RejectTally, d: Decoded, now: datetime) -> None:
        if d.clock_off:
            self._reject(tally, d.inbound, rejects.CLOCK, d.clock_off, now)

    @staticmethod
    def _event_row(ev: contract.AnyEvent, now: datetime) -> dict[str, Any]:
        # The serializer itself, as model_dump(mode="json") calls it: model_dump's own overhead
        # was a tenth of an event's cost.
        data = ev.data.__pydantic_serializer__.to_python(ev.data, mode="json")
        return dict(
            table_id=ev.table, boot=ev.boot, seq=ev.seq, type=ev.type, node_ts=ev.ts, ts_synced=ev.ts_synced, data=data, received_at=now
        )

    def _count_duplicate(self) -> None:
        self.duplicates += 1

    def _reject(self, tally: rejects.RejectTally, m: Inbound, reason: str, error: str, now: datetime) -> None:
        tally.add(rejects.bucket(m.topic, self.h.tables), reason, m.topic, error, m.payload, now)

    def _rejected(self, tally: rejects.RejectTally, now: datetime) -> None:
        """After the commit: the in-memory counters, the metric, and now and then a log line."""
        self.rejected += tally.dropped
        self.clock_flagged += sum(n for (_, reason), n in tally.counts.items() if reason == rejects.CLOCK)
        if self.h.metrics:
            for (table, reason), n in tally.counts.items():
                self.h.metrics.reject(table, reason, n, self._metric_time(None, now))
        self._unlogged.update(tally.counts)
        mono = time.monotonic()
        if mono - self._last_reject_log < REJECT_LOG_INTERVAL_S:
            return
        self._last_reject_log = mono
        last = list(tally.all_samples())[-1]
        worst = ", ".join(f"{table} {reason} ×{n}" for (table, reason), n in self._unlogged.most_common(5))
        log.warning(
            "refused or clock-flagged %d node messages since the last report (%s); the last, on %r: %s. Details: /monitoring or /api/nodes",
            sum(self._unlogged.values()),
            worst,
            last.topic,
            last.error[:200],
        )
        self._unlogged.clear()

    def _one(self, db: Db, msg: contract.Message, now: datetime, after: Effects) -> None:
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
        # light/set and the game summary (`session`) are ours; we see them only if someone else publishes them.

    # -- events ---------------------------------------------------------------------

    def _event(self, db: Db, ev: contract.AnyEvent, now: datetime, after: Effects) -> None:
        self._handlers[ev.type](db, ev, now, after)
        after.add(lambda: self._applied(ev, now))

    def _applied(self, ev: contract.AnyEvent, now: datetime) -> None:
        self.applied += 1
        if self.h.listeners:
            self.h.listeners.notify(
                SensorEventApplied(
                    table=ev.table, type=ev.type, data=ev.data.model_dump(mode="json"), received_at=now, ts=ev.ts, ts_synced=ev.ts_synced
                ),
            )

    def _on_pocket(self, db: Db, ev: contract.PocketEvent, now: datetime, after: Effects) -> None:
        after.add(lambda: self._count_drop(ev.table, now))
        if self.h.metrics:
            self._drops.append((ev.table, ev.data.pocket, self._metric_time(ev, now)))
        if self.h.games.get(ev.table) is not None:
            self.h.alerts.settle(db, alert_kinds.idle_session_key(ev.table), now)
        else:
            key = alert_kinds.play_without_session_key(ev.table)  # the spec (its worded text) once a batch, not per ball
            spec, times = self._touches.get(key) or (alert_kinds.play_without_session(ev.table), 0)
            self._touches[key] = (spec, times + 1)

    def _metric_time(self, ev: contract.AnyEvent | None, now: datetime) -> datetime:
        """When the ball dropped, for the time series.

        InfluxDB keeps one point per series and timestamp, so two drops in one pocket must never
        share one: a synced node's own timestamp is exact (and right even for events replayed
        after an outage); otherwise the receipt time, nudged forward to stay unique. A synced
        stamp outside the window of broker.domain.floor.node_rules arrives here as unsynced already.
        """
        if ev is not None and ev.ts_synced:
            return ev.ts
        self._last_metric_at = max(now, self._last_metric_at + timedelta(milliseconds=1))
        return self._last_metric_at

    def _count_drop(self, table: str, now: datetime) -> None:
        self.h.runtime.count_drop(table, now)

    def _active_checkins(self, db: Db, table: str, now: datetime) -> list[FoosballCheckin]:
        window = membership.checkin_window(self.h.venue.billing.foosball_checkin_min)
        rows = db.scalars(select(FoosballCheckin).where(FoosballCheckin.table_id == table, FoosballCheckin.ended_at.is_(None))).all()
        return [c for c in rows if membership.checkin_active(c.checked_in_at, c.last_goal_at, window, now)]

    def _foosball_play(self, db: Db, table: str, now: datetime, after: Effects, goal: bool) -> None:
        active = self._active_checkins(db, table, now)
        if not active:
            self.h.alerts.raise_alert(db, alert_kinds.foosball_no_member(table))
            return
        for c in active:
            if goal:
                c.goals += 1
            c.last_goal_at = now

    def _on_goal(self, db: Db, ev: contract.GoalEvent, now: datetime, after: Effects) -> None:
        if self.h.metrics:
            at = self._metric_time(ev, now)
            after.add(lambda: self.h.metrics.goal(ev.table, ev.data.side, at))
        if self.h.tables[ev.table].kind is Kind.FOOSBALL:
            self._foosball_play(db, ev.table, now, after, goal=True)

    def _on_activity(self, db: Db, ev: contract.ActivityEvent, now: datetime, after: Effects) -> None:
        if self.h.tables[ev.table].kind is Kind.FOOSBALL:
            self._foosball_play(db, ev.table, now, after, goal=False)

    def _on_card(self, db: Db, ev: contract.CardEvent, now: datetime, after: Effects) -> None:
        if self.h.tables[ev.table].kind is not Kind.FOOSBALL:
            # A card UID is a credential: never above DEBUG in a log (see the README, security).
            log.info("a card was tapped on %s: only foosball tables check members in", ev.table)
            log.debug("the card tapped on %s: %s", ev.table, ev.data.uid)
            return
        check = is_valid_card(db, ev.data.uid, local(now, self.h.venue).date())
        if not check.ok:
            # One open alert per table, counted up by every refusal (touch): random UIDs from a
            # node cannot flood the bar with alerts, and the count shows cards are being refused.
            spec = alert_kinds.card_refused(ev.table, check.code, check.member.name if check.member else None, check.year)
            self.h.alerts.raise_alert(db, spec)  # an open alert is touched: its count says how many cards
            return
        member = check.member
        assert member is not None  # an "ok" card always names its member
        checkin(db, ev.table, member.id, now, "card")
        self.h.alerts.settle(db, alert_kinds.foosball_no_member_key(ev.table), now)
        name = member.name
        after.add(lambda: self.h.listeners.notify(CheckinChanged(table=ev.table, member=name)))

    def _on_button(self, db: Db, ev: contract.ButtonEvent, now: datetime, after: Effects) -> None:
        pass  # the light/state that follows says what the button did

    def _on_sensor_fault(self, db: Db, ev: contract.SensorFaultEvent, now: datetime, after: Effects) -> None:
        if ev.data.kind == "recovered":
            self.h.alerts.settle(db, alert_kinds.sensor_fault_key(ev.table, ev.data.sensor), now)
        else:
            self.h.alerts.raise_alert(db, alert_kinds.sensor_fault(ev.table, ev.data.sensor, ev.data.kind))

    # -- node state -------------------------------------------------------------------

    def _node(self, db: Db, table: str) -> Node:
        node = db.get(Node, table)
        if node is None:
            node = Node(table_id=table, online=False, telemetry={}, reconnects=0)
            db.add(node)
        return node

    def _status(self, db: Db, table: str, st: contract.Status, after: Effects) -> None:
        now = self.h.clock()
        node = self._node(db, table)
        node.last_seen_at = now
        if st.state == "online":
            if not node.online or node.boot != st.boot:
                node.online_since = now
            node.online, node.boot, node.version = True, st.boot, st.version
            self.h.alerts.settle(db, alert_kinds.node_offline_key(table), now)
            self.h.alerts.settle(db, alert_kinds.node_contract_key(table), now)
            # A (re)born node has its boot state: tell it what it should be.
            after.add(lambda: self.hub.resend_table(table))
        else:
            node.online = False
            if self.h.games.get(table) is not None:
                self.h.alerts.raise_alert(db, alert_kinds.node_offline(table))
        online = node.online
        after.add(lambda: self.h.listeners.notify(NodeChanged(table=table, online=online)))

    def _light_state(self, db: Db, table: str, ls: contract.LightState, after: Effects) -> None:
        now = self.h.clock()
        node = self._node(db, table)
        node.light_on, node.light_blink, node.light_cause, node.last_seen_at = ls.on, ls.blink, ls.cause, now
        if self.h.metrics:
            at = self._metric_time(None, now)  # two light changes in one batch are two points
            after.add(lambda: self.h.metrics.light(table, ls.on, at))
        want = self.hub.desired_light(table)
        if ls.on and self.hub.is_out_of_service(table):
            # Kept dark (broker.floor.table_service): switched off again, no alert for the button.
            after.add(lambda: self.hub.send_light(table, False))
        elif want is not None:
            # Switched on by hand on the dashboard counts as the button (broker.floor.table_service).
            if ls.on and not want and (ls.cause in ("button", "boot") or self.hub.lit_by_hand(table)):
                cause = LIGHT_CAUSE if ls.cause == "command" else ls.cause
                self.h.alerts.raise_alert(db, alert_kinds.light_without_session(table, cause))
            elif not ls.on or want:
                self.h.alerts.settle(db, alert_kinds.light_without_session_key(table), now)
        after.add(lambda: self.h.listeners.notify(LightChanged(table=table, on=ls.on, blink=ls.blink, cause=ls.cause)))

    def _telemetry(self, db: Db, table: str, tm: contract.Telemetry, after: Effects) -> None:
        now = self.h.clock()
        node = self._node(db, table)
        node.telemetry = tm.model_dump(mode="json")
        node.telemetry_at = node.last_seen_at = now
        node.reconnects = tm.reconnects
        if self.h.metrics:
            at = self._metric_time(None, now)
            after.add(lambda: self.h.metrics.node(table, tm.uptime_s, tm.outbox, tm.cpu_temp_c, tm.reconnects, at))
        if tm.outbox >= OUTBOX_ALERT_DEPTH:
            self.h.alerts.raise_alert(db, alert_kinds.outbox_stuck(table, tm.outbox))
        else:
            self.h.alerts.settle(db, alert_kinds.outbox_stuck_key(table), now)
