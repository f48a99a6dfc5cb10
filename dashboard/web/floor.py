"""What the floor view shows per table, loaded for the whole hall in a fixed number of queries.

A table's state is one word staff read at a glance. When several hold, the one that needs staff
most wins, and an open alert about a table is part of its state (a card must not say "free"
while the banner says balls are dropping on it). `card_state` is the one place that decides;
`RULES` is the precedence, written once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from broker.domain.venue import TableSpec
from broker.floor.game_views import GameBrief
from broker.floor.light_commands import LightCommand
from broker.floor.reads import AlertView
from broker.floor.table_views import NodeView
from broker.hall.read_models import HallReads
from broker.people.member_views import CheckinView
from broker.till.tab_views import SharedMember, SharedTab, UnpaidTab
from dashboard.web.alerts_view import all_open
from dashboard.web.i18n import N_
from devices.kinds import Kind


@dataclass(frozen=True)
class CardFacts:
    """What a card's state is decided from (read once per table by FloorData)."""

    kind: Kind
    online: bool
    light_on: bool
    game_state: str | None  # "running" / "paused", None without a game
    prepaid_left_s: int | None
    warn_s: int  # prepaid time this short is "ending"
    alert_kinds: frozenset[str]
    checked_in: bool  # foosball: somebody is checked in
    out_of_service: bool = False  # staff took the table out of service (cleaning, repair)
    light_switching_off: bool = False  # the node still reports on, the hub commanded off a moment ago


# Worst first: the first rule that holds is the card's state. Why this order: a table staff took
# out of service is not played whatever its node says; a dead node hides everything else (what it
# would report is unknown); then what costs the club money or breaks its rules right now
# (foosball without a member, play or light without a game), then a sensor that miscounts,
# then what needs a decision soon (closing time, prepaid run out or ending, a paused game,
# nobody playing), then the normal states.
RULES: tuple[tuple[str, Callable[[CardFacts], bool]], ...] = (
    ("out_of_service", lambda f: f.out_of_service),
    ("offline", lambda f: not f.online),
    ("unguarded", lambda f: "foosball_no_member" in f.alert_kinds),
    ("balls_no_game", lambda f: f.game_state is None and "play_without_session" in f.alert_kinds),
    (
        "light_no_game",
        lambda f: (
            f.game_state is None
            and f.kind.billed
            and ((f.light_on and not f.light_switching_off) or "light_without_session" in f.alert_kinds)
        ),
    ),
    ("sensor_fault", lambda f: "sensor_fault" in f.alert_kinds),
    ("after_closing", lambda f: f.game_state is not None and "open_after_closing" in f.alert_kinds),
    ("prepaid_over", lambda f: f.game_state == "running" and "prepaid_expired" in f.alert_kinds),
    ("paused", lambda f: f.game_state == "paused"),
    ("prepaid_ending", lambda f: f.game_state == "running" and f.prepaid_left_s is not None and f.prepaid_left_s <= f.warn_s),
    ("idle", lambda f: f.game_state == "running" and "idle_session" in f.alert_kinds),
    ("playing", lambda f: f.game_state is not None or (f.kind is Kind.FOOSBALL and f.checked_in)),
    ("free", lambda f: True),
)
STATES = tuple(name for name, _ in RULES)
STATE_WORDS = {
    "out_of_service": N_("Out of service"),
    "offline": N_("Node offline"),
    "unguarded": N_("Playing, no member"),
    "balls_no_game": N_("Balls, no game"),
    "light_no_game": N_("Light on, no game"),
    "sensor_fault": N_("Sensor fault"),
    "after_closing": N_("Past closing time"),
    "prepaid_over": N_("Prepaid time over"),
    "paused": N_("Paused"),
    "prepaid_ending": N_("Prepaid ending"),
    "idle": N_("Idle"),
    "playing": N_("Playing"),
    "free": N_("Free"),
}


def card_state(f: CardFacts) -> str:
    return next(name for name, holds in RULES if holds(f))


# A node reports its light some tens of milliseconds after the hub's command (more on a busy
# network). For this long after a command the card believes the command over the node's older
# report and shows the light "switching" (a look of its own, not the state of the table): a
# stopped game is "free, light going off", not "lit without a game" for a blink. Longer, and
# the node has not done what it was told: its report counts again (and the card says so).
LIGHT_CONFIRM_S = 2.0


def light_switching(command: LightCommand | None, reported: bool | None, now: float | None = None) -> float | None:
    """Seconds left to wait for the node to confirm the light the hub commanded, or None when
    there is nothing to wait for (no recent command, or the node already reports it)."""
    if command is None or reported is None or reported == command.on:
        return None
    left = LIGHT_CONFIRM_S - command.age_s(now)
    return left if left > 0 else None


@dataclass
class TableView:
    spec: TableSpec
    state: str
    online: bool
    light_on: bool | None
    game: GameBrief | None = None
    drops: int = 0
    alerts: list[AlertView] = field(default_factory=list)
    checkins: tuple[CheckinView, ...] = ()  # foosball
    # The light the hub commanded is not confirmed by the node yet: for this many more seconds
    # the dot shows it switching (the page re-fetches the card then, see _table_card.html).
    light_confirm_s: float | None = None
    unpaid: UnpaidTab | None = None  # a free table whose last game's tab is unpaid: the card's badge
    shared: SharedTab | None = None  # the table's tab is merged with others' (a party on two tables)

    @property
    def shared_with(self) -> tuple[SharedMember, ...]:
        return self.shared.others(self.spec.id) if self.shared else ()

    @property
    def word(self) -> str:
        return STATE_WORDS[self.state]

    @property
    def busy(self) -> bool:
        """Somebody is at the table (a game, a foosball check-in): the card shows what is going on."""
        return self.game is not None or bool(self.checkins)


@dataclass
class RoomView:
    id: str
    name: str
    name_en: str
    tables: list[TableView]

    @property
    def free(self) -> int:
        return sum(1 for t in self.tables if t.state == "free")


class FloorData:
    """Everything the cards need, read once: nodes, open alerts, foosball check-ins, open games."""

    def __init__(self, reads: HallReads, only: str | None = None) -> None:
        self.reads = reads
        self.nodes = reads.floor.nodes(only)
        self.alerts = all_open(reads)
        self.by_table: dict[str | None, list[AlertView]] = {}
        for a in self.alerts:
            self.by_table.setdefault(a.table, []).append(a)
        wants_foosball = only is None or reads.tables[only].kind is Kind.FOOSBALL
        self.checkins = {f.table: f.checkins for f in reads.floor.active_checkins()} if wants_foosball else {}
        hall = reads.floor.hall_snapshot()  # a consistent picture of games and drop counts
        self.open, self.drops = hall.open, hall.drops
        self.warn_s = int(timedelta(minutes=reads.venue.billing.prepaid_warning_min).total_seconds())
        self.oos = reads.floor.out_of_service()
        self.light_commands = reads.floor.light_commands()
        self.unpaid = reads.till.unpaid_by_table(only)  # the till: last games' unpaid tabs, one read for the hall
        self.shared = reads.till.shared_tabs()  # merged bills still to be paid (few: read whole)
        self.shared_by_game = {m.game_id: t for t in self.shared.values() for m in t.members if m.game_id is not None}

    def table(self, spec: TableSpec) -> TableView:
        node: NodeView | None = self.nodes.get(spec.id)
        g = self.open.get(spec.id)
        # The card shows the game, not what is on its tab (the tab's owed amount is `unpaid`'s): no read per card.
        game = self.reads.floor.game_brief(g.id, g.state, items=()) if g is not None else None
        alerts = self.by_table.get(spec.id, [])
        checkins = self.checkins.get(spec.id, ())
        command = self.light_commands.get(spec.id)
        confirm_s = light_switching(command, node.light_on if node else None)
        facts = CardFacts(
            kind=spec.kind,
            online=bool(node and node.online),
            light_on=bool(node and node.light_on),
            game_state=game.state if game else None,
            prepaid_left_s=game.prepaid_left_s if game else None,
            warn_s=self.warn_s,
            alert_kinds=frozenset(a.kind for a in alerts),
            checked_in=bool(checkins),
            out_of_service=spec.id in self.oos,
            light_switching_off=confirm_s is not None and command is not None and not command.on,
        )
        unpaid = self.unpaid.get(spec.id) if game is None else None
        shared = self.shared_by_game.get(g.id) if g is not None else (self.shared.get(unpaid.id) if unpaid else None)
        return TableView(
            spec,
            card_state(facts),
            facts.online,
            node.light_on if node else None,
            game,
            self.drops.get(spec.id, 0) if game else 0,
            alerts,
            checkins,
            confirm_s,
            unpaid,
            shared,
        )

    def rooms(self) -> list[RoomView]:
        venue = self.reads.venue
        out = []
        for room in venue.rooms:
            tables = [self.table(t) for t in venue.tables if t.room == room.id]
            if tables:
                out.append(RoomView(room.id, room.name, room.name_en or room.name, tables))
        return out


def table_view(reads: HallReads, table_id: str) -> TableView:
    return FloorData(reads, only=table_id).table(reads.tables[table_id])
