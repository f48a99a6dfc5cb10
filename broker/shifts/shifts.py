"""Shifts on the hub's writer: clock in, clock out, a manager's correction, the drawer counted at a shift change.

Rules (the one place they live; the pure ones in broker.domain.shifts.rules):
- One open shift per person: clocking in again is refused, and the partial unique index
  (models.Shift) holds it even against a second process.
- A shift belongs to the business day staff work on when it begins (the till's rule,
  broker.till.business_days.open_day): after the evening's close-out, the next day's.
- A correction never overwrites: it is a new row naming the one it replaces, with the manager's
  reason; the old row keeps its times and is marked replaced. Only the latest version counts.
- The drawer counted at a shift change: expected is where the last count (or the float) left it
  plus the cash of the day taken since; the difference is recorded and the next bartender starts
  from what was counted. The close-out's count (broker.till.closeout) stays as it is: the day's
  variance is the sum of the segments' differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import select, update
from sqlalchemy.orm import Session as Db

from broker.accounts.users import get_user
from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.billing import format_eur
from broker.domain.euros import MAX_AMOUNT_CENTS, whole_cents
from broker.domain.refusals import N_, Name
from broker.domain.schedule import business_day
from broker.domain.shifts.rules import (
    Count,
    ShiftMissing,
    ShiftRefused,
    Taken,
    check_span,
    clean_reason,
    drawer_segments,
)
from broker.shifts.events import ShiftChanged
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import BusinessDay, DrawerCount, Payment, Shift
from broker.till.business_days import open_day

NOTE_MAX = 300


@command
class ClockIn(Command[int]):
    """`staff` starts a shift now (staff clock in themselves); answers the shift's id."""

    staff: str


@command
class ClockOut(Command[int]):
    """`staff`'s open shift ends now (another person's: the manager's); answers the shift's id."""

    staff: str


@command
class CorrectShift(Command[int]):
    """A manager corrects a shift's start and end with a reason: a new row replacing it; answers its id."""

    shift: int
    started_at: datetime
    ended_at: datetime | None
    reason: str


@command
class RecordShift(Command[int]):
    """A manager records a shift somebody worked without clocking in (start, end, a reason); answers its id."""

    staff: str
    started_at: datetime
    ended_at: datetime
    reason: str


@dataclass(frozen=True)
class DrawerCounted:
    """A count at a shift change as recorded: the next bartender starts from `counted_cents`."""

    id: int
    day: date
    counted_cents: int
    expected_cents: int  # the last count (or the float) plus the cash taken since
    difference_cents: int  # counted less expected: negative means cash is missing


@command
class CountDrawer(Command[DrawerCounted]):
    """The drawer counted at a shift change (cents): expected vs counted recorded; answers the count."""

    counted_cents: int
    note: str = ""


def _time(hall: HallState, at: datetime) -> Name:
    local = at.astimezone(hall.venue.tz)
    return Name(f"{local.day}. {local.month}. {local.year} {local:%H:%M}", f"{local:%Y-%m-%d %H:%M}")


def open_shift_of(db: Db, staff: str) -> Shift | None:
    """The person's running shift (its latest version), if any."""
    return db.scalar(select(Shift).where(Shift.staff == staff, Shift.ended_at.is_(None), Shift.replaced_at.is_(None)))


def cash_method(hall: HallState) -> str | None:
    return next((m.id for m in hall.venue.till.payment_methods if m.cash), None)


def cash_of_day(db: Db, hall: HallState, day: date) -> list[Taken]:
    """The cash taken (and given back) counted on `day`, with its rounding: what moves the drawer."""
    cash = cash_method(hall)
    if cash is None:
        return []
    rows = db.scalars(select(Payment).where(Payment.business_day == day, Payment.method == cash).order_by(Payment.at, Payment.id))
    return [Taken(p.staff, p.at, p.method, p.amount_cents, p.rounding_cents) for p in rows]


def counts_of_day(db: Db, day: date) -> list[Count]:
    rows = db.scalars(select(DrawerCount).where(DrawerCount.business_day == day).order_by(DrawerCount.at, DrawerCount.id))
    return [Count(c.at, c.counted_by, c.counted_cents) for c in rows]


class Shifts(Part):
    """The shifts' commands; reads in broker.shifts.reads."""

    as_not_found = (ShiftMissing,)
    as_service_error = (ShiftRefused,)

    def __init__(self, hall: HallState) -> None:
        self.h = hall

    def _changed(self, db: Db, staff: str, action: str) -> None:
        after_commit(db).add(lambda: self.h.listeners.notify(ShiftChanged(staff=staff, action=action)))

    @handles(ClockIn)
    def clock_in(self, c: ClockIn) -> int:
        now = self.h.clock()
        with self.h.store.session() as db:
            running = open_shift_of(db, c.staff)
            if running is not None:
                raise ShiftRefused(
                    N_("%(who)s is already clocked in (since %(time)s); clock out first."),
                    who=c.staff,
                    time=_time(self.h, running.started_at),
                )
            row = Shift(staff=c.staff, business_day=open_day(db, self.h.venue, now), started_at=now, made_at=now, made_by=c.actor)
            db.add(row)
            db.flush()
            record_audit(db, c.actor, "shift.in", f"shift:{row.id}", {"staff": c.staff}, at=now)
            self._changed(db, c.staff, "in")
            return row.id

    @handles(ClockOut)
    def clock_out(self, c: ClockOut) -> int:
        now = self.h.clock()
        with self.h.store.session() as db:
            running = open_shift_of(db, c.staff)
            if running is None:
                raise ShiftRefused(N_("%(who)s is not clocked in."), who=c.staff)
            check_span(running.started_at, now, now)
            # The row decides again: only a shift still open is ended (a second process, a double tap).
            done = db.execute(
                update(Shift)
                .where(Shift.id == running.id, Shift.ended_at.is_(None), Shift.replaced_at.is_(None))
                .values(ended_at=now, ended_by=c.actor)
                .returning(Shift.id)
                .execution_options(synchronize_session=False)
            ).first()
            if done is None:
                raise ShiftRefused(N_("%(who)s is not clocked in."), who=c.staff)
            record_audit(db, c.actor, "shift.out", f"shift:{running.id}", {"staff": c.staff}, at=now)
            self._changed(db, c.staff, "out")
            return running.id

    def _no_overlap(self, db: Db, staff: str, start: datetime, end: datetime, now: datetime, but: int | None = None) -> None:
        """Refused when `staff` has another shift (its latest version) overlapping start..end: the
        money taken then would belong to two shifts."""
        others = db.scalars(select(Shift).where(Shift.staff == staff, Shift.id != (but or 0), Shift.replaced_at.is_(None)))
        for s in others:
            if s.started_at < end and start < (s.ended_at or now):
                raise ShiftRefused(
                    N_("%(who)s has another shift from %(time)s at that time; correct that one first."),
                    who=staff,
                    time=_time(self.h, s.started_at),
                )

    @handles(RecordShift)
    def record(self, c: RecordShift) -> int:
        now = self.h.clock()
        reason = clean_reason(c.reason)
        if c.started_at.tzinfo is None or c.ended_at.tzinfo is None:
            raise ShiftRefused(N_("Give the shift's times with the date, e.g. 1. 12. 2026 16:00."))
        check_span(c.started_at, c.ended_at, now)
        with self.h.store.session() as db:
            if get_user(db, c.staff) is None:
                raise ShiftRefused(N_("There is no staff account %(who)s."), who=c.staff[:64])
            self._no_overlap(db, c.staff, c.started_at, c.ended_at, now)
            row = Shift(
                staff=c.staff,
                business_day=business_day(c.started_at, self.h.venue),
                started_at=c.started_at,
                ended_at=c.ended_at,
                ended_by=c.actor,
                made_at=now,
                made_by=c.actor,
                reason=reason,
            )
            db.add(row)
            db.flush()
            record_audit(
                db,
                c.actor,
                "shift.record",
                f"shift:{row.id}",
                {"staff": c.staff, "started_at": c.started_at.isoformat(), "ended_at": c.ended_at.isoformat(), "reason": reason},
                at=now,
            )
            self._changed(db, c.staff, "record")
            return row.id

    @handles(CorrectShift)
    def correct(self, c: CorrectShift) -> int:
        now = self.h.clock()
        reason = clean_reason(c.reason)
        if c.started_at.tzinfo is None or (c.ended_at is not None and c.ended_at.tzinfo is None):
            raise ShiftRefused(N_("Give the shift's times with the date, e.g. 1. 12. 2026 16:00."))
        check_span(c.started_at, c.ended_at, now)
        with self.h.store.session() as db:
            old = db.get(Shift, c.shift)
            if old is None:
                raise ShiftMissing(N_("There is no such shift."))
            if old.replaced_at is not None:
                raise ShiftRefused(N_("This shift was corrected meanwhile; correct its latest version."))
            if c.ended_at is None and old.ended_at is not None:
                raise ShiftRefused(N_("Give the end of a shift that has ended."))
            self._no_overlap(db, old.staff, c.started_at, c.ended_at or now, now, but=old.id)
            day = (
                old.business_day
                if business_day(c.started_at, self.h.venue) == business_day(old.started_at, self.h.venue)
                else (business_day(c.started_at, self.h.venue))
            )
            old.replaced_at = now
            db.flush()  # the open-shift index sees the old version gone before the new one comes
            row = Shift(
                staff=old.staff,
                business_day=day,
                started_at=c.started_at,
                ended_at=c.ended_at,
                ended_by=c.actor if c.ended_at is not None else None,
                made_at=now,
                made_by=c.actor,
                corrects_id=old.id,
                reason=reason,
            )
            db.add(row)
            db.flush()
            record_audit(
                db,
                c.actor,
                "shift.correct",
                f"shift:{row.id}",
                {
                    "corrects": old.id,
                    "staff": old.staff,
                    "started_at": c.started_at.isoformat(),
                    "ended_at": c.ended_at.isoformat() if c.ended_at else None,
                    "reason": reason,
                },
                at=now,
            )
            self._changed(db, old.staff, "correct")
            return row.id

    @handles(CountDrawer)
    def count_drawer(self, c: CountDrawer) -> DrawerCounted:
        counted = whole_cents(c.counted_cents, low=0, high=MAX_AMOUNT_CENTS)
        if counted is None:
            raise ShiftRefused(
                N_("The counted cash must be an amount from 0 to %(max)s, e.g. 412,50."),
                max=Name(format_eur(MAX_AMOUNT_CENTS, "sk"), format_eur(MAX_AMOUNT_CENTS, "en")),
            )
        note = " ".join(c.note.split())
        if len(note) > NOTE_MAX:
            raise ShiftRefused(N_("The note is too long (at most %(max)d characters)."), max=NOTE_MAX)
        now = self.h.clock()
        with self.h.store.session() as db:
            day = open_day(db, self.h.venue, now)
            opened = db.get(BusinessDay, day)
            if opened is None:
                raise ShiftRefused(N_("The day is not open yet: open it with the float first (Uzávierka)."))
            segments = drawer_segments(opened.float_cents, opened.opened_at, counts_of_day(db, day), cash_of_day(db, self.h, day))
            expected = segments[-1].expected_cents
            row = DrawerCount(
                business_day=day, at=now, counted_by=c.actor, counted_cents=counted, expected_cents=expected, note=note or None
            )
            db.add(row)
            db.flush()
            record_audit(
                db,
                c.actor,
                "drawer.count",
                f"day:{day.isoformat()}",
                {"counted_cents": counted, "expected_cents": expected, "difference_cents": counted - expected},
                at=now,
            )
            self._changed(db, c.actor, "drawer")
            return DrawerCounted(row.id, day, counted, expected, counted - expected)
