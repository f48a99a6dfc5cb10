"""The floor's reads (`reads.floor` on the dashboard): the open games and their bills, the games of
the database, the tables live (node, light, game, out of service), their nodes and what the hub
refused from them, sensor events, alerts, foosball check-ins, what happened at a table. Live state
comes from the owned state's snapshots (no query); the rest from read-only store sessions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, cast

from sqlalchemy import select

from broker.core.errors import NotFound
from broker.core.open_games import OpenGame
from broker.core.ports import HallSnapshot, HallState
from broker.core.row_values import copy_row
from broker.core.store_errors import store_call
from broker.domain.billing import Bill
from broker.domain.floor import alert_kinds, game_ops
from broker.domain.floor.amount_clock import amount_moves_at
from broker.domain.floor.club_rate import start_warning
from broker.domain.floor.reject_tally import UNKNOWN, NodeRejects
from broker.domain.json_shape import HIDDEN
from broker.domain.refusals import N_
from broker.floor.game_views import GameBrief, GameOnTable, GameStarted, GameView, brief_fields
from broker.floor.light_commands import LightCommand
from broker.floor.lights import Lights
from broker.floor.table_service import OutOfService, OutOfServiceBook
from broker.floor.table_views import LiveTable, NodeStatus, NodeView, live_table
from broker.people.member_views import CheckinView, checkin_view
from broker.storage.alerts import open_alerts
from broker.storage.models import Alert, AuditEntry, Event, FoosballCheckin, Game, Member, Node
from broker.storage.rejects import node_rejects
from broker.till import tab_views
from broker.till.reads import TillReads
from devices.kinds import Kind


@dataclass(frozen=True)
class AlertView:
    id: int
    kind: str
    table: str | None
    cause_key: Annotated[str, HIDDEN]  # the hub's key of its cause (broker.domain.floor.alert_kinds)
    severity: str
    message: str
    message_en: str
    opened_at: datetime
    last_seen_at: datetime
    count: int
    acked_at: datetime | None
    acked_by: str | None
    closed_at: datetime | None

    @property
    def acked(self) -> bool:
        return self.acked_at is not None

    @property
    def loud(self) -> bool:
        """One of the alerts the club wants nobody to miss (the banner shouts it)."""
        return self.kind in alert_kinds.LOUD_KINDS

    def text(self, lang: str) -> str:
        return self.message if lang == "sk" else self.message_en


def _alert(a: Alert) -> AlertView:
    return copy_row(AlertView, a, table=a.table_id)


@dataclass(frozen=True)
class TableCheckins:
    """A foosball table with the members checked in at it now (GET /api/foosball)."""

    table: str
    name: str
    checkins: tuple[CheckinView, ...]


@dataclass(frozen=True)
class SensorEvent:
    table: str
    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class TableUse:
    """One line of a table's use log: what the node saw (activity, the button) or staff did to the table."""

    at: datetime
    what: str  # an event type ("activity", "button") or an audit action ("table.light", "table.out_of_service", ...)
    by: str | None  # the staff member, for what staff did
    on: bool | None = None  # table.light: switched on or off
    reason: str | None = None


class FloorReads:
    """Queries over the floor's live state and rows; none of them writes."""

    def __init__(self, hall: HallState, lights: Lights, out_of_service: OutOfServiceBook, till: TillReads) -> None:
        self._hall = hall
        self._store = hall.store
        self._lights = lights
        self._out_of_service = out_of_service
        self._till = till

    def hall_snapshot(self) -> HallSnapshot:
        return self._hall.snapshot()

    def open_game(self, table: str) -> OpenGame | None:
        return self._hall.games.get(table)

    def bill_of(self, state: game_ops.GameState, at: datetime | None = None) -> Bill:
        return game_ops.bill_now(state, self._hall.venue, at or self._hall.clock())

    def _brief(self, game_id: int, state: game_ops.GameState, items: Iterable[tab_views.TabItemView] | None = None) -> dict[str, Any]:
        # `items`: what is on the game's tab, read here for one game when not given (a list reads them at once)
        if items is None:
            items = self._till.game_items([game_id]).get(game_id, ())
        return brief_fields(game_id, state, self.bill_of(state), self._hall.venue, self._hall.clock(), items)

    def game_brief(self, game_id: int, state: game_ops.GameState, items: Iterable[tab_views.TabItemView] | None = None) -> GameBrief:
        """A game as lists and the floor's cards show it (its state and amount, no bill lines); what is
        on its tab is read unless `items` says it (the floor's cards pass none: no read per card)."""
        return GameBrief(**self._brief(game_id, state, items))

    def game_briefs(self, game_ids: list[int]) -> list[GameBrief]:
        """Games as lists show them, what is on their tabs read at once."""
        items = self._till.game_items(game_ids)
        return [GameBrief(**self._brief(g, self.game_state(g), items.get(g, ()))) for g in game_ids]

    def game_view(self, game_id: int, state: game_ops.GameState) -> GameView:
        """A game in `state` (e.g. as a command left it) with its itemised bill."""
        return GameView(**self._brief(game_id, state), bill=self.bill_of(state))

    def game(self, game_id: int) -> GameView:
        """A game with its itemised bill; NotFound if there is none."""
        return self.game_view(game_id, self.game_state(game_id))

    def game_started(self, game_id: int) -> GameStarted:
        """A game just started, with the warning staff get when a member's game runs at the standard rate."""
        state = self.game_state(game_id)
        warning = start_warning(state, self._hall.venue, self._hall.clock())
        return GameStarted(
            **self._brief(game_id, state),
            bill=self.bill_of(state),
            warning=str(warning) if warning else None,
            warning_code=warning.code if warning else None,
        )

    def amount_moves_at(self, game_id: int) -> datetime | None:
        """When the bill of this running game next shows another amount by itself (None: it is not
        running): broker.domain.floor.amount_clock, from the open games' snapshot (no query)."""
        game = next((g for g in self.hall_snapshot().open.values() if g.id == game_id), None)
        if game is None:
            return None
        return amount_moves_at(game.state, self._hall.venue, max(self._hall.clock(), game.state.last_at))

    @store_call
    def game_state(self, game_id: int) -> game_ops.GameState:
        """The game replayed from its op log; NotFound if there is none."""
        with self._store.reader() as db:
            row = db.get(Game, game_id)
            if row is None:
                raise NotFound(N_("There is no game no. %(game)d."), game=game_id)
            ops = [
                game_ops.Op(cast(game_ops.OpKind, o.kind), o.at, o.data, o.actor, o.reason) for o in row.ops
            ]  # the kind column holds OpKinds only
        return game_ops.replay(ops, self._hall.venue)

    @store_call
    def game_ids(
        self, *, open: bool | None = None, started_from: datetime | None = None, started_before: datetime | None = None, limit: int = 200
    ) -> list[int]:
        """Session ids, newest start first."""
        q = select(Game.id).order_by(Game.started_at.desc(), Game.id.desc()).limit(limit)
        if open is not None:
            q = q.where(Game.state != "stopped") if open else q.where(Game.state == "stopped")
        if started_from is not None:
            q = q.where(Game.started_at >= started_from)
        if started_before is not None:
            q = q.where(Game.started_at < started_before)
        with self._store.reader() as db:
            return list(db.scalars(q))

    @store_call
    def nodes(self, only: str | None = None) -> dict[str, NodeView]:
        q = select(Node) if only is None else select(Node).where(Node.table_id == only)
        with self._store.reader() as db:
            return {n.table_id: copy_row(NodeView, n, table=n.table_id) for n in db.scalars(q)}

    def node(self, table: str) -> NodeView | None:
        return self.nodes(only=table).get(table)

    @store_call
    def node_rejects(self) -> dict[str, NodeRejects]:
        with self._store.reader() as db:
            return node_rejects(db)

    def node_statuses(self) -> list[NodeStatus]:
        """One row per venue table: its node (or none yet) and what the hub refused from it."""
        known, refused = self.nodes(), self.node_rejects()
        return [NodeStatus.of(t.id, known.get(t.id), refused.get(t.id)) for t in self._hall.venue.tables]

    def unknown_rejects(self) -> NodeRejects:
        """What the hub refused under topics that name no table of the venue."""
        return self.node_rejects().get(UNKNOWN) or NodeRejects()

    def live_tables(self, only: str | None = None) -> list[LiveTable]:
        """The venue's tables (or just `only`) with their live state: node, light, game, out of service."""
        nodes, oos = self.nodes(only), self.out_of_service()
        hall = self.hall_snapshot()  # games and drop counts as one picture
        specs = [self._hall.tables[only]] if only is not None else list(self._hall.venue.tables)
        playing = {spec.id: g for spec in specs if spec.kind.billed and (g := hall.open.get(spec.id)) is not None}
        items = self._till.game_items([g.id for g in playing.values()])  # one read for all
        out = []
        for spec in specs:
            g = playing.get(spec.id)
            game = GameOnTable(**self._brief(g.id, g.state, items.get(g.id, ())), drops=hall.drops.get(spec.id, 0)) if g else None
            out.append(live_table(spec, nodes.get(spec.id), game, oos.get(spec.id)))
        return out

    @store_call
    def sensor_events(self, start: datetime, end: datetime) -> list[SensorEvent]:
        """Pocket drops and sensor fault reports received in [start, end), in order."""
        with self._store.reader() as db:
            rows = db.execute(
                select(Event.table_id, Event.type, Event.data)
                .where(
                    Event.type.in_(("pocket", "sensor_fault")),
                    Event.received_at >= start,
                    Event.received_at < end,
                )
                .order_by(Event.received_at, Event.id)
            )
            return [SensorEvent(t, k, d or {}) for t, k, d in rows]

    @store_call
    def open_alerts(self, table: str | None = None) -> list[AlertView]:
        with self._store.reader() as db:
            return [_alert(a) for a in open_alerts(db, table)]

    @store_call
    def alert(self, alert_id: int) -> AlertView | None:
        with self._store.reader() as db:
            a = db.get(Alert, alert_id)
            return _alert(a) if a is not None else None

    def alert_history(self, table: str | None = None, limit: int = 200) -> list[AlertView]:
        """The latest alerts, closed ones included, newest first."""
        q = select(Alert).order_by(Alert.opened_at.desc(), Alert.id.desc()).limit(limit)
        if table is not None:
            q = q.where(Alert.table_id == table)
        with self._store.reader() as db:
            return [_alert(a) for a in db.scalars(q)]

    def foosball_tables(self) -> list[str]:
        return [t.id for t in self._hall.venue.tables if t.kind is Kind.FOOSBALL]

    @store_call
    def active_checkins(self, tables: list[str] | None = None) -> list[TableCheckins]:
        """Per foosball table, the check-ins that still count now, oldest first."""
        now = self._hall.clock()
        wanted = self.foosball_tables() if tables is None else tables
        with self._store.reader() as db:
            rows = list(
                db.execute(
                    select(FoosballCheckin, Member.name)
                    .join(Member, Member.id == FoosballCheckin.member_id)
                    .where(FoosballCheckin.table_id.in_(wanted), FoosballCheckin.ended_at.is_(None))
                    .order_by(FoosballCheckin.checked_in_at)
                )
            )
            views = [checkin_view(c, name, self._hall.venue) for c, name in rows]
        return [
            TableCheckins(t, self._hall.tables[t].name, tuple(v for v in views if v.table_id == t and v.active_until > now)) for t in wanted
        ]

    def out_of_service(self) -> Mapping[str, OutOfService]:
        """Tables out of service now, with why and since when (a snapshot)."""
        return self._out_of_service.view()

    def light_commands(self) -> Mapping[str, LightCommand]:
        """The light the hub last commanded per table, and when (not yet confirmed, maybe)."""
        return self._lights.commands()

    @store_call
    def table_use(self, table: str, start: datetime, end: datetime, limit: int = 200) -> list[TableUse]:
        """What happened at a table in [start, end), newest first: its node's activity and button
        events and what staff did to the table (light, out of service)."""
        with self._store.reader() as db:
            events = db.execute(
                select(Event.received_at, Event.type)
                .where(Event.table_id == table, Event.type.in_(("activity", "button")), Event.received_at >= start, Event.received_at < end)
                .order_by(Event.received_at.desc(), Event.id.desc())
                .limit(limit)
            ).all()
            audit = db.scalars(
                select(AuditEntry)
                .where(AuditEntry.target == f"table:{table}", AuditEntry.at >= start, AuditEntry.at < end)
                .order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
                .limit(limit)
            ).all()
            rows = [TableUse(at, kind, None) for at, kind in events]
            rows += [TableUse(a.at, a.action, a.actor, (a.detail or {}).get("on"), a.reason) for a in audit]
        return sorted(rows, key=lambda r: r.at, reverse=True)[:limit]
