"""The hub: table sessions and the lights that follow them.

Every session change is validated by the pure session logic (broker.domain.sessions), appended to the
session's op log in the database, and only then turned into MQTT commands. The op log is the
record: at start the hub replays it, so after a crash the sessions, their bills and the desired
lights are exactly what they were.

Concurrency (docs/concurrency.md has the whole picture): one writer thread
(broker.hall.writer) makes every change of hall state, one at a time — staff commands from the
HTTP threads (each public write method below submits itself and waits for its answer), MQTT
batches, reconnects, watchdog rounds. So there is no lock over hall state and none is ever
held across a COMMIT; each change commits, then updates the owned state (open sessions,
table runtime, alert book: broker.hall), then runs its effects (publishes, live pushes,
metrics). Readers on any thread get immutable snapshots (`hall_snapshot`, `open_session`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session as Db

from broker.adapters.hub_link import HubLink, MqttUrl
from broker.adapters.inbox import DEFAULT_BOUND, HomeAssistantOnline, LinkUp, make_inbox
from broker.adapters.link_process import ProcessLink
from broker.domain import alert_kinds, membership, sessions
from broker.domain.billing import Bill
from broker.domain.refusals import N_, Name, Refusal, table_name
from broker.domain.tariffs import MemberSnapshot, calendar_year
from broker.domain.venue import Venue
from broker.hall.alert_book import AlertBook
from broker.hall.effects import AfterCommit
from broker.hall.home_assistant import HomeAssistant
from broker.hall.ingest_rules import IngestHandlers, checkin
from broker.hall.light_commands import LightCommand, LightCommands
from broker.hall.listeners import Listener, Listeners
from broker.hall.notifications import Notifications
from broker.hall.open_sessions import OpenSession, OpenSessions
from broker.hall.ports import HallState
from broker.hall.session_log import ops_of, replay_row
from broker.hall.table_runtime import RuntimeBook, RuntimeView, TableRuntime
from broker.hall.table_service import OutOfService, OutOfServiceBook, TableService, refuse_out_of_service
from broker.hall.till import Till
from broker.hall.timers import Watchdog
from broker.hall.writer import HallWriter
from broker.storage.audit import append_session_op, record_audit
from broker.storage.engine import Store
from broker.storage.members import MemberError, find_by_card, get_member
from broker.storage.models import Event, FoosballCheckin, Member, TableSession
from broker.storage.types import utcnow
from devices import contract
from devices.kinds import Kind

log = logging.getLogger("lavos.hub")

T = TypeVar("T")

# Old names, still imported from here by other code; their homes are broker.hall.*.
__all__ = ["AfterCommit", "CardInUse", "Hub", "HallSnapshot", "NotFound", "OpenSession", "ServiceError", "TableRuntime"]


class ServiceError(Refusal):
    """A request the service refuses; the message says what to do instead."""


class NotFound(ServiceError):
    pass


class CardInUse(ServiceError):
    """A member's club card is already on another open session: one card, one table.

    Carries who and where, so a page can say it in the staff's language; str() is English.
    """

    def __init__(self, member: str, table: str, table_name: str, session_id: int, table_name_en: str | None = None) -> None:
        self.member, self.table, self.table_name, self.session_id = member, table, table_name, session_id
        super().__init__(
            N_("The club card of %(member)s is already on %(table)s (game no. %(session)d): take the card off that game or stop it first."),
            member=member,
            table=Name(table_name, table_name_en),
            session=session_id,
        )


@dataclass(frozen=True)
class HallSnapshot:
    open: Mapping[str, OpenSession]
    drops: dict[str, int]
    last_drop_at: dict[str, datetime | None]


class Hub:
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
        inbox_bound: int = DEFAULT_BOUND,
        link_process: bool = False,
        home_assistant: bool = False,
        data_dir: Path | None = None,
    ) -> None:
        self.venue = venue
        self.store = store
        self.metrics = metrics
        self.clock = clock
        self.tables = {t.id: t for t in venue.tables}
        # The owned state (broker.hall): changed only by the writer, through its methods.
        self._listeners = Listeners()
        self._sessions = OpenSessions()
        self._runtime = RuntimeBook(self.tables)
        self._alerts = AlertBook(store, self._listeners, clock, metrics, names=self._table_names)
        self._hall = HallState(venue, self.tables, store, clock, metrics, self._sessions, self._runtime, self._alerts, self._listeners)
        self.inbox = make_inbox(inbox_bound)
        # link_process: paho in a child process (broker.adapters.link_process says why); `lavos
        # server` does that, in-process tests and tools keep it in a thread (no process to start).
        link_class = ProcessLink if link_process else HubLink
        self._link = (
            link_class(mqtt_url, self.inbox, share_group=share_group, client_id=client_id, home_assistant=home_assistant)
            if mqtt_url
            else None
        )
        self._out_of_service = OutOfServiceBook()
        self._light_commands = LightCommands()
        self._table_service = TableService(self._hall, self, self._out_of_service, ServiceError)
        self.handlers = IngestHandlers(self._hall, self)
        self._writer = HallWriter(
            self.inbox,
            self.handlers.apply_batch,
            self._link.ack if self._link else (lambda mid, qos: None),
            self._on_link_up,
            ack_many=self._link.ack_many if self._link else None,
        )
        self.ingest = self._writer  # old name: tests and benchmarks wait on `ingest.wait_idle()`
        self.watchdog = Watchdog(self._hall, self, self._writer.call)
        # Home Assistant discovery (off unless asked for; broker.hall.home_assistant): read-only.
        self.home_assistant = HomeAssistant(venue, self._link, self.summary, self._writer.call) if home_assistant and self._link else None
        # The money (broker.hall.till): tabs, payments, the business day, eKasa; on the same writer.
        self.till = Till(self._hall, self._writer.call)
        # Push notifications (broker.hall.notifications): spooled under data_dir (None: in memory).
        self.notifications = Notifications(self._hall, self._writer.call, data_dir, self.till.days.report)
        self._alerts.notify = self.notifications.alert_changed
        self._load()

    # -- lifecycle -----------------------------------------------------------------

    def _load(self) -> None:
        """Derive the owned state from the database: open sessions from their op logs, the
        drops of each open session from its stored pocket events, the open alerts."""
        with self.store.session() as db:
            rows = db.scalars(select(TableSession).where(TableSession.state != "stopped")).all()
            loaded = {row.table_id: OpenSession(row.id, replay_row(row, self.venue)) for row in rows}
            for table, s in loaded.items():
                n, last = db.execute(
                    select(func.count(), func.max(Event.received_at)).where(
                        Event.table_id == table, Event.type == "pocket", Event.received_at >= s.state.started_at
                    )
                ).one()
                self._runtime.reset(table, drops=n or 0, last_drop_at=last)
            self._out_of_service.load(db)
        self._sessions.load(loaded)
        self._runtime.publish()
        log.info("loaded %d open sessions", len(loaded))
        self._alerts.reload()

    def load_open_causes(self) -> None:
        """Every cause whose alert may be open; see broker.hall.alert_book."""
        self._alerts.reload()

    def start(self) -> None:
        contract.build_validators()
        self._writer.start()
        if self._link:
            self._link.start()
        self.watchdog.start()
        self.till.start()
        if self.home_assistant:
            self.home_assistant.start()
        self.notifications.start()

    def close(self) -> None:
        if self.home_assistant:
            self.home_assistant.stop()
        self.notifications.close()
        self.till.close()
        self.watchdog.stop()
        if self._link:
            self._link.close()
        self._writer.stop()
        if self.metrics:
            self.metrics.close()

    def _write(self, fn: Callable[[], T]) -> T:
        """Run a change on the hub's writer thread and wait for its answer (see the docstring)."""
        return self._writer.call(fn)

    # -- what readers may see (snapshots: nothing outside the hub holds its state) ----------

    @property
    def open(self) -> Mapping[str, OpenSession]:
        """Read-only snapshot of the open sessions (old name; prefer hall_snapshot/open_session)."""
        return self._sessions.view()

    @property
    def runtime(self) -> Mapping[str, RuntimeView]:
        """Read-only snapshot of the drop counters (old name; prefer hall_snapshot)."""
        return self._runtime.view()

    @property
    def link(self) -> HubLink | ProcessLink | None:
        return self._link

    @property
    def open_causes(self) -> frozenset[str]:
        return self._alerts.open_causes()

    @property
    def listeners(self) -> list[Listener]:
        """Old name: code that still appends here is moving to subscribe/unsubscribe."""
        return self._listeners.compat_list

    def hall_snapshot(self) -> HallSnapshot:
        """Open sessions and drop counts as one consistent picture."""
        rt = self._runtime.view()
        return HallSnapshot(
            open=self._sessions.view(),
            drops={t: v.drops for t, v in rt.items()},
            last_drop_at={t: v.last_drop_at for t, v in rt.items()},
        )

    def open_session(self, table: str) -> OpenSession | None:
        return self._sessions.get(table)

    def subscribe(self, fn: Listener) -> None:
        """Call fn(topic, data) after every committed change (on the hub's writer thread: do not block)."""
        self._listeners.subscribe(fn)

    def unsubscribe(self, fn: Listener) -> None:
        self._listeners.unsubscribe(fn)

    @property
    def mqtt_connected(self) -> bool | None:
        """None when the hub runs without MQTT (tests, tools)."""
        return self._link.stats.connected if self._link else None

    def notify(self, topic: str, data: dict) -> None:
        """Tell live views (the dashboard) that something changed."""
        self._listeners.notify(topic, data)

    # -- lights ----------------------------------------------------------------------

    def desired_light(self, table: str) -> bool | None:
        """On while a session runs; while paused as configured; off otherwise. None: not ours to drive.

        A table out of service is kept dark whatever its kind."""
        if self._out_of_service.get(table) is not None:
            return False
        if not Kind(self.tables[table].kind).billed:
            return None
        s = self._sessions.get(table)
        if s is None:
            return False
        if s.state.state == "paused":
            return self.venue.billing.pause_light == "on"
        return True

    def send_light(self, table: str, on: bool, blink_s: int | None = None) -> None:
        if self._link is None:
            return
        self._link.send_light(table, contract.LightSet(on=on, blink_s=blink_s, cmd_id=uuid.uuid4().hex))
        self._light_commands.sent(table, on)

    def light_commands(self) -> Mapping[str, LightCommand]:
        """The light last commanded per table and when (broker.hall.light_commands says what for)."""
        return self._light_commands.view()

    def _on_link_up(self, event: LinkUp | HomeAssistantOnline) -> None:
        if isinstance(event, HomeAssistantOnline):  # HA restarted: only HA needs telling
            if self.home_assistant:
                self.home_assistant.announce()
            return
        # A reconnect of ours: the nodes may have missed commands; desired state is idempotent.
        # On the writer, so a staff stop is either wholly before this resend or wholly after.
        for table in self.tables:
            self.resend_table(table)
        if self.home_assistant:
            self.home_assistant.announce()

    def resend_table(self, table: str) -> None:
        self._write(lambda: self._resend_table(table))

    def _resend_table(self, table: str) -> None:
        want = self.desired_light(table)
        if want is not None:
            self.send_light(table, want)
        if Kind(self.tables[table].kind).billed:
            self._publish_session(table)

    # -- reading -------------------------------------------------------------------

    def bill_of(self, s: sessions.SessionState, at: datetime | None = None) -> Bill:
        return sessions.bill(s, self.venue, max(at or self.clock(), s.last_at) if s.is_open else s.last_at)

    def summary(self, table: str) -> contract.SessionSummary | None:
        s = self._sessions.get(table)
        if s is None:
            return None
        st = s.state
        return contract.SessionSummary(
            session_id=str(s.id),
            table=table,
            state="paused" if st.state == "paused" else "running",
            started_at=st.started_at,
            tariff=st.tariff or (self.venue.billing.member_tariff if st.member else self.venue.billing.default_tariff),
            member=st.member.name if st.member else None,
            prepaid_until=st.prepaid_until,
            amount_cents=self.bill_of(st).total_cents,
        )

    def session_state(self, session_id: int) -> tuple[TableSession, sessions.SessionState]:
        with self.store.session() as db:
            row = db.get(TableSession, session_id)
            if row is None:
                raise NotFound(N_("There is no game no. %(session)d."), session=session_id)
            ops = ops_of(row.ops)
            db.expunge(row)
        return row, sessions.replay(ops, self.venue)

    # -- session operations (each runs on the writer) ------------------------------------

    def member_snapshot(self, db: Db, *, member_id: int | None = None, card_uid: str | None = None) -> MemberSnapshot | None:
        if member_id is None and not card_uid:
            return None
        member: Member | None
        if card_uid:
            member = find_by_card(db, card_uid)
            if member is None:
                raise ServiceError(N_("Unknown card %(card)s: assign it to a member, or start the game without a card."), card=card_uid)
        else:
            try:
                member = get_member(db, member_id)  # type: ignore[arg-type]
            except MemberError as e:
                raise NotFound.like(e) from None
        if not member.active:
            raise ServiceError(N_("The membership of %(member)s is not active."), member=member.name)
        year = calendar_year(self.clock(), self.venue)
        paid = [f.year for f in member.fees]
        # Both fee years a session can meet: on New Year's Eve the card rate goes on past
        # midnight only for a member who has already paid the coming year.
        return MemberSnapshot(
            member.id, member.name, membership.fee_paid(paid, year), year, next_year_paid=membership.fee_paid(paid, year + 1)
        )

    def _card_free(self, member: MemberSnapshot | None, session_id: int | None = None) -> None:
        """Refuse a card already on another open session (running or paused: a paused one
        resumes at the club rate). By member, not UID: a member with two cards is one member."""
        if member is None:
            return
        for table, s in self._sessions.view().items():
            if s.id != session_id and s.state.member is not None and s.state.member.member_id == member.member_id:
                raise CardInUse(member.name, table, self.tables[table].name, s.id, self.tables[table].name_en)

    def _table_names(self, table: str) -> tuple[str, str | None]:
        """What staff call a table (Slovak, English) in the texts the hub stores; an unknown id as it is."""
        spec = self.tables.get(table)
        return (spec.name, spec.name_en) if spec else (table, None)

    def _require_table(self, table: str) -> None:
        if table not in self.tables:
            raise NotFound(N_("There is no table %(table)s."), table=table[:40])
        if not Kind(self.tables[table].kind).billed:
            raise ServiceError(N_("%(table)s is not billed by time: it has no games to start."), table=table_name(self.tables[table]))

    def _open_by_id(self, session_id: int) -> tuple[str, OpenSession]:
        found = self._sessions.by_id(session_id)
        if found is None:
            raise NotFound(N_("Game no. %(session)d is no longer running."), session=session_id)
        return found

    def _commit_op(self, db: Db, session_id: int, op: sessions.Op) -> None:
        append_session_op(db, session_id, op.kind, op.data, op.actor, op.reason, op.at)

    def start_session(
        self,
        table: str,
        *,
        actor: str,
        tariff: str | None = None,
        member_id: int | None = None,
        card_uid: str | None = None,
        prepaid_minutes: int | None = None,
    ) -> int:
        return self._write(lambda: self._start_session(table, actor, tariff, member_id, card_uid, prepaid_minutes))

    def _start_session(
        self, table: str, actor: str, tariff: str | None, member_id: int | None, card_uid: str | None, prepaid_minutes: int | None
    ) -> int:
        self._require_table(table)
        refuse_out_of_service(self._out_of_service, table, self.tables[table].name, ServiceError)
        busy = self._sessions.get(table)
        if busy is not None:
            raise ServiceError(
                N_("%(table)s already has game no. %(session)d running; stop or move it first."),
                table=table_name(self.tables[table]),
                session=busy.id,
            )
        after = AfterCommit()
        with self.store.session() as db:
            member = self.member_snapshot(db, member_id=member_id, card_uid=card_uid)
            self._card_free(member)
            op = sessions.start_op(self.clock(), table, tariff, member, prepaid_minutes, actor=actor)
            try:
                state = sessions.apply(None, op, self.venue)
            except sessions.SessionError as e:
                raise ServiceError.like(e) from None
            row = TableSession(table_id=table, state="running", started_at=op.at, member_id=member.member_id if member else None)
            db.add(row)
            db.flush()
            self._commit_op(db, row.id, op)
            self.till.tabs.open_for_game(db, row, actor)  # the game's tab, in the same transaction
            for key in (alert_kinds.play_without_session_key(table), alert_kinds.light_without_session_key(table)):
                self._alerts.settle(db, key, op.at)
            sid = row.id
        # Committed: now the owned state, then the effects.
        self._sessions.put(table, OpenSession(sid, state))
        self._table_service.game_started(table)
        self._runtime.reset(table)
        self._runtime.publish()
        after.add(lambda: self.send_light(table, True))
        after.add(lambda: self._publish_session(table))
        after.add(lambda: self.notify("session", {"table": table, "session_id": sid, "action": "start"}))
        after.run()
        return sid

    def _publish_session(self, table: str) -> None:
        if self._link:
            self._link.send_session(table, self.summary(table))
        if self.home_assistant:  # the running amount HA shows follows every change of the game
            self.home_assistant.table_changed(table)

    def change_session(
        self, session_id: int, make_op: Callable[[datetime], sessions.Op], at: datetime | None = None
    ) -> sessions.SessionState:
        """Validate and append one op to an open session, then make the lights follow.

        `at` backdates the op (never before the session's last op): prepaid time ends when it
        runs out, not when the watchdog next looks.
        """
        return self._write(lambda: self._change_session(session_id, make_op, at))

    def _change_session(self, session_id: int, make_op: Callable[[datetime], sessions.Op], at: datetime | None) -> sessions.SessionState:
        table, s = self._open_by_id(session_id)
        op = make_op(max(at or self.clock(), s.state.last_at))
        try:
            new = sessions.apply(s.state, op, self.venue)
        except sessions.SessionError as e:
            raise ServiceError.like(e) from None
        if op.kind == "transfer":
            target = op.data["table"]
            self._require_table(target)
            refuse_out_of_service(self._out_of_service, target, self.tables[target].name, ServiceError)
            busy = self._sessions.get(target)
            if busy is not None:
                raise ServiceError(
                    N_("%(table)s is busy (game no. %(session)d); pick a free table."),
                    table=table_name(self.tables[target]),
                    session=busy.id,
                )
        with self.store.session() as db:
            self._commit_op(db, session_id, op)
            row = db.get(TableSession, session_id)
            assert row is not None
            row.state = new.state
            row.table_id = new.table
            if op.kind == "card":
                row.member_id = new.member.member_id if new.member else None
            if op.kind == "extend":  # time bought again: the next run-out is a new alert
                self._alerts.settle(db, alert_kinds.prepaid_expired_key(table), op.at)
            if new.state == "stopped":
                row.stopped_at = new.stopped_at
                row.total_cents = self.bill_of(new).total_cents
                for key in (
                    alert_kinds.idle_session_key(table),
                    alert_kinds.open_after_closing_key(table),
                    alert_kinds.prepaid_expired_key(table),
                ):
                    self._alerts.settle(db, key, op.at)
                self.till.game_billed(db, session_id)
        self._after_change(table, s.id, new, op)
        return new

    def _after_change(self, table: str, sid: int, new: sessions.SessionState, op: sessions.Op) -> None:
        """Committed: update the owned state, then run the effects (still on the writer)."""
        after = AfterCommit()
        if new.state == "stopped":
            self._sessions.remove(table)
            after.add(lambda: self.send_light(table, False))
            after.add(lambda: self._publish_session(table))
            if self.metrics:
                b = self.bill_of(new)
                minutes = sum(int((seg.end - seg.start).total_seconds()) for seg in sessions.segments(new, self.venue, new.last_at)) // 60
                after.add(lambda: self.metrics.session(table, new.tariff or "open", minutes, b.total_cents, op.at))
        elif op.kind == "transfer":
            self._sessions.move(table, new.table, OpenSession(sid, new))
            self._runtime.reset(new.table)
            after.add(lambda: self.send_light(table, False))
            after.add(lambda: self.send_light(new.table, self.desired_light(new.table) or False))
            after.add(lambda: self._publish_session(table))
            after.add(lambda: self._publish_session(new.table))
        else:
            self._sessions.put(table, OpenSession(sid, new))
            if op.kind == "extend":
                self._runtime.of(table).prepaid_warned = False
            if op.kind in ("pause", "resume"):
                after.add(lambda: self.send_light(table, bool(self.desired_light(table))))
                if op.kind == "resume":
                    self._runtime.of(table).last_drop_at = op.at
            after.add(lambda: self._publish_session(table))
        self._runtime.publish()
        # A transfer changed two tables: say both, so live views re-draw just those two.
        moved = {"from_table": table} if op.kind == "transfer" else {}
        after.add(lambda: self.notify("session", {"table": new.table, "session_id": sid, "action": op.kind, **moved}))
        after.run()

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
                raise ServiceError.like(e) from None

        return self.change_session(session_id, make)

    def correct_session(self, session_id: int, amount_cents: int, reason: str, *, actor: str) -> sessions.SessionState:
        """A manager's correction, while the game runs or on a bill already issued."""
        text = self._reason(reason)
        return self.amend_bill(session_id, lambda at: sessions.correction_op(at, amount_cents, text, actor=actor), issued_ok=True)

    def void_extra(self, session_id: int, extra_op: int, reason: str, *, actor: str, issued_ok: bool) -> sessions.SessionState:
        """Reverse the extra added by op number `extra_op`; on an issued bill only if `issued_ok` (the caller's role)."""
        text = self._reason(reason)
        return self.amend_bill(session_id, lambda at: sessions.void_op(at, extra_op, text, actor=actor), issued_ok=issued_ok)

    @staticmethod
    def _reason(reason: str) -> str:
        try:
            return sessions.bill_reason(reason)
        except sessions.SessionError as e:
            raise ServiceError(e.msgid, **e.params) from None

    def amend_bill(self, session_id: int, make_op: Callable[[datetime], sessions.Op], *, issued_ok: bool) -> sessions.SessionState:
        """Append a correction or a void to a running game, or to a stopped one's issued bill.

        The check of "issued" and the append are one step on the writer, so a game stopped a
        moment before cannot slip a staff void onto its issued bill."""
        return self._write(lambda: self._amend_bill(session_id, make_op, issued_ok))

    def _amend_bill(self, session_id: int, make_op: Callable[[datetime], sessions.Op], issued_ok: bool) -> sessions.SessionState:
        if self._sessions.by_id(session_id) is not None:
            return self._change_session(session_id, make_op, None)
        with self.store.session() as db:
            row = db.get(TableSession, session_id)
            if row is None:
                raise NotFound(N_("There is no game no. %(session)d."), session=session_id)
            if not issued_ok:
                raise ServiceError(
                    N_("The bill of game no. %(session)d is already issued: only a manager can change it now."), session=session_id
                )
            state = replay_row(row, self.venue)
            op = make_op(max(self.clock(), state.last_at))
            try:
                new = sessions.apply(state, op, self.venue)
            except sessions.SessionError as e:
                raise ServiceError(e.msgid, **e.params) from None
            self._commit_op(db, session_id, op)
            row.total_cents = self.bill_of(new).total_cents  # the stored total stays the bill's
            self.till.game_billed(db, session_id)
        return new

    def set_card(self, session_id: int, *, actor: str, member_id: int | None = None, card_uid: str | None = None) -> sessions.SessionState:
        # One writer over the check and the append: two tables showing one card at the same
        # moment cannot both pass.
        return self._write(lambda: self._set_card(session_id, actor, member_id, card_uid))

    def _set_card(self, session_id: int, actor: str, member_id: int | None, card_uid: str | None) -> sessions.SessionState:
        with self.store.session() as db:
            member = self.member_snapshot(db, member_id=member_id, card_uid=card_uid)
        if member is None:
            return self._change_session(session_id, lambda at: sessions.card_removed_op(at, actor=actor), None)
        self._open_by_id(session_id)  # a closed session says so before the card is looked at
        self._card_free(member, session_id)
        return self._change_session(session_id, lambda at: sessions.card_op(at, member, actor=actor), None)

    # -- alerts (broker.hall.alert_book is the only code that opens, closes or acks one) ---

    def settle(self, db: Db, cause_key: str, at: datetime) -> None:
        """The cause of an alert is gone: close it (no query at all when none can be open)."""
        self._alerts.settle(db, cause_key, at)

    def raise_alert(self, db: Db, spec: alert_kinds.AlertSpec, after: AfterCommit | None = None) -> None:
        """Open the alert of this cause, or touch the open one; staff are told after the commit."""
        self._alerts.raise_alert(db, spec, after)

    def ack(self, alert_id: int, *, actor: str, close: bool = False) -> None:
        """Staff saw the alert; close=True also closes it, so its cause's next occurrence is new."""

        def run() -> None:
            self._alerts.ack(alert_id, actor=actor, close=close)
            self.notify("alert_ack", {"id": alert_id})

        self._write(run)

    # -- foosball ------------------------------------------------------------------------

    def foosball_checkin(self, table: str, member_id: int, *, actor: str) -> tuple[FoosballCheckin, str]:
        """Staff check a paid-up member in at a foosball table: (check-in, member's name).

        Settles "foosball without a member" like a card tap does, so the alert fires again the
        next time the table is played without anyone checked in. On the writer: a check-in
        does not interleave with a goal being applied on this table.
        """
        foosball = [t.id for t in self.venue.tables if t.kind is Kind.FOOSBALL]
        if table not in foosball:
            raise NotFound(N_("There is no foosball table %(table)s."), table=table[:40])
        return self._write(lambda: self._foosball_checkin(table, member_id, actor))

    def _foosball_checkin(self, table: str, member_id: int, actor: str) -> tuple[FoosballCheckin, str]:
        refuse_out_of_service(self._out_of_service, table, self.tables[table].name, ServiceError)
        now = self.clock()
        with self.store.session() as db:
            member = db.get(Member, member_id)
            if member is None:
                raise NotFound(N_("There is no member no. %(member_id)d: search by name to find the right one."), member_id=member_id)
            year = calendar_year(now, self.venue)
            verdict = membership.eligibility(member.active, [f.year for f in member.fees], year)
            if verdict == "inactive":
                raise ServiceError(N_("The membership of %(member)s is not active: foosball is for members only."), member=member.name)
            if verdict == "unpaid":
                raise ServiceError(N_("%(member)s has not paid the %(year)d fee: record the payment first."), member=member.name, year=year)
            row = checkin(db, table, member.id, now, "staff")
            self._alerts.settle(db, alert_kinds.foosball_no_member_key(table), now)
            record_audit(db, actor, "foosball.checkin", f"table:{table}", {"member_id": member.id, "checkin_id": row.id}, at=now)
            name = member.name
        self.notify("checkin", {"table": table, "member": name})
        return row, name

    # -- the table itself: out of service, the light by hand, a foosball check-out ---------
    # (broker.hall.table_service holds the rules; these submit them to the writer)

    def _table(self, table: str) -> None:
        if table not in self.tables:
            raise NotFound(N_("There is no such table."))

    def out_of_service(self) -> Mapping[str, OutOfService]:
        """Tables out of service now (a snapshot, any thread)."""
        return self._out_of_service.view()

    def is_out_of_service(self, table: str) -> bool:
        return self._out_of_service.get(table) is not None

    def lit_by_hand(self, table: str) -> bool:
        """Did staff switch this light on from the dashboard with no game (the writer's view)?"""
        return self._table_service.lit_by_hand(table)

    def set_out_of_service(self, table: str, out: bool, *, actor: str, reason: str = "") -> OutOfService | None:
        """Take a table out of service (refused while a game runs on it) or put it back; audited."""
        self._table(table)
        return self._write(lambda: self._table_service.set_out_of_service(table, out, reason, actor))

    def switch_light(self, table: str, on: bool, *, actor: str) -> None:
        """Staff switch a table's light from the dashboard: checked like the table's button; audited."""
        self._table(table)
        self._write(lambda: self._table_service.switch_light(table, on, actor))

    def foosball_checkout(self, table: str, member_id: int, *, actor: str) -> str:
        """End a member's check-in at a foosball table; the member's name. Audited."""
        if table not in self.tables or self.tables[table].kind is not Kind.FOOSBALL:
            raise NotFound(N_("There is no such foosball table."))
        return self._write(lambda: self._table_service.foosball_checkout(table, member_id, actor))
