"""The reads of the shifts (`reads.shifts` on the dashboard): who is on shift, a day's shifts with the
takings and voids of each (the Z report's own figures, attributed by who took them), the drawer in
segments between its counts, a shift's versions, the hours per person and month. Read-only sessions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.errors import NotFound
from broker.core.ports import HallState
from broker.core.store_errors import store_call
from broker.domain.refusals import N_
from broker.domain.shifts.rules import (
    Count,
    MonthHours,
    ShiftSpan,
    Taken,
    Voided,
    drawer_segments,
    month_hours,
    takings_by_shift,
    worked_minutes,
)
from broker.shifts.shifts import cash_of_day, counts_of_day
from broker.storage.models import BusinessDay, Shift
from broker.till.closeout import day_report
from broker.till.takings import payment_records


@dataclass(frozen=True)
class ShiftView:
    id: int
    staff: str
    day: date
    started_at: datetime
    ended_at: datetime | None
    minutes: int  # worked so far (a running shift: up to now)
    running: bool
    made_by: str
    made_at: datetime
    ended_by: str | None
    corrects_id: int | None  # the version this one replaced (a manager's correction)
    reason: str | None
    replaced_at: datetime | None  # set: a later correction replaced this version


@dataclass(frozen=True)
class MethodCents:
    method: str
    cents: int


@dataclass(frozen=True)
class ShiftRow:
    """What one person took and voided in one shift (`shift` None: outside any shift of theirs)."""

    staff: str
    shift: ShiftView | None
    by_method: tuple[MethodCents, ...]
    total_cents: int
    payments: int
    voids: int
    voids_cents: int
    minutes: int


@dataclass(frozen=True)
class DrawerSegment:
    start_at: datetime | None
    start_cents: int  # the float, or the count before
    cash_cents: int
    expected_cents: int
    counted_at: datetime | None
    counted_by: str | None
    counted_cents: int | None
    difference_cents: int | None
    closing: bool  # ended by the close-out's count


@dataclass(frozen=True)
class ShiftDay:
    """A business day's shifts: the rows add up to the Z report's takings and voids."""

    day: date
    closed: bool
    rows: tuple[ShiftRow, ...]
    total_cents: int
    voids_cents: int
    z_total_cents: int  # the Z report's takings, to compare
    drawer: tuple[DrawerSegment, ...]
    variance_cents: int | None  # the close-out's: the sum of the segments' differences


def shift_view(row: Shift, now: datetime) -> ShiftView:
    return ShiftView(
        row.id,
        row.staff,
        row.business_day,
        row.started_at,
        row.ended_at,
        worked_minutes(row.started_at, row.ended_at or now),
        row.ended_at is None,
        row.made_by,
        row.made_at,
        row.ended_by,
        row.corrects_id,
        row.reason,
        row.replaced_at,
    )


def _span(row: Shift) -> ShiftSpan:
    return ShiftSpan(row.id, row.staff, row.business_day, row.started_at, row.ended_at)


class ShiftsReads:
    """Queries over the shifts, the drawer counts and the till's takings; none writes."""

    def __init__(self, hall: HallState) -> None:
        self._hall = hall
        self._store = hall.store

    @store_call
    def on_shift(self) -> list[ShiftView]:
        """Who is clocked in now, earliest first."""
        now = self._hall.clock()
        with self._store.reader() as db:
            rows = db.scalars(select(Shift).where(Shift.ended_at.is_(None), Shift.replaced_at.is_(None)).order_by(Shift.started_at))
            return [shift_view(r, now) for r in rows]

    def open_shift(self, staff: str) -> ShiftView | None:
        return next((s for s in self.on_shift() if s.staff == staff), None)

    @store_call
    def shifts(self, first: date, last: date) -> list[ShiftView]:
        """The shifts (their latest versions) of business days first..last, newest first."""
        now = self._hall.clock()
        with self._store.reader() as db:
            rows = db.scalars(
                select(Shift)
                .where(Shift.business_day >= first, Shift.business_day <= last, Shift.replaced_at.is_(None))
                .order_by(Shift.started_at.desc(), Shift.id.desc())
            )
            return [shift_view(r, now) for r in rows]

    @store_call
    def versions(self, shift: int) -> list[ShiftView]:
        """A shift's versions, the latest first: the one asked for, what it replaced, and what replaced it."""
        now = self._hall.clock()
        with self._store.reader() as db:
            row = db.get(Shift, shift)
            if row is None:
                raise NotFound(N_("There is no such shift."))
            while (newer := db.scalar(select(Shift).where(Shift.corrects_id == row.id))) is not None:
                row = newer
            out = [shift_view(row, now)]
            while row.corrects_id is not None:
                row = db.get(Shift, row.corrects_id)
                assert row is not None
                out.append(shift_view(row, now))
            return out

    @store_call
    def day(self, day: date) -> ShiftDay:
        """A business day's shifts with what each took (by method) and voided, and the drawer."""
        now = self._hall.clock()
        with self._store.reader() as db:
            return self._day(db, day, now)

    def _day(self, db: Db, day: date, now: datetime) -> ShiftDay:
        rows = db.scalars(
            select(Shift)
            .where(
                Shift.business_day >= day - timedelta(days=1), Shift.business_day <= day + timedelta(days=1), Shift.replaced_at.is_(None)
            )
            .order_by(Shift.started_at)
        ).all()
        spans = [_span(r) for r in rows]
        z = day_report(db, self._hall, day, now)
        taken = [Taken(p.staff, p.at, p.method, p.amount_cents, p.rounding_cents) for p in payment_records(db, self._hall, day, day)]
        voided = [Voided(v.by, v.at, v.amount_cents) for v in z.voids]
        by_id = {r.id: r for r in rows}
        out = []
        for t in takings_by_shift(spans, taken, voided, now):
            # A neighbouring day's shift shows only when money of this day fell into it.
            if t.shift is not None and t.shift.day != day and not (t.by_method or t.voids):
                continue
            view = shift_view(by_id[t.shift.id], now) if t.shift is not None else None
            out.append(
                ShiftRow(
                    t.staff,
                    view,
                    tuple(MethodCents(m, c) for m, c in t.by_method.items()),
                    t.total_cents,
                    t.payments,
                    t.voids,
                    t.voids_cents,
                    t.minutes(now),
                )
            )
        return ShiftDay(
            day,
            z.closed,
            tuple(out),
            sum(r.total_cents for r in out),
            sum(r.voids_cents for r in out),
            z.total_cents,
            self._drawer(db, day, z.closed_at, z.closed_by, z.counted_cents),
            z.variance_cents,
        )

    def _drawer(
        self, db: Db, day: date, closed_at: datetime | None, closed_by: str | None, counted: int | None
    ) -> tuple[DrawerSegment, ...]:
        opened = db.get(BusinessDay, day)
        if opened is None:
            return ()
        counts = counts_of_day(db, day)
        if closed_at is not None and counted is not None:
            counts.append(Count(closed_at, closed_by or "", counted, closing=True))
        return tuple(
            DrawerSegment(
                s.start_at,
                s.start_cents,
                s.cash_cents,
                s.expected_cents,
                s.end.at if s.end else None,
                s.end.by if s.end else None,
                s.end.counted_cents if s.end else None,
                s.difference_cents,
                bool(s.end and s.end.closing),
            )
            for s in drawer_segments(opened.float_cents, opened.opened_at, counts, cash_of_day(db, self._hall, day))
        )

    def month_hours(self, year: int, month: int) -> list[MonthHours]:
        """Minutes worked per person in a month (by the shifts' business days), for the payroll."""
        first = date(year, month, 1)
        return self.hours(first, (first + timedelta(days=32)).replace(day=1) - timedelta(days=1))

    @store_call
    def hours(self, first: date, last: date) -> list[MonthHours]:
        """Minutes worked per person and month over business days first..last (a running shift up to now)."""
        now = self._hall.clock()
        with self._store.reader() as db:
            rows = db.scalars(
                select(Shift).where(Shift.business_day >= first, Shift.business_day <= last, Shift.replaced_at.is_(None))
            ).all()
            return month_hours([_span(r) for r in rows], now)
