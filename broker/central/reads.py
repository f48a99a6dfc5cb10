"""What the centre shows, scoped by who asks: halls, takings per business day and month, alerts.

Takings are counted from the applied payment records by the hall's own rules
(broker.domain.zreport.z_report, the function the hall's Z report is made by), so the centre's
figure for a day is the hall's to the cent; a closed day also shows the hall's frozen Z report
total beside it, and whether the two agree (they differ only while records are still on their way).
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from broker.central.accounts import Viewer
from broker.domain.zreport import DayOpening, Method, ZReport, payment_from_json, z_report
from broker.storage.models import CentralAlert, CentralDay, CentralHall, CentralPayment, CentralRecord
from broker.storage.types import utcnow

FALLBACK_VAT = 23


@dataclass(frozen=True)
class HallRow:
    hall: str
    name: str
    link_up: bool | None  # the bridge, as Mosquitto announces it; None: never heard
    link_changed_at: datetime | None
    last_record_at: datetime | None
    last_seq: int
    missing: int  # seqs below last_seq the centre has not got (0 when all is well)
    open_alerts: int


@dataclass(frozen=True)
class MethodCents:
    method: str
    name: str
    name_en: str
    cents: int


@dataclass(frozen=True)
class DayTakings:
    day: date
    total_cents: int
    payments_count: int
    reversals_cents: int
    by_method: tuple[MethodCents, ...]
    hall_z_cents: int | None  # the hall's own frozen Z report, once the day is closed
    closed: bool

    @property
    def agrees(self) -> bool | None:
        return None if self.hall_z_cents is None else self.hall_z_cents == self.total_cents


@dataclass(frozen=True)
class MonthTakings:
    hall: str
    month: date  # the first of the month
    days: tuple[DayTakings, ...]

    @property
    def total_cents(self) -> int:
        return sum(d.total_cents for d in self.days)


@dataclass(frozen=True)
class AlertRow:
    hall: str
    alert_id: int
    kind: str
    table_id: str | None
    severity: str
    message: str
    message_en: str
    opened_at: datetime
    acked_at: datetime | None
    closed_at: datetime | None


def visible_halls(db: Session, viewer: Viewer) -> list[str]:
    q = select(CentralHall.hall).order_by(CentralHall.name)
    if viewer.hall is not None:
        q = q.where(CentralHall.hall == viewer.hall)
    return list(db.scalars(q))


def halls(db: Session, viewer: Viewer) -> list[HallRow]:
    names = visible_halls(db, viewer)
    counts = dict(
        db.execute(select(CentralRecord.hall, func.count()).where(CentralRecord.hall.in_(names)).group_by(CentralRecord.hall)).all()
    )
    alerts = dict(
        db.execute(
            select(CentralAlert.hall, func.count())
            .where(CentralAlert.hall.in_(names), CentralAlert.closed_at.is_(None))
            .group_by(CentralAlert.hall)
        ).all()
    )
    out = []
    for h in db.scalars(select(CentralHall).where(CentralHall.hall.in_(names)).order_by(CentralHall.name)):
        out.append(
            HallRow(
                h.hall,
                h.name,
                h.link_up,
                h.link_changed_at,
                h.last_record_at,
                h.last_seq,
                max(0, h.last_seq - counts.get(h.hall, 0)),
                alerts.get(h.hall, 0),
            )
        )
    return out


def _methods(records: list[dict[str, Any]]) -> list[Method]:
    seen: dict[str, Method] = {}
    for r in records:
        mid = str(r.get("method", ""))
        if mid not in seen:
            seen[mid] = Method(mid, str(r.get("method_name") or mid), str(r.get("method_name_en") or mid), bool(r.get("cash")))
    return sorted(seen.values(), key=lambda m: (not m.cash, m.id))


def count_day(day: date, records: list[dict[str, Any]]) -> ZReport:
    """The day's figures from its payment records, by the Z report's own rules."""
    vat = next((int(r["fallback_vat"]) for r in records if isinstance(r.get("fallback_vat"), int)), FALLBACK_VAT)
    return z_report(
        DayOpening(day, None, "", 0), [payment_from_json(r) for r in records], _methods(records), made_at=utcnow(), fallback_vat=vat
    )


def month_takings(db: Session, viewer: Viewer, hall: str, month: date) -> MonthTakings | None:
    """`hall`'s takings per business day of `month`; None when the viewer may not see that hall."""
    if not viewer.may_see(hall) or db.get(CentralHall, hall) is None:
        return None
    first = month.replace(day=1)
    last = first.replace(day=calendar.monthrange(first.year, first.month)[1])
    by_day: dict[date, list[dict[str, Any]]] = defaultdict(list)
    for day, record in db.execute(
        select(CentralPayment.business_day, CentralPayment.record).where(
            CentralPayment.hall == hall, CentralPayment.business_day >= first, CentralPayment.business_day <= last
        )
    ).all():
        by_day[day].append(record)
    frozen = {
        d.day: d.total_cents
        for d in db.scalars(select(CentralDay).where(CentralDay.hall == hall, CentralDay.day >= first, CentralDay.day <= last))
    }
    days = []
    for day in sorted(set(by_day) | set(frozen)):
        z = count_day(day, by_day.get(day, []))
        days.append(
            DayTakings(
                day,
                z.total_cents,
                z.payments_count,
                z.reversals_cents,
                tuple(MethodCents(m.method, m.name, m.name_en, m.net_cents) for m in z.by_method),
                frozen.get(day),
                day in frozen,
            )
        )
    return MonthTakings(hall, first, tuple(days))


def alerts(db: Session, viewer: Viewer, *, open_only: bool = True, limit: int = 200) -> list[AlertRow]:
    names = visible_halls(db, viewer)
    q = select(CentralAlert).where(CentralAlert.hall.in_(names)).order_by(CentralAlert.opened_at.desc()).limit(limit)
    if open_only:
        q = q.where(CentralAlert.closed_at.is_(None))
    return [
        AlertRow(a.hall, a.alert_id, a.kind, a.table_id, a.severity, a.message, a.message_en, a.opened_at, a.acked_at, a.closed_at)
        for a in db.scalars(q)
    ]
