"""What the centre shows, scoped by who asks: halls, takings per business day and month, alerts.

Takings are read from the per-hall daily sums the centre keeps as the payment records arrive
(central_takings, broker.central.records: added by the hall's own Z report function in the
transaction that applies them), so the centre's figure for a day is the hall's to the cent, a page
reads a few rows per hall and day whatever the number of records behind them, and no stored record
is ever read again to show a page. A closed day also shows the hall's frozen Z report total beside
it, and whether the two agree (they differ only while records are still on their way).
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import ColumnElement, func, select, true
from sqlalchemy.orm import InstrumentedAttribute, Session

from broker.central.accounts import Viewer
from broker.domain.refusals import Refusal, from_doc, plain
from broker.storage.models import CentralAlert, CentralDay, CentralHall, CentralTakings


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
    refused: int = 0  # records the centre refused as not what a hall sends (the hall keeps them aside)
    refused_at: datetime | None = None
    refused_detail: str | None = None  # the last refusal's reason, in English
    refused_why: Refusal | None = None  # the last refusal's first record and why, as a page says it

    @property
    def refusal(self) -> Refusal | None:
        """The last refusal as the page says it (a row kept before it was kept so: its English)."""
        if self.refused_why is not None:
            return self.refused_why
        return plain(self.refused_detail) if self.refused_detail else None


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
class HallMonth:
    """One hall's line of the overview: its month's takings and its last business day's."""

    hall: str
    total_cents: int
    last_day: date | None  # this hall's last business day with takings in the month
    last_day_cents: int
    on_overall_last_day: int  # its takings on the Overview's last_day (the latest of all halls)


@dataclass(frozen=True)
class Overview:
    """Every visible hall's takings in `month`, and all of them together."""

    month: date
    halls: dict[str, HallMonth]
    total_cents: int  # every visible hall's month
    last_day: date | None  # the latest business day any hall took money on
    last_day_cents: int  # every visible hall's takings on that day


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


def _scope(viewer: Viewer, hall: InstrumentedAttribute[str]) -> ColumnElement[bool]:
    """The halls `viewer` may see, as a condition on a table's hall column."""
    return hall == viewer.hall if viewer.hall is not None else true()


def halls(db: Session, viewer: Viewer) -> list[HallRow]:
    alerts = dict(
        db.execute(
            select(CentralAlert.hall, func.count())
            .where(_scope(viewer, CentralAlert.hall), CentralAlert.closed_at.is_(None))
            .group_by(CentralAlert.hall)
        ).all()
    )
    return [
        HallRow(
            h.hall,
            h.name,
            h.link_up,
            h.link_changed_at,
            h.last_record_at,
            h.last_seq,
            max(0, h.last_seq - h.received),
            alerts.get(h.hall, 0),
            h.refused,
            h.refused_at,
            h.refused_detail,
            from_doc(h.refused_why) if h.refused_why is not None else None,
        )
        for h in db.scalars(select(CentralHall).where(_scope(viewer, CentralHall.hall)).order_by(CentralHall.name))
    ]


def _month_bounds(month: date) -> tuple[date, date]:
    first = month.replace(day=1)
    return first, first.replace(day=calendar.monthrange(first.year, first.month)[1])


def overview(db: Session, viewer: Viewer, month: date) -> Overview:
    """Each visible hall's takings in `month` (its total, its last business day's) and their sum: one query over the daily sums."""
    first, last = _month_bounds(month)
    per_day: dict[str, dict[date, int]] = defaultdict(dict)
    for hall, day, cents in db.execute(
        select(CentralTakings.hall, CentralTakings.day, func.sum(CentralTakings.payments_cents + CentralTakings.reversals_cents))
        .where(_scope(viewer, CentralTakings.hall), CentralTakings.day >= first, CentralTakings.day <= last)
        .group_by(CentralTakings.hall, CentralTakings.day)
    ):
        per_day[hall][day] = int(cents)
    last_day = max((max(days) for days in per_day.values()), default=None)
    rows = {}
    for hall, days in per_day.items():
        end = max(days)
        rows[hall] = HallMonth(hall, sum(days.values()), end, days[end], days.get(last_day, 0) if last_day else 0)
    total = sum(r.total_cents for r in rows.values())
    return Overview(first, rows, total, last_day, sum(r.on_overall_last_day for r in rows.values()))


def _method_order(m: CentralTakings) -> tuple[bool, str]:
    return (not m.cash, m.method)  # cash first, then by id


def month_takings(db: Session, viewer: Viewer, hall: str, month: date) -> MonthTakings | None:
    """`hall`'s takings per business day of `month`; None when the viewer may not see that hall."""
    if not viewer.may_see(hall) or db.get(CentralHall, hall) is None:
        return None
    first, last = _month_bounds(month)
    by_day: dict[date, list[CentralTakings]] = defaultdict(list)
    for t in db.scalars(select(CentralTakings).where(CentralTakings.hall == hall, CentralTakings.day >= first, CentralTakings.day <= last)):
        by_day[t.day].append(t)
    frozen = dict(
        db.execute(
            select(CentralDay.day, CentralDay.total_cents).where(CentralDay.hall == hall, CentralDay.day >= first, CentralDay.day <= last)
        ).all()
    )
    days = []
    for day in sorted(set(by_day) | set(frozen)):
        methods = sorted(by_day.get(day, []), key=_method_order)
        days.append(
            DayTakings(
                day,
                sum(m.payments_cents + m.reversals_cents for m in methods),
                sum(m.count for m in methods),
                sum(m.reversals_cents for m in methods),
                tuple(MethodCents(m.method, m.name, m.name_en, m.payments_cents + m.reversals_cents) for m in methods),
                frozen.get(day),
                day in frozen,
            )
        )
    return MonthTakings(hall, first, tuple(days))


def alerts(db: Session, viewer: Viewer, *, open_only: bool = True, limit: int = 200) -> list[AlertRow]:
    q = select(CentralAlert).where(_scope(viewer, CentralAlert.hall)).order_by(CentralAlert.opened_at.desc()).limit(limit)
    if open_only:
        q = q.where(CentralAlert.closed_at.is_(None))
    return [
        AlertRow(a.hall, a.alert_id, a.kind, a.table_id, a.severity, a.message, a.message_en, a.opened_at, a.acked_at, a.closed_at)
        for a in db.scalars(q)
    ]
