"""What the floor view shows per table, loaded for the whole hall in a fixed number of queries.

A table's state is one word staff read at a glance; when several hold, the one that needs
staff most wins: a dead node hides everything else, a broken sensor miscounts, and a paused or
ending session needs a decision before a merely running one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from broker.domain.venue import TableSpec
from broker.hall.read_models import HallReads, NodeView
from dashboard.api import views
from dashboard.api.foosball import checkins_by_table
from dashboard.web.alerts_view import BannerAlert, all_open
from dashboard.web.i18n import N_
from devices.kinds import Kind

# In order of precedence (see the module docstring).
STATES = ("offline", "sensor_fault", "paused", "prepaid_ending", "idle", "playing", "light_no_session", "free")
STATE_WORDS = {
    "free": N_("Free"),
    "playing": N_("Playing"),
    "paused": N_("Paused"),
    "prepaid_ending": N_("Prepaid ending"),
    "idle": N_("Idle"),
    "light_no_session": N_("Light on, no session"),
    "offline": N_("Node offline"),
    "sensor_fault": N_("Sensor fault"),
}


@dataclass
class TableView:
    spec: TableSpec
    state: str
    online: bool
    light_on: bool | None
    session: dict[str, Any] | None = None  # dashboard.api.views.session (no bill lines)
    drops: int = 0
    alerts: list[BannerAlert] = field(default_factory=list)
    checkins: list[dict[str, Any]] = field(default_factory=list)  # foosball: dashboard.api.views.checkin

    @property
    def word(self) -> str:
        return STATE_WORDS[self.state]


@dataclass
class RoomView:
    id: str
    name: str
    name_en: str
    tables: list[TableView]


def _state(
    spec: TableSpec, node: NodeView | None, session: dict[str, Any] | None, alert_kinds: set[str], checked_in: bool, warn_s: int
) -> str:
    if node is None or not node.online:
        return "offline"
    if "sensor_fault" in alert_kinds:
        return "sensor_fault"
    if session is not None:
        if session["state"] == "paused":
            return "paused"
        left = session["prepaid_left_s"]
        if left is not None and left <= warn_s:
            return "prepaid_ending"
        return "idle" if "idle_session" in alert_kinds else "playing"
    if spec.kind is Kind.FOOSBALL and checked_in:
        return "playing"
    if spec.kind.billed and (node.light_on or "light_without_session" in alert_kinds):
        return "light_no_session"
    return "free"


class FloorData:
    """Everything the cards need, read once: nodes, open alerts, foosball check-ins, open sessions."""

    def __init__(self, reads: HallReads, only: str | None = None) -> None:
        self.reads = reads
        self.nodes = reads.nodes(only)
        self.alerts = all_open(reads)
        self.by_table: dict[str | None, list[BannerAlert]] = {}
        for a in self.alerts:
            self.by_table.setdefault(a.table, []).append(a)
        wants_foosball = only is None or reads.tables[only].kind is Kind.FOOSBALL
        self.checkins = {f["table"]: f["checkins"] for f in checkins_by_table(reads)} if wants_foosball else {}
        hall = reads.hall_snapshot()  # a consistent picture of sessions and drop counts
        self.open, self.drops = hall.open, hall.drops
        self.warn_s = int(timedelta(minutes=reads.venue.billing.prepaid_warning_min).total_seconds())

    def table(self, spec: TableSpec) -> TableView:
        node = self.nodes.get(spec.id)
        s = self.open.get(spec.id)
        session = views.session(self.reads, s.id, s.state, with_bill=False) if s is not None else None
        alerts = self.by_table.get(spec.id, [])
        checkins = self.checkins.get(spec.id, [])
        state = _state(spec, node, session, {a.kind for a in alerts}, bool(checkins), self.warn_s)
        return TableView(
            spec,
            state,
            bool(node and node.online),
            node.light_on if node else None,
            session,
            self.drops.get(spec.id, 0) if session else 0,
            alerts,
            checkins,
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
