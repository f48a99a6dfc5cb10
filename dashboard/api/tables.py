"""The tables with their live state, and the nodes behind them (remote monitoring)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException

from broker.accounts.staff import Staff
from broker.domain.billing import format_eur
from broker.domain.floor.reject_tally import NodeRejects
from broker.floor.table_service import SetOutOfService, SwitchLight
from broker.floor.table_views import LiveTable, NodeStatus
from broker.hall.read_models import HallReads
from dashboard.api import responses as R
from dashboard.api.auth import can
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import LightIn, OutOfServiceIn

router = APIRouter(tags=["tables"])


def _live(reads: HallReads, table_id: str) -> LiveTable:
    return reads.floor.live_tables(only=table_id)[0]


@router.get("/tables", response_model=list[LiveTable], summary="Every table with its live state")
def list_tables(reads: Reads, user: Annotated[Staff, Depends(can("floor.view"))]) -> list[LiveTable]:
    return reads.floor.live_tables()


@router.get("/tables/{table_id}", response_model=LiveTable, summary="One table with its live state")
def get_table(table_id: str, reads: Reads, user: Annotated[Staff, Depends(can("floor.view"))]) -> LiveTable:
    if table_id not in reads.tables:
        raise HTTPException(404, f"no table {table_id[:40]!r} (tables: {', '.join(reads.tables)})")
    return _live(reads, table_id)


@router.post("/tables/{table_id}/out-of-service", response_model=LiveTable, summary="Take a table out of service (cleaning, repair)")
def take_out_of_service(table_id: str, body: OutOfServiceIn, hub: Hub, user: Annotated[Staff, Depends(can("tables.service"))]) -> LiveTable:
    # The same facade method as the table page's switch: refused while a game runs there.
    hub.execute(body.to(SetOutOfService, table=table_id, out=True, actor=user.username))
    return _live(hub.reads, table_id)


@router.delete("/tables/{table_id}/out-of-service", response_model=LiveTable, summary="Put a table back in service")
def back_in_service(table_id: str, hub: Hub, user: Annotated[Staff, Depends(can("tables.service"))]) -> LiveTable:
    hub.execute(SetOutOfService(table=table_id, out=False, actor=user.username))
    return _live(hub.reads, table_id)


@router.post("/tables/{table_id}/light", response_model=LiveTable, summary="Switch a table's light by hand (checked like its button)")
def switch_light(table_id: str, body: LightIn, hub: Hub, user: Annotated[Staff, Depends(can("tables.light"))]) -> LiveTable:
    hub.execute(body.to(SwitchLight, table=table_id, actor=user.username))
    return _live(hub.reads, table_id)


@router.get(
    "/nodes", response_model=list[NodeStatus], summary="Table nodes: online, last seen, version, telemetry, light, refused messages"
)
def list_nodes(reads: Reads, user: Annotated[Staff, Depends(can("nodes.view"))]) -> list[NodeStatus]:
    return reads.floor.node_statuses()


@router.get("/nodes/unknown-rejects", response_model=NodeRejects, summary="Refused messages whose topic names no table of the venue")
def unknown_rejects(reads: Reads, user: Annotated[Staff, Depends(can("nodes.view"))]) -> NodeRejects:
    return reads.floor.unknown_rejects()


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
                "tournament": t.tournament,
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
        for p in reads.till.products(active_only=True)
        if p.code is not None
    ]
