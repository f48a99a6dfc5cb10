"""The tables with their live state, and the nodes behind them (remote monitoring)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException
from sqlalchemy import select

from broker.billing import format_eur
from broker.db.models import Node, User
from broker.db.rejects import node_rejects
from broker.rejects import UNKNOWN
from broker.service import CentralService
from dashboard.api import views
from dashboard.api.auth import can
from dashboard.api.deps import Service

router = APIRouter(tags=["tables"])


def _nodes(service: CentralService) -> dict[str, Node]:
    with service.store.reader() as db:
        return {n.table_id: n for n in db.scalars(select(Node))}


def _open_summary(service: CentralService, table: str) -> dict[str, Any] | None:
    with service.lock:
        s = service.open.get(table)
        drops = service.runtime[table].drops
    if s is None:
        return None
    out = views.session(service, s.id, s.state, with_bill=False)
    out["drops"] = drops
    return out


def _table(service: CentralService, spec, node: Node | None) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return {
        "id": spec.id, "name": spec.name, "kind": spec.kind.value, "room": spec.room, "size_ft": spec.size_ft,
        "club_card": spec.club_card, "billed": spec.kind.billed,
        "node": {"online": bool(node and node.online), "last_seen_at": node.last_seen_at if node else None,
                 "version": node.version if node else None},
        "light": views.light(node),
        "session": _open_summary(service, spec.id) if spec.kind.billed else None,
    }


@router.get("/tables", summary="Every table with its live state")
def list_tables(service: Service, user: Annotated[User, Depends(can("floor.view"))]) -> list[dict[str, Any]]:
    nodes = _nodes(service)
    return [_table(service, t, nodes.get(t.id)) for t in service.venue.tables]


@router.get("/tables/{table_id}", summary="One table with its live state")
def get_table(table_id: str, service: Service, user: Annotated[User, Depends(can("floor.view"))]) -> dict[str, Any]:
    if table_id not in service.tables:
        raise HTTPException(404, f"no table {table_id[:40]!r} (tables: {', '.join(service.tables)})")
    with service.store.reader() as db:
        node = db.get(Node, table_id)
    return _table(service, service.tables[table_id], node)


@router.get("/nodes", summary="Table nodes: online, last seen, version, telemetry, light, refused messages")
def list_nodes(service: Service, user: Annotated[User, Depends(can("nodes.view"))]) -> list[dict[str, Any]]:
    return node_rows(service)


@router.get("/nodes/unknown-rejects", summary="Refused messages whose topic names no table of the venue")
def unknown_rejects(service: Service, user: Annotated[User, Depends(can("nodes.view"))]) -> dict[str, Any]:
    with service.store.reader() as db:
        return views.rejects(node_rejects(db).get(UNKNOWN))


def node_rows(service: CentralService) -> list[dict[str, Any]]:
    """/api/nodes: one row per venue table, with what the service refused from its node."""
    with service.store.reader() as db:
        known = {n.table_id: n for n in db.scalars(select(Node))}
        refused = node_rejects(db)
        return [views.node(t.id, known.get(t.id), refused.get(t.id)) for t in service.venue.tables]


@router.get("/tariffs", summary="Tariffs and time bands from the venue file")
def list_tariffs(service: Service, user: Annotated[User, Depends(can("floor.view"))]) -> dict[str, Any]:
    v = service.venue
    return {
        "default": v.billing.default_tariff, "member": v.billing.member_tariff,
        "unit_s": v.billing.unit_s, "minimum_cents": v.billing.minimum_cents, "vat_percent": v.billing.vat_percent,
        "tariffs": [{
            "id": t.id, "name": t.name, "name_en": t.name_en, "rate_cents_per_hour": t.rate_cents_per_hour,
            "rate": format_eur(t.rate_cents_per_hour), "requires_member": t.requires_member,
            "hours": {"open": t.hours.open.strftime("%H:%M"), "close": t.hours.close.strftime("%H:%M")} if t.hours else None,
        } for t in v.tariffs],
        "bands": [{"tariff": b.tariff, "name": b.name, "days": b.days, "start": b.start.strftime("%H:%M"),
                   "end": b.end.strftime("%H:%M"), "rate_cents_per_hour": b.rate_cents_per_hour} for b in v.bands],
    }


@router.get("/extras", summary="Items that can go on a tab")
def list_extras(service: Service, user: Annotated[User, Depends(can("floor.view"))]) -> list[dict[str, Any]]:
    return [{"id": e.id, "name": e.name, "name_en": e.name_en, "price_cents": e.price_cents, "price": format_eur(e.price_cents)}
            for e in service.venue.extras]


