"""The central service: table sessions and the lights that follow them.

Every session change is validated by the pure session logic (broker.sessions), appended to the
session's op log in the database, and only then turned into MQTT commands. The op log is the
record: at start the service replays it, so after a crash the sessions, their bills and the
desired lights are exactly what they were.
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker import alert_kinds, sessions
from broker.billing import Bill
from broker.db.alerts import ack_alert, close_alert, open_alerts, open_or_touch_alert
from broker.db.audit import append_session_op, record_audit
from broker.db.engine import Store
from broker.db.models import FoosballCheckin, Member, TableSession
from broker.db.types import utcnow
from broker.hub_link import HubLink, Inbound, MqttUrl
from broker.ingest import IngestLoop
from broker.members import MemberError, fee_paid, find_by_card, get_member
from broker.tariffs import MemberSnapshot, calendar_year
from devices import contract
from devices.kinds import Kind
from devices.venue import Venue

log = logging.getLogger("lavos.hub")


class ServiceError(ValueError):
    """A request the service refuses; the message says what to do instead."""


class NotFound(ServiceError):
    pass


class CardInUse(ServiceError):
    """A member's club card is already on another open session: one card, one table.

    Carries who and where, so a page can say it in the staff's language; str() is English.
    """

    def __init__(self, member: str, table: str, table_name: str, session_id: int) -> None:
        self.member, self.table, self.table_name, self.session_id = member, table, table_name, session_id
        super().__init__(
            f"{member}'s club card is already on {table_name} (session {session_id}): "
            "take the card off that session or stop it first"
        )


@dataclass
class TableRuntime:
    """What the service keeps in memory per table (rebuilt from the database at start)."""

    last_drop_at: datetime | None = None
    drops: int = 0  # since the current session started
    prepaid_warned: bool = False
    closing_warned_for: datetime | None = None
    closing_alerted_for: datetime | None = None
    prepaid_alerted_for: datetime | None = None  # the prepaid end whose run-out was alerted
    idle_alerted_for: datetime | None = None


@dataclass
class OpenSession:
    id: int
    state: sessions.SessionState


@dataclass(frozen=True)
class HallSnapshot:
    open: dict[str, OpenSession]
    drops: dict[str, int]
    last_drop_at: dict[str, datetime | None]


@dataclass
class AfterCommit:
    """Side effects that may happen only once the database has the change."""

    actions: list[Callable[[], None]] = field(default_factory=list)

    def add(self, fn: Callable[[], None]) -> None:
        self.actions.append(fn)

    def run(self) -> None:
        for fn in self.actions:
            try:
                fn()
            except Exception:  # noqa: BLE001 - a failed publish must not undo a committed change
                log.exception("after-commit action failed")


class CentralService:
    def __init__(
        self,
        venue: Venue,
        store: Store,
        *,
        mqtt_url: MqttUrl | None = None,
        metrics=None,
        clock: Callable[[], datetime] = utcnow,
        share_group: str | None = None,
        client_id: str = "lavos-hub",
    ) -> None:
        self.venue = venue
        self.store = store
        self.metrics = metrics
        self.clock = clock
        self.lock = threading.RLock()
        self.tables = {t.id: t for t in venue.tables}
        self.runtime: dict[str, TableRuntime] = {t: TableRuntime() for t in self.tables}
        self.open: dict[str, OpenSession] = {}
        self.inbox: "queue.Queue[Inbound]" = queue.Queue()
        self.link = HubLink(mqtt_url, self.inbox, share_group=share_group, client_id=client_id, on_connected=self._resend_all) if mqtt_url else None
        self.listeners: list[Callable[[str, dict], None]] = []
        from broker.ingest_handlers import IngestHandlers
        from broker.watchdog import Watchdog

        self.handlers = IngestHandlers(self)
        self.watchdog = Watchdog(self)
        self.ingest = IngestLoop(self.inbox, self.handlers.apply_batch, self.link.ack if self.link else (lambda mid, qos: None),
                                 ack_many=self.link.ack_many if self.link else None)
        self.open_causes: set[str] = set()
        self._load()

    # -- lifecycle -----------------------------------------------------------------

    def _load(self) -> None:
        with self.store.session() as db:
            rows = db.scalars(select(TableSession).where(TableSession.state != "stopped")).all()
            for row in rows:
                ops = [sessions.Op(o.kind, o.at, o.data, o.actor, o.reason) for o in row.ops]
                self.open[row.table_id] = OpenSession(row.id, sessions.replay(ops, self.venue))
        log.info("loaded %d open sessions", len(self.open))
        self.load_open_causes()

    def load_open_causes(self) -> None:
        """Every cause whose alert may be open; see `settle` for why it may hold more."""
        with self.lock, self.store.session() as db:
            self.open_causes = {a.cause_key for a in open_alerts(db)}

    def start(self) -> None:
        contract.build_validators()
        self.ingest.start()
        if self.link:
            self.link.start()
        self.watchdog.start()

    def close(self) -> None:
        self.watchdog.stop()
        if self.link:
            self.link.close()
        self.ingest.stop()
        if self.metrics:
            self.metrics.close()

    # -- what readers may see (copies: nothing outside the service holds its lock or its dicts)

    def hall_snapshot(self) -> "HallSnapshot":
        """Open sessions and drop counts as one consistent picture."""
        with self.lock:
            return HallSnapshot(
                open=dict(self.open),
                drops={t: rt.drops for t, rt in self.runtime.items()},
                last_drop_at={t: rt.last_drop_at for t, rt in self.runtime.items()},
            )

    def open_session(self, table: str) -> OpenSession | None:
        with self.lock:
            return self.open.get(table)

    def subscribe(self, fn: Callable[[str, dict], None]) -> None:
        """Call fn(topic, data) after every committed change (from the thread that made it)."""
        self.listeners.append(fn)

    def unsubscribe(self, fn: Callable[[str, dict], None]) -> None:
        try:
            self.listeners.remove(fn)
        except ValueError:
            pass

    @property
    def mqtt_connected(self) -> bool | None:
        """None when the service runs without MQTT (tests, tools)."""
        return self.link.stats.connected if self.link else None

    def notify(self, topic: str, data: dict) -> None:
        """Tell live views (the dashboard) that something changed."""
        for fn in list(self.listeners):
            try:
                fn(topic, data)
            except Exception:  # noqa: BLE001
                log.exception("listener failed")

    # -- lights ----------------------------------------------------------------------

    def desired_light(self, table: str) -> bool | None:
        """On while a session runs; while paused as configured; off otherwise. None: not ours to drive."""
        if not Kind(self.tables[table].kind).billed:
            return None
        s = self.open.get(table)
        if s is None:
            return False
        if s.state.state == "paused":
            return self.venue.billing.pause_light == "on"
        return True

    def send_light(self, table: str, on: bool, blink_s: int | None = None) -> None:
        if self.link is None:
            return
        self.link.send_light(table, contract.LightSet(on=on, blink_s=blink_s, cmd_id=uuid.uuid4().hex))

    def _resend_all(self) -> None:
        # A reconnect of ours: the nodes may have missed commands; desired state is idempotent.
        for table in self.tables:
            self.resend_table(table)

    def resend_table(self, table: str) -> None:
        want = self.desired_light(table)
        if want is not None:
            self.send_light(table, want)
        if Kind(self.tables[table].kind).billed:
            self._publish_session(table)

    # -- reading -------------------------------------------------------------------

    def bill_of(self, s: sessions.SessionState, at: datetime | None = None) -> Bill:
        return sessions.bill(s, self.venue, max(at or self.clock(), s.last_at) if s.is_open else s.last_at)

    def summary(self, table: str) -> contract.SessionSummary | None:
        s = self.open.get(table)
        if s is None:
            return None
        st = s.state
        return contract.SessionSummary(
            session_id=str(s.id), table=table, state="paused" if st.state == "paused" else "running",
            started_at=st.started_at, tariff=st.tariff or (self.venue.billing.member_tariff if st.member else self.venue.billing.default_tariff),
            member=st.member.name if st.member else None, prepaid_until=st.prepaid_until,
            amount_cents=self.bill_of(st).total_cents,
        )

    def session_state(self, session_id: int) -> tuple[TableSession, sessions.SessionState]:
        with self.store.session() as db:
            row = db.get(TableSession, session_id)
            if row is None:
                raise NotFound(f"no session {session_id}")
            ops = [sessions.Op(o.kind, o.at, o.data, o.actor, o.reason) for o in row.ops]
            db.expunge(row)
        return row, sessions.replay(ops, self.venue)

    # -- session operations -------------------------------------------------------------

    def member_snapshot(self, db: Db, *, member_id: int | None = None, card_uid: str | None = None) -> MemberSnapshot | None:
        if member_id is None and not card_uid:
            return None
        member: Member | None
        if card_uid:
            member = find_by_card(db, card_uid)
            if member is None:
                raise ServiceError(f"unknown card {card_uid}: assign it to a member first, or start without a card")
        else:
            try:
                member = get_member(db, member_id)  # type: ignore[arg-type]
            except MemberError as e:
                raise NotFound(str(e)) from None
        if not member.active:
            raise ServiceError(f"{member.name}'s membership is not active")
        year = calendar_year(self.clock(), self.venue)
        # Both fee years a session can meet: on New Year's Eve the card rate goes on past
        # midnight only for a member who has already paid the coming year.
        return MemberSnapshot(member.id, member.name, fee_paid(member, year), year, next_year_paid=fee_paid(member, year + 1))

    def _card_free(self, member: MemberSnapshot | None, session_id: int | None = None) -> None:
        """Refuse a card already on another open session (running or paused: a paused one
        resumes at the club rate). By member, not UID: a member with two cards is one member."""
        if member is None:
            return
        for table, s in self.open.items():
            if s.id != session_id and s.state.member is not None and s.state.member.member_id == member.member_id:
                raise CardInUse(member.name, table, self.tables[table].name, s.id)

    def _require_table(self, table: str) -> None:
        if table not in self.tables:
            raise NotFound(f"no table {table!r} (tables: {', '.join(self.tables)})")
        if not Kind(self.tables[table].kind).billed:
            raise ServiceError(f"{table} is a {self.tables[table].kind.value} table: it has no billed sessions")

    def _open_by_id(self, session_id: int) -> tuple[str, OpenSession]:
        for table, s in self.open.items():
            if s.id == session_id:
                return table, s
        raise NotFound(f"session {session_id} is not open (stopped, or never existed)")

    def _commit_op(self, db: Db, session_id: int, op: sessions.Op) -> None:
        append_session_op(db, session_id, op.kind, op.data, op.actor, op.reason, op.at)

    def start_session(
        self, table: str, *, actor: str, tariff: str | None = None, member_id: int | None = None,
        card_uid: str | None = None, prepaid_minutes: int | None = None,
    ) -> int:
        with self.lock:
            self._require_table(table)
            if table in self.open:
                raise ServiceError(f"{table} already has a running session ({self.open[table].id}); stop or transfer it first")
            after = AfterCommit()
            with self.store.session() as db:
                member = self.member_snapshot(db, member_id=member_id, card_uid=card_uid)
                self._card_free(member)
                op = sessions.start_op(self.clock(), table, tariff, member, prepaid_minutes, actor=actor)
                try:
                    state = sessions.apply(None, op, self.venue)
                except sessions.SessionError as e:
                    raise ServiceError(str(e)) from None
                row = TableSession(table_id=table, state="running", started_at=op.at, member_id=member.member_id if member else None)
                db.add(row)
                db.flush()
                self._commit_op(db, row.id, op)
                for key in (f"play_without_session:{table}", f"light_without_session:{table}"):
                    self.settle(db, key, op.at)
                sid = row.id
            self.open[table] = OpenSession(sid, state)
            self.runtime[table] = TableRuntime()
            after.add(lambda: self.send_light(table, True))
            after.add(lambda: self._publish_session(table))
            after.run()
            self.notify("session", {"table": table, "session_id": sid, "action": "start"})
            return sid

    def _publish_session(self, table: str) -> None:
        if self.link:
            self.link.send_session(table, self.summary(table))

    def change_session(self, session_id: int, make_op: Callable[[datetime], sessions.Op], at: datetime | None = None) -> sessions.SessionState:
        """Validate and append one op to an open session, then make the lights follow.

        `at` backdates the op (never before the session's last op): prepaid time ends when it
        runs out, not when the watchdog next looks.
        """
        with self.lock:
            table, s = self._open_by_id(session_id)
            op = make_op(max(at or self.clock(), s.state.last_at))
            try:
                new = sessions.apply(s.state, op, self.venue)
            except sessions.SessionError as e:
                raise ServiceError(str(e)) from None
            if op.kind == "transfer":
                target = op.data["table"]
                self._require_table(target)
                if target in self.open:
                    raise ServiceError(f"{target} is busy (session {self.open[target].id}); pick a free table")
            with self.store.session() as db:
                self._commit_op(db, session_id, op)
                row = db.get(TableSession, session_id)
                assert row is not None
                row.state = new.state
                row.table_id = new.table
                if op.kind == "card":
                    row.member_id = new.member.member_id if new.member else None
                if op.kind == "extend":  # time bought again: the next run-out is a new alert
                    self.settle(db, f"prepaid_expired:{table}", op.at)
                if new.state == "stopped":
                    row.stopped_at = new.stopped_at
                    row.total_cents = self.bill_of(new).total_cents
                    self.settle(db, f"idle_session:{table}", op.at)
                    self.settle(db, f"open_after_closing:{table}", op.at)
                    self.settle(db, f"prepaid_expired:{table}", op.at)
            self._after_change(table, new, op)
            return new

    def _after_change(self, table: str, new: sessions.SessionState, op: sessions.Op) -> None:
        sid = self.open[table].id
        if new.state == "stopped":
            del self.open[table]
            self.send_light(table, False)
            self._publish_session(table)
            if self.metrics:
                b = self.bill_of(new)
                minutes = sum(int((seg.end - seg.start).total_seconds()) for seg in sessions.segments(new, self.venue, new.last_at)) // 60
                self.metrics.session(table, new.tariff or "open", minutes, b.total_cents, op.at)
        elif op.kind == "transfer":
            del self.open[table]
            self.open[new.table] = OpenSession(sid, new)
            self.runtime[new.table] = TableRuntime()
            self.send_light(table, False)
            self.send_light(new.table, self.desired_light(new.table) or False)
            self._publish_session(table)
            self._publish_session(new.table)
        else:
            self.open[table] = OpenSession(sid, new)
            if op.kind == "extend":
                self.runtime[table].prepaid_warned = False
            if op.kind in ("pause", "resume"):
                self.send_light(table, bool(self.desired_light(table)))
                if op.kind == "resume":
                    self.runtime[table].last_drop_at = op.at
            self._publish_session(table)
        self.notify("session", {"table": new.table, "session_id": sid, "action": op.kind})

    def stop_session(self, session_id: int, *, actor: str, reason: str | None = None, at: datetime | None = None) -> sessions.SessionState:
        return self.change_session(session_id, lambda t: sessions.stop_op(t, actor=actor, reason=reason), at)

    def pause_session(self, session_id: int, *, actor: str) -> sessions.SessionState:
        return self.change_session(session_id, lambda at: sessions.pause_op(at, actor=actor))

    def resume_session(self, session_id: int, *, actor: str) -> sessions.SessionState:
        return self.change_session(session_id, lambda at: sessions.resume_op(at, actor=actor))

    def transfer_session(self, session_id: int, table: str, *, actor: str) -> sessions.SessionState:
        return self.change_session(session_id, lambda at: sessions.transfer_op(at, table, actor=actor))

    def extend_session(self, session_id: int, minutes: int, *, actor: str) -> sessions.SessionState:
        return self.change_session(session_id, lambda at: sessions.extend_op(at, minutes, actor=actor))

    def add_extra(self, session_id: int, extra_id: str, quantity: int, *, actor: str) -> sessions.SessionState:
        def make(at: datetime) -> sessions.Op:
            try:
                return sessions.extra_op(at, extra_id, quantity, venue=self.venue, actor=actor)
            except sessions.SessionError as e:
                raise ServiceError(str(e)) from None
        return self.change_session(session_id, make)

    def correct_session(self, session_id: int, amount_cents: int, reason: str, *, actor: str) -> sessions.SessionState:
        if not reason or not reason.strip():
            raise ServiceError("a correction needs a reason")
        return self.change_session(session_id, lambda at: sessions.correction_op(at, amount_cents, reason, actor=actor))

    def set_card(self, session_id: int, *, actor: str, member_id: int | None = None, card_uid: str | None = None) -> sessions.SessionState:
        # One lock over the check and the append: two tables showing one card at the same
        # moment cannot both pass.
        with self.lock:
            with self.store.session() as db:
                member = self.member_snapshot(db, member_id=member_id, card_uid=card_uid)
            if member is None:
                return self.change_session(session_id, lambda at: sessions.card_removed_op(at, actor=actor))
            self._open_by_id(session_id)  # a closed session says so before the card is looked at
            self._card_free(member, session_id)
            return self.change_session(session_id, lambda at: sessions.card_op(at, member, actor=actor))

    # -- alerts --------------------------------------------------------------------------
    # The only code that opens, closes or acknowledges an alert (pages, API, ingest and the
    # watchdog all call these), always under the service lock. `open_causes` lets a ball drop
    # settle "idle" without a query (one costs ~140 us against ~220 us for the whole event, so
    # it stays): it holds every cause that may be open, possibly more, never fewer. Opening
    # never trusts it (the upsert decides, so a cause closed anywhere fires again); a cause
    # leaves it only when the database says nothing is open, so a rolled-back transaction can
    # at worst cost one extra query later.

    def settle(self, db: Db, cause_key: str, at: datetime) -> None:
        """The cause of an alert is gone: close it (no query at all when none can be open)."""
        with self.lock:
            if cause_key in self.open_causes and close_alert(db, cause_key, at) is None:
                self.open_causes.discard(cause_key)

    def raise_alert(self, db: Db, spec: alert_kinds.AlertSpec, after: AfterCommit | None = None) -> None:
        """Open the alert of this cause, or touch the open one (count, last seen)."""
        with self.lock:
            self.open_causes.add(spec.cause_key)
            alert, new = open_or_touch_alert(
                db, cause_key=spec.cause_key, kind=spec.kind, message=spec.message, message_en=spec.message_en,
                table_id=spec.table_id, severity=spec.severity, at=self.clock(),
            )
        if new:
            log.warning("ALERT %s", spec.message_en)
            data = {"id": alert.id, "kind": spec.kind, "table": spec.table_id, "severity": spec.severity,
                    "message": spec.message, "message_en": spec.message_en}

            def tell() -> None:
                if self.metrics:
                    self.metrics.alert(spec.kind, self.clock())
                self.notify("alert", data)

            (after.add(tell) if after else tell())

    def ack(self, alert_id: int, *, actor: str, close: bool = False) -> None:
        """Staff saw the alert; close=True also closes it, so its cause's next occurrence is new."""
        with self.lock:
            with self.store.session() as db:
                alert = ack_alert(db, alert_id, actor, close=close, at=self.clock())
                closed, cause = alert.closed_at is not None, alert.cause_key
            if closed:
                self.open_causes.discard(cause)  # committed: nothing of this cause is open
        self.notify("alert_ack", {"id": alert_id})

    # -- foosball ------------------------------------------------------------------------

    def foosball_checkin(self, table: str, member_id: int, *, actor: str) -> tuple[FoosballCheckin, str]:
        """Staff check a paid-up member in at a foosball table: (check-in, member's name).

        Settles "foosball without a member" like a card tap does, through `settle`, so the
        alert fires again the next time the table is played without anyone checked in.
        """
        foosball = [t.id for t in self.venue.tables if t.kind is Kind.FOOSBALL]
        if table not in foosball:
            raise NotFound(f"no foosball table {table[:40]!r} (foosball tables: {', '.join(foosball)})")
        from broker.ingest_handlers import checkin

        now = self.clock()
        # Under the lock: a check-in must not interleave with a goal being applied on this table.
        with self.lock, self.store.session() as db:
            member = db.get(Member, member_id)
            if member is None:
                raise NotFound(f"no member {member_id}: search by name to find the right id")
            year = calendar_year(now, self.venue)
            if not member.active:
                raise ServiceError(f"{member.name}'s membership is not active: foosball is for members only")
            if not fee_paid(member, year):
                raise ServiceError(f"{member.name} has not paid the {year} fee: record the payment first")
            row = checkin(db, table, member.id, now, "staff")
            self.settle(db, f"foosball_no_member:{table}", now)
            record_audit(db, actor, "foosball.checkin", f"table:{table}", {"member_id": member.id, "checkin_id": row.id}, at=now)
            name = member.name
        self.notify("checkin", {"table": table, "member": name})
        return row, name
