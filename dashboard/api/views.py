"""How things look in JSON: money as integer cents plus the formatted text staff read."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from broker.domain import game_ops
from broker.domain.billing import Bill, BillLine, format_eur
from broker.domain.reject_tally import NodeRejects
from broker.hall.member_views import CheckinView, MemberView
from broker.hall.read_models import AlertView, HallReads, NodeView
from broker.hall.table_service import OutOfService
from broker.hall.till.tab_views import TabItemView


def money(cents: int) -> dict[str, Any]:
    return {"cents": cents, "text": format_eur(cents), "text_en": format_eur(cents, "en")}


def _line(line: BillLine) -> dict[str, Any]:
    return {
        "kind": line.kind,
        "description": line.description,
        "description_en": line.description_en,
        "reason": line.reason,
        "amount_cents": line.amount_cents,
        "amount": format_eur(line.amount_cents),
        "tariff": line.tariff_id,
        "rate_cents_per_hour": line.rate_cents_per_hour,
        "start": line.start,
        "end": line.end,
        "billed_seconds": line.billed_seconds,
        "quantity": line.quantity,
        "unit_cents": line.unit_cents,
    }


def bill(b: Bill) -> dict[str, Any]:
    return {
        "lines": [_line(x) for x in b.lines],
        "total_cents": b.total_cents,
        "total": format_eur(b.total_cents),
        "total_en": format_eur(b.total_cents, "en"),
        "vat_percent": b.vat_percent,
        "vat_cents": b.vat_cents,
        "vat": format_eur(b.vat_cents),
        "net_cents": b.net_cents,
    }


def _tariff_now(reads: HallReads, st: game_ops.GameState, b: Bill) -> str | None:
    if st.state == "running":
        rate = game_ops.current_rate(st, reads.venue, max(reads.clock(), st.last_at))
        return rate.tariff_id if rate else None
    times = [x for x in b.lines if x.kind == "time"]
    return times[-1].tariff_id if times else st.tariff


def extras(items: Iterable[TabItemView]) -> list[dict[str, Any]]:
    """What was put on a game's tab (an extra of the venue file, a drink: each a product), voided ones too."""
    return [
        {
            "item": i.id,
            "extra": i.code,
            "product": i.product_id,
            "name": i.name,
            "name_en": i.name_en or i.name,
            "quantity": i.quantity,
            "unit_cents": i.unit_cents,
            "vat_percent": i.vat_percent,
            "category": i.category,
            "at": i.added_at,
            "by": i.added_by,
            "voided": i.voided_at is not None,
        }
        for i in items
    ]


def session(
    reads: HallReads,
    session_id: int,
    st: game_ops.GameState,
    *,
    with_bill: bool = True,
    items: Iterable[TabItemView] | None = None,
) -> dict[str, Any]:
    """A game as the API shows it: its bill (table time, corrections) and what is on its tab
    (`items`: read here for one game when not given; a list reads them at once: reads.game_items)."""
    if items is None:
        items = reads.game_items([session_id]).get(session_id, ())
    now = max(reads.clock(), st.last_at)
    b = reads.bill_of(st)
    left = game_ops.prepaid_remaining(st, now)
    out = {
        "id": session_id,
        "table": st.table,
        "state": st.state,
        "started_at": st.started_at,
        "stopped_at": st.stopped_at,
        "paused_at": st.paused_at,
        "tariff": _tariff_now(reads, st, b),
        "requested_tariff": st.tariff,
        "member": {"id": st.member.member_id, "name": st.member.name, "fee_paid": st.member.fee_paid} if st.member else None,
        "prepaid_until": st.prepaid_until,
        "prepaid_left_s": int(left.total_seconds()) if left is not None else None,
        "amount_cents": b.total_cents,
        "amount": format_eur(b.total_cents),
        "extras": extras(items),
    }
    if with_bill:
        out["bill"] = bill(b)
    return out


def out_of_service(oos: OutOfService | None) -> dict[str, Any]:
    """A table's out-of-service fields (broker.hall.table_service), for the table dicts."""
    return {
        "out_of_service": oos is not None,
        "out_of_service_reason": oos.reason if oos else None,
        "out_of_service_since": oos.since if oos else None,
        "out_of_service_by": oos.by if oos else None,
    }


def light(node: NodeView | None) -> dict[str, Any] | None:
    if node is None or node.light_on is None:
        return None
    return {"on": node.light_on, "blink": bool(node.light_blink), "cause": node.light_cause}


def node(table: str, n: NodeView | None, refused: NodeRejects | None = None) -> dict[str, Any]:
    tm = (n.telemetry if n else None) or {}
    return {
        "table": table,
        "online": bool(n and n.online),
        "online_since": n.online_since if n else None,
        "last_seen_at": n.last_seen_at if n else None,
        "boot": n.boot if n else None,
        "version": n.version if n else None,
        "uptime_s": tm.get("uptime_s"),
        "cpu_temp_c": tm.get("cpu_temp_c"),
        "outbox": tm.get("outbox"),
        "reconnects": n.reconnects if n else 0,
        "telemetry_at": n.telemetry_at if n else None,
        "light": light(n),
        "rejects": rejects(refused),
    }


def rejects(r: NodeRejects | None) -> dict[str, Any]:
    """What the hub refused from one node (broker.domain.reject_tally): counts per reason, newest samples first.

    `dropped` messages were not applied; `clock_flagged` events were, at the hub's receive time.
    """
    r = r or NodeRejects()
    return {
        "dropped": r.dropped,
        "clock_flagged": r.kept,
        "last_at": r.last_at,
        "by_reason": {
            reason: {"count": c.count, "first_at": c.first_at, "last_at": c.last_at} for reason, c in sorted(r.by_reason.items())
        },
        "samples": [{"at": x.at, "topic": x.topic, "reason": x.reason, "error": x.error, "excerpt": x.excerpt} for x in r.samples],
    }


def member(m: MemberView, year: int) -> dict[str, Any]:
    return {
        "id": m.id,
        "name": m.name,
        "kind": m.kind,
        "active": m.active,
        "note": m.note,
        "cards": list(m.cards),
        "fees": [{"year": f.year, "amount_cents": f.amount_cents, "paid_at": f.paid_at, "recorded_by": f.recorded_by} for f in m.fees],
        "fee_paid": m.fee_paid(year),
        "fee_year": year,
        "created_at": m.created_at,
    }


def member_found(m: MemberView, year: int) -> dict[str, Any]:
    """What staff see of a member when searching by name: enough to choose them, no note, no card UIDs."""
    return {"id": m.id, "name": m.name, "kind": m.kind, "active": m.active, "fee_paid": m.fee_paid(year), "fee_year": year}


def alert(a: AlertView) -> dict[str, Any]:
    return {
        "id": a.id,
        "kind": a.kind,
        "table": a.table_id,
        "severity": a.severity,
        "message": a.message,
        "message_en": a.message_en,
        "opened_at": a.opened_at,
        "last_seen_at": a.last_seen_at,
        "count": a.count,
        "acked_at": a.acked_at,
        "acked_by": a.acked_by,
        "closed_at": a.closed_at,
    }


def checkin(c: CheckinView) -> dict[str, Any]:
    return {
        "id": c.id,
        "member_id": c.member_id,
        "member": c.member,
        "checked_in_at": c.checked_in_at,
        "last_goal_at": c.last_goal_at,
        "goals": c.goals,
        "by": c.by,
        "active_until": c.active_until,
    }
