"""What a table and its node look like to the pages and the API: frozen values, never rows.

HallReads (broker.hall.read_models) makes them; the API answers with them as they are
(GET /api/tables, /api/nodes; broker.domain.json_shape says how they read as JSON), and the floor
and monitoring pages draw the same values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Annotated, Any

from broker.domain.floor.reject_tally import NodeRejects
from broker.domain.json_shape import HIDDEN, derived, every_field_sent, json_name
from broker.domain.venue import TableSpec
from broker.floor.game_views import GameOnTable
from broker.floor.table_service import OutOfService


@dataclass(frozen=True)
class Light:
    on: bool
    blink: bool
    cause: str | None


@dataclass(frozen=True)
class NodeView:
    """A table's node as the hub last heard from it (its status, telemetry and light reports)."""

    table: str
    online: bool
    online_since: datetime | None
    last_seen_at: datetime | None
    boot: str | None
    version: str | None
    telemetry: Annotated[dict[str, Any], HIDDEN]  # as the node sent it; the JSON names the known parts below
    telemetry_at: datetime | None
    reconnects: int
    light_on: Annotated[bool | None, HIDDEN]
    light_blink: Annotated[bool | None, HIDDEN]
    light_cause: Annotated[str | None, HIDDEN]

    @derived
    def uptime_s(self) -> int | float | None:
        return self.telemetry.get("uptime_s")

    @derived
    def cpu_temp_c(self) -> int | float | None:
        return self.telemetry.get("cpu_temp_c")

    @derived
    def outbox(self) -> int | float | None:
        return self.telemetry.get("outbox")

    @derived
    def light(self) -> Light | None:
        """The light as the node last reported it; None before its first report."""
        if self.light_on is None:
            return None
        return Light(self.light_on, bool(self.light_blink), self.light_cause)

    @classmethod
    def never_heard(cls, table: str) -> NodeView:
        """A table whose node has not spoken yet."""
        return cls(table, False, None, None, None, None, {}, None, 0, None, None, None)


@every_field_sent
@dataclass(frozen=True)
class NodeStatus(NodeView):
    """A node with what the hub refused from it: a row of the monitoring page and of GET /api/nodes."""

    rejects: NodeRejects = field(default_factory=NodeRejects)

    @classmethod
    def of(cls, table: str, node: NodeView | None, rejects: NodeRejects | None) -> NodeStatus:
        node = node or NodeView.never_heard(table)
        return cls(**{f.name: getattr(node, f.name) for f in fields(NodeView)}, rejects=rejects or NodeRejects())


@dataclass(frozen=True)
class TableNode:
    online: bool
    last_seen_at: datetime | None
    version: str | None


@every_field_sent
@dataclass(frozen=True)
class LiveTable:
    """A table of the venue with its live state: its node, light, game and whether it is in service."""

    id: str
    name: str
    kind: str
    room: str | None
    size_ft: int | None
    club_card: bool
    billed: bool
    node: TableNode
    light: Light | None
    game: Annotated[GameOnTable | None, json_name("session")]
    out_of_service: bool = False
    out_of_service_reason: str | None = None
    out_of_service_since: datetime | None = None
    out_of_service_by: str | None = None


def live_table(spec: TableSpec, node: NodeView | None, game: GameOnTable | None, oos: OutOfService | None) -> LiveTable:
    return LiveTable(
        id=spec.id,
        name=spec.name,
        kind=spec.kind.value,
        room=spec.room,
        size_ft=spec.size_ft,
        club_card=spec.club_card,
        billed=spec.kind.billed,
        node=TableNode(bool(node and node.online), node.last_seen_at if node else None, node.version if node else None),
        light=node.light if node else None,
        game=game,
        out_of_service=oos is not None,
        out_of_service_reason=oos.reason if oos else None,
        out_of_service_since=oos.since if oos else None,
        out_of_service_by=oos.by if oos else None,
    )
