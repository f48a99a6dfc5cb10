"""The tables with their live state, and the nodes behind them (remote monitoring)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException

from broker.accounts.staff import Staff
from broker.domain.billing import format_eur
from broker.domain.reject_tally import UNKNOWN
from broker.domain.venue import TableSpec
from broker.hall.hub import HallSnapshot
from broker.hall.read_models import HallReads, NodeView
from broker.hall.table_service import SetOutOfService, SwitchLight
from broker.hall.till.tab_views import TabItemView
from dashboard.api import responses as R
from dashboard.api import views
from dashboard.api.auth import can
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import LightIn, OutOfServiceIn

router = APIRouter(tags=["tables"])


def _open_summary(reads: HallReads, hall: HallSnapshot, table: str, items: Mapping[int, tuple[TabItemView, ...]]) -> dict[str, Any] | None:
    s = hall.open.get(table)
    if s is None:
        return None
    out = views.session(reads, s.id, s.state, with_bill=False, items=items.get(s.id, ()))
    out["drops"] = hall.drops.get(table, 0)
    return out


def _tables(reads: HallReads, specs: list[TableSpec], nodes: Mapping[str, NodeView]) -> list[dict[str, Any]]:
    hall = reads.hall_snapshot()  # sessions and drop counts as one picture
    items = reads.game_items([s.id for t, s in hall.open.items() if t in {spec.id for spec in specs}])  # one read for all
    return [_table(reads, spec, nodes.get(spec.id), hall, items) for spec in specs]


def _table(
    reads: HallReads, spec: TableSpec, node: NodeView | None, hall: HallSnapshot, items: Mapping[int, tuple[TabItemView, ...]]
) -> dict[str, Any]:
    oos = reads.out_of_service().get(spec.id)
    return {
        "id": spec.id,
        "name": spec.name,
        "kind": spec.kind.value,
        "room": spec.room,
        "size_ft": spec.size_ft,
        "club_card": spec.club_card,
        "billed": spec.kind.billed,
        "node": {
            "online": bool(node and node.online),
            "last_seen_at": node.last_seen_at if node else None,
            "version": node.version if node else None,
        },
        "light": views.light(node),
        "session": _open_summary(reads, hall, spec.id, items) if spec.kind.billed else None,
        **views.out_of_service(oos),
    }


@router.get("/tables", response_model=list[R.TableOut], summary="Every table with its live state")
def list_tables(reads: Reads, user: Annotated[Staff, Depends(can("floor.view"))]) -> list[dict[str, Any]]:
    return _tables(reads, list(reads.venue.tables), reads.nodes())


@router.get("/tables/{table_id}", response_model=R.TableOut, summary="One table with its live state")
def get_table(table_id: str, reads: Reads, user: Annotated[Staff, Depends(can("floor.view"))]) -> dict[str, Any]:
    if table_id not in reads.tables:
        raise HTTPException(404, f"no table {table_id[:40]!r} (tables: {', '.join(reads.tables)})")
    return _tables(reads, [reads.tables[table_id]], reads.nodes(table_id))[0]


@router.post("/tables/{table_id}/out-of-service", response_model=R.TableOut, summary="Take a table out of service (cleaning, repair)")
def take_out_of_service(
    table_id: str, body: OutOfServiceIn, hub: Hub, user: Annotated[Staff, Depends(can("tables.service"))]
) -> dict[str, Any]:
    # The same facade method as the table page's switch: refused while a game runs there.
    hub.execute(SetOutOfService(table=table_id, out=True, reason=body.reason, actor=user.username))
    return _tables(hub.reads, [hub.reads.tables[table_id]], hub.reads.nodes(table_id))[0]


@router.delete("/tables/{table_id}/out-of-service", response_model=R.TableOut, summary="Put a table back in service")
def back_in_service(table_id: str, hub: Hub, user: Annotated[Staff, Depends(can("tables.service"))]) -> dict[str, Any]:
    hub.execute(SetOutOfService(table=table_id, out=False, actor=user.username))
    return _tables(hub.reads, [hub.reads.tables[table_id]], hub.reads.nodes(table_id))[0]


@router.post("/tables/{table_id}/light", response_model=R.TableOut, summary="Switch a table's light by hand (checked like its button)")
def switch_light(table_id: str, body: LightIn, hub: Hub, user: Annotated[Staff, Depends(can("tables.light"))]) -> dict[str, Any]:
    hub.execute(SwitchLight(table=table_id, on=body.on, actor=user.username))
    return _tables(hub.reads, [hub.reads.tables[table_id]], hub.reads.nodes(table_id))[0]


@router.get("/nodes", response_model=list[R.NodeOut], summary="Table nodes: online, last seen, version, telemetry, light, refused messages")
def list_nodes(reads: Reads, user: Annotated[Staff, Depends(can("nodes.view"))]) -> list[dict[str, Any]]:
    return node_rows(reads)


@router.get("/nodes/unknown-rejects", response_model=R.RejectsOut, summary="Refused messages whose topic names no table of the venue")
def unknown_rejects(reads: Reads, user: Annotated[Staff, Depends(can("nodes.view"))]) -> dict[str, Any]:
    return views.rejects(reads.node_rejects().get(UNKNOWN))


def node_rows(reads: HallReads) -> list[dict[str, Any]]:
    """/api/nodes: one row per venue table, with what the hub refused from its node."""
    known, refused = reads.nodes(), reads.node_rejects()
    return [views.node(t.id, known.get(t.id), refused.get(t.id)) for t in reads.venue.tables]


@router.get("/tariffs", response_model=R.TariffsOut, summary="Tariffs and time bands from the venue file")
def list_tariffs(reads: Reads, user: Annotated[Staff, Depends(can("floor.view"))]) -> dict[str, Any]:
    v = reads.venue
    return {
        "default": v.billing.default_tariff,
        "member": v.billing.member_tariff,
        "unit_s": v.billing.unit_s,
        "minimum_cents": v.billing.minimum_cents,
        "vat_percent": v.billing.vat_percent,
        "tariffs": [
            {
                "id": t.id,
                "name": t.name,
                "name_en": t.name_en,
                "rate_cents_per_hour": t.rate_cents_per_hour,
                "rate": format_eur(t.rate_cents_per_hour),
                "requires_member": t.requires_member,
                "hours": {"open": t.hours.open.strftime("%H:%M"), "close": t.hours.close.strftime("%H:%M")} if t.hours else None,
            }
            for t in v.tariffs
        ],
        "bands": [
            {
                "tariff": b.tariff,
                "name": b.name,
                "days": b.days,
                "start": b.start.strftime("%H:%M"),
                "end": b.end.strftime("%H:%M"),
                "rate_cents_per_hour": b.rate_cents_per_hour,
            }
            for b in v.bands
        ],
    }


@router.get(
    "/extras", response_model=list[R.ExtraOut], summary="The extras (the venue file's, as products on sale) that go on a game's tab by id"
)
def list_extras(reads: Reads, user: Annotated[Staff, Depends(can("floor.view"))]) -> list[dict[str, Any]]:
    return [
        {"id": p.code, "name": p.name, "name_en": p.name_en, "price_cents": p.price_cents, "price": format_eur(p.price_cents)}
        for p in reads.products(active_only=True)
        if p.code is not None
    ]
