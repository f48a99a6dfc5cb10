"""The hub: it builds the hall's parts, runs every change as a command on its one writer, and
tells readers what the hall looks like.

Every change to the hall, the till, members, accounts and settings is a command
(broker.core.commands): `hub.execute(StartGame(table="pool-01", actor="jana"))`. The writer
(broker.core.writer) runs it, one at a time, with MQTT batches, reconnects and watchdog rounds
in between; its one handler, in the part that owns the rules (games, tables, tabs, payments,
the day, eKasa, members, accounts, logins, notifications), validates it, commits, updates the
owned state and registers its effects (publishes, live pushes, metrics), which run after the
commit (broker.storage.after_commit). The store refuses a write transaction off the writer
(Store.bind_writer), so that is enforced, not hoped for. Readers on any thread get immutable
snapshots (`hall_snapshot`, `open_game`) and read-only queries.

docs/concurrency.md has the threads; docs/architecture.md the command flow and how to add one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from argon2 import PasswordHasher
from sqlalchemy import func, select

from broker.accounts.users import DEFAULT_HASHER
from broker.adapters.box_sensors import BoxSensors
from broker.adapters.hub_link import HubLink, MqttUrl
from broker.adapters.inbox import DEFAULT_BOUND, HomeAssistantOnline, LinkUp, make_inbox
from broker.adapters.link_process import ProcessLink
from broker.bookings.book import BookingBook
from broker.bookings.bookings import Bookings
from broker.bookings.waiting_list import WaitingList
from broker.core.alert_book import AlertBook
from broker.core.commands import Command, Handlers
from broker.core.errors import CardInUse, NotFound, ServiceError
from broker.core.listeners import Listener, Listeners
from broker.core.open_games import OpenGame, OpenGames
from broker.core.part import Part
from broker.core.ports import HallSnapshot, HallState
from broker.core.table_runtime import RuntimeBook, RuntimeView, TableRuntime
from broker.core.writer import HallWriter
from broker.domain.billing import Bill
from broker.domain.floor import game_ops
from broker.domain.floor.game_log import ops_of, replay_row
from broker.domain.refusals import N_
from broker.domain.venue import Venue
from broker.domain.venue_layout import VENUE_TOPIC, venue_layout
from broker.floor.box_watch import BoxWatch
from broker.floor.closing import Closing
from broker.floor.games import Games
from broker.floor.home_assistant import HomeAssistant
from broker.floor.ingest_rules import IngestHandlers
from broker.floor.light_commands import LightCommand
from broker.floor.lights import Lights
from broker.floor.monitoring_rules import MonitoringRules
from broker.floor.table_service import OutOfService, OutOfServiceBook, TableService
from broker.floor.timers import Watchdog
from broker.notify.notifications import Notifications
from broker.outbox.records import CentralSettings, Outbox
from broker.outbox.sender import OutboxSender
from broker.people.accounts import Accounts
from broker.people.logins import Logins
from broker.people.members import Members
from broker.shifts.shifts import Shifts
from broker.stock.stock import Stock
from broker.storage.engine import Store
from broker.storage.models import Event, Game
from broker.storage.types import utcnow
from broker.till import Till
from broker.tournaments.calls import TournamentCalls
from broker.tournaments.results import TournamentResults
from broker.tournaments.setup import Tournaments
from broker.wallet.wallet import Wallet
from devices import contract

log = logging.getLogger("lavos.hub")

R = TypeVar("R")

__all__ = ["CardInUse", "HallSnapshot", "Hub", "NotFound", "OpenGame", "ServiceError", "TableRuntime"]


class Hub:
    def __init__(
        self,
        venue: Venue,
        store: Store,
        *,
        mqtt_url: MqttUrl | None = None,
        metrics: Any = None,
        clock: Callable[[], datetime] = utcnow,
        share_group: str | None = None,
        client_id: str = "lavos-hub",
        inbox_bound: int = DEFAULT_BOUND,
        link_process: bool = False,
        home_assistant: bool = False,
        data_dir: Path | None = None,
        password_hasher: PasswordHasher = DEFAULT_HASHER,
        central: CentralSettings | None = None,
        box: BoxSensors | None = None,
    ) -> None:
        self.venue = venue
        # The costs a login's password is checked against (a stored hash with others is re-hashed to
        # them). Tests of other things give their hub cheap costs, as their accounts are hashed with.
        self.password_hasher = password_hasher
        self.store = store
        self.metrics = metrics
        self.clock = clock
        self.tables = {t.id: t for t in venue.tables}
        # The owned state (broker.hall): changed only by the writer, through its methods.
        self._listeners = Listeners()
        self._games = OpenGames()
        self._runtime = RuntimeBook(self.tables)
        self._alerts = AlertBook(store, self._listeners, clock, metrics, names=self._table_names)
        self._hall = HallState(venue, self.tables, store, clock, metrics, self._games, self._runtime, self._alerts, self._listeners)
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
        self.lights = Lights(venue, self.tables, clock, self._games, self._out_of_service, self._link)
        self._table_service = TableService(self._hall, self.lights, self._out_of_service)
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
        # The parts, in the order they start (and stop in reverse) and the watchdog runs their rounds.
        # The hub gathers from them each command's one handler (in the part that owns its rules), the
        # rounds, and the refusals it answers as its own (broker.core.part says what a part is).
        parts = self._compose(home_assistant=home_assistant, data_dir=data_dir, central=central, box=box)
        self.parts: tuple[Part, ...] = tuple(p for p in parts if p is not None)
        self.commands = Handlers(h for p in self.parts for h in p.handlers())
        self.watchdog.rounds += [r for p in self.parts for r in p.rounds()]
        # The parts' own refusals as the hub's (NotFound: a 404 on the API, ServiceError: a 409): a
        # caller of `execute` meets only these and the registry's own (MemberError, UserError).
        self._missing = tuple(r for p in self.parts for r in p.as_not_found)
        self._refused = tuple(r for p in self.parts for r in p.as_service_error)
        self._load()
        if central is not None:
            self.outbox.install()
        # From here on only the writer thread may open a write transaction on this store.
        store.bind_writer(lambda: self._writer.on_writer, "the hub's writer (thread lavos-hall-writer)")

    def _compose(
        self, *, home_assistant: bool, data_dir: Path | None, central: CentralSettings | None, box: BoxSensors | None
    ) -> list[Part | None]:
        """Build the parts, each given what it needs of another (never by importing up the tree), and
        list them; None: a part this hub runs without (Home Assistant, the centre, the box watch)."""
        venue, store = self.venue, self.store
        # Home Assistant discovery (off unless asked for; broker.floor.home_assistant): read-only.
        self.home_assistant = (
            HomeAssistant(venue, self._link, self.lights.summary, self._writer.call) if home_assistant and self._link else None
        )
        if self.home_assistant is not None:
            self.lights.game_changed = self.home_assistant.table_changed
        # The money (broker.till): tabs, payments, the business day, eKasa; on the same writer.
        self.till = Till(self._hall, self._writer.call)
        self.wallet = Wallet(self._hall, self.till)  # members' credit and packages (broker.wallet), paid through the till
        # Bookings, blocks and the waiting list (broker.bookings.bookings, waiting_list): their owned state
        # is the book; the watchdog's round turns due bookings into no-shows and offers free tables.
        self.booking_book = BookingBook()
        self.bookings = Bookings(self._hall, self.booking_book, self._out_of_service, self.execute)
        self.waiting_list = WaitingList(self._hall, self.booking_book, self._out_of_service, self.execute)
        self.games = Games(
            self._hall, self.lights, self._out_of_service, self._table_service, self.till, prepaid_guard=self.bookings.check_prepaid
        )
        # Push notifications (broker.notify.notifications): spooled under data_dir (None: in memory).
        self.notifications = Notifications(self._hall, data_dir, self.till.days.report)
        self._alerts.notify = self.notifications.alert_changed
        # Tournaments (issue 21): their setup, their matches on the tables, their results.
        self.tournament_calls = TournamentCalls(self._hall, self.games, self._out_of_service, lambda cmd: self.execute(cmd))
        self.tournaments = Tournaments(self._hall, lambda cmd: self.execute(cmd), self.tournament_calls.fill_tables)
        self.tournament_results = TournamentResults(self._hall, self.tournament_calls)
        self.games.matches = self.tournament_calls  # a called match's game is the tournament's (broker.floor.games)
        self._table_service.matches = self.tournament_calls  # and its table's light (broker.floor.table_service)
        # The records for the central reporting hub (broker.outbox.records): written with each record
        # and sent by their own thread, only when a centre is configured.
        self.outbox = Outbox(self._hall, central)
        self._sender = OutboxSender(store, venue.venue.id, central, self.execute) if central is not None else None
        if self._sender is not None:
            self.outbox.wake = self._sender.wake
        self.waiting_list.announce = self.notifications.offer_made
        # The box watching itself (broker.floor.box_watch): its clock, backups and certificates, when
        # `lavos server` is told to (a hub box's unit is); in the watchdog's rounds, after the others.
        self.box_watch = BoxWatch(self._hall, box, self.execute) if box is not None else None
        return [
            self.games,
            Closing(self._hall, self.games),
            self._table_service,
            self._alerts,
            MonitoringRules(self._hall),
            Members(self._hall),
            Accounts(self._hall),
            Logins(self._hall),
            self.till,
            Shifts(self._hall),  # staff shifts and the drawer at a shift change (broker.shifts)
            self.wallet,
            Stock(self._hall, self.till),  # the bar's stock (broker.stock): the till's sales move it
            self.home_assistant,
            self.notifications,
            self.bookings,
            self.waiting_list,
            self.tournaments,
            self.tournament_calls,
            self.tournament_results,
            self.outbox,
            self._sender,
            self.box_watch,
        ]

    # -- commands ------------------------------------------------------------------------

    def execute(self, cmd: Command[R]) -> R:
        """Run `cmd` on the writer and answer what its handler answers (or raise its refusal).

        Any thread; on the writer itself (a watchdog round stopping a game) it runs inline."""
        handler = self.commands.handler_of(cmd)
        return self._writer.call(lambda: self._public(handler, cmd))

    def execute_soon(self, cmd: Command[object]) -> None:
        """Queue `cmd` on the writer and return at once; its refusal or failure is only logged.

        For bookkeeping no caller waits on (when a login or a token was last used): a staff call
        must neither wait behind the writer for it nor fail when it cannot be written now."""
        handler = self.commands.handler_of(cmd)
        self._writer.post(lambda: self._public(handler, cmd), type(cmd).__name__)

    def _public(self, handler: Callable[[Command[R]], R], cmd: Command[R]) -> R:
        """Run a handler; the parts' own refusals come out as the hub's."""
        try:
            return handler(cmd)
        except ServiceError:
            raise
        except self._missing as e:
            raise NotFound.like(e) from None
        except self._refused as e:
            raise ServiceError.like(e) from None

    # -- lifecycle -----------------------------------------------------------------

    def _load(self) -> None:
        """Derive the owned state from the database: open games from their op logs, the drops of
        each open game from its stored pocket events, the tables out of service, the open alerts."""
        with self.store.reader() as db:
            rows = db.scalars(select(Game).where(Game.state != "stopped")).all()
            loaded = {row.table_id: OpenGame(row.id, replay_row(row, self.venue)) for row in rows}
            rows_by_table = {row.table_id: row for row in rows}
            for table, s in loaded.items():
                n, last = db.execute(
                    select(func.count(), func.max(Event.received_at)).where(
                        Event.table_id == table, Event.type == "pocket", Event.received_at >= s.state.started_at
                    )
                ).one()
                warned = rows_by_table[table]
                self._runtime.reset(
                    table,
                    drops=n or 0,
                    last_drop_at=last,
                    closing_warned_for=warned.closing_warned_for,
                    prepaid_warned_for=warned.prepaid_warned_for,
                )
            self._out_of_service.load(db)
            self.booking_book.load(db, self.clock())
        self._games.load(loaded)
        self._runtime.publish()
        log.info("loaded %d open games", len(loaded))
        self._alerts.reload()
        self.tournament_calls.refresh()

    def load_open_causes(self) -> None:
        """Every cause whose alert may be open; see broker.core.alert_book."""
        self._alerts.reload()

    def start(self) -> None:
        contract.build_validators()
        self._writer.start()
        if self._link:
            self._link.start()
        self.watchdog.start()
        for part in self.parts:
            part.started()

    def close(self) -> None:
        # What submits work to the writer stops first, then the writer (its last items run), and only
        # then what its items write to besides the database: the notifications' spool (an alert
        # raised by the writer's last batch is spooled, never put into a closed file).
        for part in reversed(self.parts):
            part.stopping()
        self.watchdog.stop()
        if self._link:
            self._link.close()
        self._writer.stop()
        for part in self.parts:
            part.stopped()
        self.store.unbind_writer()  # the writer is gone: the store is its process's again
        if self.metrics:
            self.metrics.close()

    def run_on_writer(self, fn: Callable[[], R]) -> R:
        """Run `fn` on the writer: for the hub's own jobs and for tests that must put the database
        in a state no command makes (a row from an older version, a broken one)."""
        return self._writer.call(fn)

    # -- what readers may see (snapshots: nothing outside the hub holds its state) ----------

    @property
    def open(self) -> Mapping[str, OpenGame]:
        """Read-only snapshot of the open games (old name; prefer hall_snapshot/open_game)."""
        return self._games.view()

    @property
    def runtime(self) -> Mapping[str, RuntimeView]:
        """Read-only snapshot of the drop counters (old name; prefer hall_snapshot)."""
        return self._runtime.view()

    @property
    def hall_state(self) -> HallState:
        """The owned state and what it is read against, as the parts and their readers get it."""
        return self._hall

    @property
    def link(self) -> HubLink | ProcessLink | None:
        return self._link

    @property
    def open_causes(self) -> frozenset[str]:
        return self._alerts.open_causes()

    @property
    def alerts(self) -> AlertBook:
        """The only code that opens, closes or acknowledges an alert (its writes: on the writer)."""
        return self._alerts

    def hall_snapshot(self) -> HallSnapshot:
        """Open games and drop counts as one consistent picture."""
        return self._hall.snapshot()

    def open_game(self, table: str) -> OpenGame | None:
        return self._games.get(table)

    @property
    def listeners(self) -> list[Listener]:
        """Who is told of committed changes (tests count them; code subscribes instead)."""
        return self._listeners.compat_list

    def subscribe(self, fn: Listener) -> None:
        """Call fn(topic, data) after every committed change (on the hub's writer thread: do not block)."""
        self._listeners.subscribe(fn)

    def unsubscribe(self, fn: Listener) -> None:
        self._listeners.unsubscribe(fn)

    @property
    def mqtt_connected(self) -> bool | None:
        """None when the hub runs without MQTT (tests, tools)."""
        return self._link.stats.connected if self._link else None

    def bill_of(self, s: game_ops.GameState, at: datetime | None = None) -> Bill:
        return self.lights.bill_of(s, at)

    def summary(self, table: str) -> contract.SessionSummary | None:
        return self.lights.summary(table)

    def game_state(self, game_id: int) -> tuple[Game, game_ops.GameState]:
        with self.store.reader() as db:
            row = db.get(Game, game_id)
            if row is None:
                raise NotFound(N_("There is no game no. %(game)d."), game=game_id)
            ops = ops_of(row.ops)
            db.expunge(row)
        return row, game_ops.replay(ops, self.venue)

    @property
    def out_of_service_book(self) -> OutOfServiceBook:
        """The tables out of service (the writer changes it; readers take its view)."""
        return self._out_of_service

    def out_of_service(self) -> Mapping[str, OutOfService]:
        """Tables out of service now (a snapshot, any thread)."""
        return self._out_of_service.view()

    def light_commands(self) -> Mapping[str, LightCommand]:
        """The light last commanded per table and when (broker.floor.light_commands says what for)."""
        return self.lights.commands()

    # -- what the ingest rules and the watchdog use (broker.core.ports.HubOps; the writer) ------

    def desired_light(self, table: str) -> bool | None:
        return self.lights.desired(table)

    def send_light(self, table: str, on: bool, blink_s: int | None = None) -> None:
        self.lights.send(table, on, blink_s)

    def resend_table(self, table: str) -> None:
        self._writer.call(lambda: self.lights.resend(table))

    def is_out_of_service(self, table: str) -> bool:
        return self._out_of_service.get(table) is not None

    def lit_by_hand(self, table: str) -> bool:
        """Did staff switch this light on from the dashboard with no game (the writer's view)?"""
        return self._table_service.lit_by_hand(table)

    def _on_link_up(self, event: LinkUp | HomeAssistantOnline) -> None:
        if isinstance(event, HomeAssistantOnline):  # HA restarted: only HA needs telling, once per burst
            if self.home_assistant:
                self.home_assistant.ha_online()
            return
        # A reconnect of ours: the nodes may have missed commands; the wanted state is idempotent.
        # On the writer, so a staff stop is either wholly before this resend or wholly after.
        for table in self.tables:
            self.lights.resend(table)
        if self.home_assistant:
            self.home_assistant.announce()
        if self.outbox.settings is not None and self._link:  # several halls: the centre's floor names our tables
            self._link.publish(VENUE_TOPIC, venue_layout(self.venue), retain=True)

    def _table_names(self, table: str) -> tuple[str, str | None]:
        """What staff call a table (Slovak, English) in the texts the hub stores; an unknown id as it is."""
        spec = self.tables.get(table)
        return (spec.name, spec.name_en) if spec else (table, None)
