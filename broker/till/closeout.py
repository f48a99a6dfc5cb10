"""The business day: the shift opened with a float, and its close-out (the Z report), once.

Rules (the one place they live):
- A business day runs from the venue's cut to the next cut (broker.domain.schedule, default 06:00),
  so a game played past midnight, its payment and the close-out at 01:30 are the evening's.
- A payment counts on `day_for(db, at)`: the business day of `at`, or, if that day is closed
  already, the next one still open: a reversal or a late payment after the close-out lands on the
  next day, whose Z report lists it as a correction of the earlier day ("oprava k dňu 1. 12. 2026").
  A tab opened after the close-out is the next day's own (broker.till.business_days), no correction.
- A payment on a day nobody opened opens it by itself, with a float of 0, audited
  ("day.auto_open"): a bartender is never stopped from taking money. The Z report says the day
  opened itself, and staff may still give the float afterwards (once) on the day page.
- Closing freezes the Z report into business_days.report with the counted cash. A day closes once:
  the check and the write are one step on the hub's writer, and the UPDATE only takes a row still
  open, so even a second process (a standby taking over) cannot close it twice. A closed day's
  numbers are never computed again.
- With tabs of the day (or before) still unpaid the close is refused unless staff confirm it
  explicitly; the report lists them with what they owe. A later day's tabs are not its business:
  a close-out done the next morning lists only its own.
- The takings are the day's revenue (broker.domain.till.revenue: the reports count the same money).

Writes run on the hub's writer (see broker.till); the readers at the end take any session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Annotated

from pydantic import Field
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session as Db

from broker.core.commands import Command, command, handles
from broker.core.ports import HallState
from broker.domain.billing import format_eur
from broker.domain.euros import MAX_AMOUNT_CENTS, whole_cents
from broker.domain.json_shape import HIDDEN
from broker.domain.refusals import N_, Name, Refusal
from broker.domain.schedule import business_day, business_day_bounds, counting_day
from broker.domain.till.zreport import (
    CorrectionRecord,
    DayOpening,
    Method,
    OpenTab,
    VoidRecord,
    ZReport,
    from_json,
    to_json,
    z_report,
)
from broker.storage.after_commit import after_commit
from broker.storage.audit import record_audit
from broker.storage.models import AuditEntry, BusinessDay, Game, GameOp, Tab, TabItem
from broker.till.business_days import open_day
from broker.till.events import DayChanged
from broker.till.tabs import bill_of_tab
from broker.till.takings import payment_records, tab_place
from broker.till.tournament_time import table_time_on

MAX_DRAWER_CENTS = MAX_AMOUNT_CENTS  # more in a bar's drawer is a typo, not money
LOOKBACK_DAYS = 7  # how far back a thing done today may belong (days closed early, one after another)
AUTO_OPEN = "day.auto_open"


class DayRefused(Refusal):
    """A business day cannot be opened or closed as asked; the message says what to do instead."""


@command
class OpenDay(Command[date]):
    """Open the current business day with the float in the drawer (cents); answers the day opened."""

    float_cents: int


@command
class CloseDay(Command[ZReport]):
    """Close `day` with the counted cash: its Z report, frozen. Refused when it is closed already,
    has not begun, or has unpaid tabs and `open_tabs_ok` is not given."""

    day: date
    counted_cents: int
    open_tabs_ok: bool = False


@dataclass(frozen=True)
class DaySummary:
    """One line of the list of closed days."""

    day: date
    opened_at: datetime
    opened_by: str
    float_cents: int
    closed_at: datetime | None
    closed_by: str | None
    counted_cents: int | None
    expected_cents: int | None
    variance_cents: int | None
    total_cents: int | None


@dataclass(frozen=True)
class DayOverview:
    """The day staff work on now, with its running figures, and what is left behind."""

    day: Annotated[date, Field(description="The business day staff work on now")]
    opened: bool
    report: ZReport  # the running figures (not frozen: the day is open)
    unclosed: Annotated[tuple[date, ...], Field(description="Earlier days nobody closed, oldest first")]
    last_closed: DaySummary | None
    # False after the evening's close-out, until the next day's cut: nothing to close yet.
    begun: Annotated[bool, HIDDEN] = True

    hand: Annotated[frozenset[date], HIDDEN] = frozenset()  # CloseOut.days_at_hand: the days staff work with

    def at_hand(self, day: date) -> bool:
        """A day staff work with (capability day.run); other days are the manager's (day.history)."""
        return day in self.hand


def _money(cents: int) -> Name:
    """An amount as a refusal shows it: "12,50 €" on a Slovak page, "€12.50" in English."""
    return Name(format_eur(cents, "sk"), format_eur(cents, "en"))


def _day(d: date) -> Name:
    return Name(f"{d.day}. {d.month}. {d.year}", d.isoformat())


def drawer_cents(value: object, what: str) -> int:
    """An amount of cash in cents, as staff may count it: a whole number from 0 to 100 000 €."""
    cents = whole_cents(value, low=0, high=MAX_DRAWER_CENTS)
    if cents is None:
        if what == "float":
            raise DayRefused(N_("The float must be an amount from 0 to %(max)s, e.g. 50,00."), max=_money(MAX_DRAWER_CENTS))
        raise DayRefused(N_("The counted cash must be an amount from 0 to %(max)s, e.g. 412,50."), max=_money(MAX_DRAWER_CENTS))
    return cents


def methods_of(hall: HallState) -> list[Method]:
    return [Method(m.id, m.name, m.name_en or m.name, m.cash) for m in hall.venue.till.payment_methods]


class CloseOut:
    def __init__(self, hall: HallState) -> None:
        self.h = hall

    # -- in a payment's transaction (the writer) -----------------------------------------------

    def day_for(self, db: Db, at: datetime, actor: str = "system") -> date:
        """The business day a payment taken at `at` counts on (the writer, in the payment's transaction).

        The business day of `at`, or the next one not closed yet; a day nobody opened opens itself
        here with a float of 0 (audited: who took the payment, `actor`)."""
        day = self.current_day(db, at)
        if db.get(BusinessDay, day) is None:
            self._auto_open(db, day, at, actor, "payment")
        return day

    def _auto_open(self, db: Db, day: date, at: datetime, actor: str, why: str) -> BusinessDay:
        row = BusinessDay(day=day, opened_at=at, opened_by=actor, float_cents=0)
        db.add(row)
        db.flush()
        record_audit(db, actor, AUTO_OPEN, f"day:{day.isoformat()}", {"float_cents": 0, "by": why}, at=at)
        return row

    # -- reads (any thread: a read-only session of their own) ------------------------------------

    def days_at_hand(self, db: Db, now: datetime) -> frozenset[date]:
        """The days staff work with (capability day.run): the running one, earlier ones left open,
        the last closed (to print its Z report again). Other days, and their money, are history:
        the manager's (day.history)."""
        day = self.current_day(db, now)
        unclosed = db.scalars(select(BusinessDay.day).where(BusinessDay.day < day, BusinessDay.closed_at.is_(None))).all()
        last = db.scalar(select(func.max(BusinessDay.day)).where(BusinessDay.closed_at.is_not(None)))
        return frozenset({day, *unclosed, *([last] if last is not None else [])})

    def report(self, day: date) -> ZReport | None:
        """A closed day's frozen Z report, an open day's running figures; None for a day with no shift."""
        now = self.h.clock()
        with self.h.store.reader() as db:
            if db.get(BusinessDay, day) is None and day != self.current_day(db, now):
                return None
            return day_report(db, self.h, day, now)

    # -- staff actions (the commands' handlers, on the writer) ---------------------------------

    def current_day(self, db: Db, now: datetime) -> date:
        """The day staff work on now: today's business day, or the next one if today's is closed."""
        return open_day(db, self.h.venue, now)

    @handles(OpenDay)
    def open_day(self, c: OpenDay) -> date:
        """Open the current business day with the float in the drawer; the day opened."""
        float_cents, actor = drawer_cents(c.float_cents, "float"), c.actor
        now = self.h.clock()
        with self.h.store.session() as db:
            day = self.current_day(db, now)
            row = db.get(BusinessDay, day)
            target = f"day:{day.isoformat()}"
            if row is None:
                db.add(BusinessDay(day=day, opened_at=now, opened_by=actor, float_cents=float_cents))
                record_audit(db, actor, "day.open", target, {"float_cents": float_cents}, at=now)
            elif _auto_opened(db, day) and not _float_given(db, day):
                # The first payment opened the day: the float counted now is still the drawer's start.
                record_audit(db, actor, "day.float", target, {"float_cents": float_cents, "was": row.float_cents}, at=now)
                row.float_cents = float_cents
            else:
                raise DayRefused(
                    N_("The day %(day)s is already open (since %(time)s, float %(float)s); close it at the end of the evening."),
                    day=_day(day),
                    time=row.opened_at.astimezone(self.h.venue.tz).strftime("%H:%M"),
                    float=_money(row.float_cents),
                )
            after_commit(db).add(lambda: self.h.listeners.notify(DayChanged(day=day.isoformat(), action="open")))
        return day

    @handles(CloseDay)
    def close_day(self, c: CloseDay) -> ZReport:
        """Close `day` with the cash counted in the drawer: the Z report, frozen. Refused if it is
        closed already, has not begun, or has unpaid tabs and `open_tabs_ok` is not given."""
        day, counted_cents, actor, open_tabs_ok = c.day, drawer_cents(c.counted_cents, "counted"), c.actor, c.open_tabs_ok
        now = self.h.clock()
        with self.h.store.session() as db:
            row = db.get(BusinessDay, day)
            if row is not None and row.closed_at is not None:
                raise _already_closed(self.h, row)
            current = self.current_day(db, now)
            # The day after a close-out takes what is paid later that night, but it begins only at the
            # next day cut: closing it before would put the takings days ahead (and close it empty).
            if day > business_day(now, self.h.venue):
                raise DayRefused(
                    N_("The day %(day)s has not begun yet; it begins at %(cut)s. Close it at the end of that evening."),
                    day=_day(day),
                    cut=f"{self.h.venue.billing.day_cut.hour}:{self.h.venue.billing.day_cut.minute:02d}",
                )
            if row is None and day != current:  # a day of the past nobody opened: nothing to close
                raise DayRefused(N_("There is no business day %(day)s: nobody opened it and no money was taken."), day=_day(day))
            open_tabs = open_tabs_now(db, self.h, now, day)
            if open_tabs and not open_tabs_ok:
                raise DayRefused(
                    N_("Tabs still unpaid: %(count)d, %(owed)s in all. Take the payments, or confirm closing with the tabs open."),
                    count=len(open_tabs),
                    owed=_money(sum(t.owed_cents for t in open_tabs)),
                )
            if row is None:  # nobody opened it and no money came: it opens now, to be closed
                row = self._auto_open(db, day, now, actor, "close")
            report = build_report(db, self.h, day, now, closed_by=actor, counted_cents=counted_cents, open_tabs=open_tabs)
            report = _with_confirmation(report, bool(open_tabs))
            # The writer decides, and the row decides again: only a day still open is taken.
            # RETURNING the day: the records for the centre read what a statement changed from it (broker.outbox.records).
            done = db.execute(
                update(BusinessDay)
                .where(BusinessDay.day == day, BusinessDay.closed_at.is_(None))
                .values(closed_at=now, closed_by=actor, counted_cents=counted_cents, report=to_json(report))
                .returning(BusinessDay.day)
                .execution_options(synchronize_session=False)
            ).first()
            if done is None:
                raise _already_closed(self.h, db.get(BusinessDay, day) or row)
            record_audit(
                db,
                actor,
                "day.close",
                f"day:{day.isoformat()}",
                {
                    "counted_cents": counted_cents,
                    "expected_cents": report.expected_cash_cents,
                    "rounding_cents": report.rounding_cents,
                    "variance_cents": report.variance_cents,
                    "total_cents": report.total_cents,
                    "open_tabs": len(report.open_tabs),
                },
                at=now,
            )
            after_commit(db).add(lambda: self.h.listeners.notify(DayChanged(day=day.isoformat(), action="close")))
        return report


def summary_of(row: BusinessDay) -> DaySummary:
    report = from_json(row.report) if row.report else None
    return DaySummary(
        row.day,
        row.opened_at,
        row.opened_by,
        row.float_cents,
        row.closed_at,
        row.closed_by,
        row.counted_cents,
        report.expected_cash_cents if report else None,
        report.variance_cents if report else None,
        report.total_cents if report else None,
    )


def _with_confirmation(report: ZReport, confirmed: bool) -> ZReport:
    return replace(report, open_tabs_confirmed=confirmed)


def _already_closed(hall: HallState, row: BusinessDay) -> DayRefused:
    at = row.closed_at.astimezone(hall.venue.tz).strftime("%H:%M") if row.closed_at else ""
    return DayRefused(
        N_("The day %(day)s is already closed (at %(time)s by %(who)s); its Z report does not change."),
        day=_day(row.day),
        time=at,
        who=row.closed_by or "",
    )


def _auto_opened(db: Db, day: date) -> bool:
    return db.scalar(select(AuditEntry.id).where(AuditEntry.target == f"day:{day.isoformat()}", AuditEntry.action == AUTO_OPEN)) is not None


def _float_given(db: Db, day: date) -> bool:
    return (
        db.scalar(select(AuditEntry.id).where(AuditEntry.target == f"day:{day.isoformat()}", AuditEntry.action == "day.float")) is not None
    )


# --- reading a day (any thread: only reads `db`) -----------------------------------------------


def open_tabs_now(db: Db, hall: HallState, now: datetime, day: date) -> list[OpenTab]:
    """Tabs of business day `day` or before left unpaid now (what they owe, a running game up to now),
    oldest first. A later day's tabs are that day's: a close-out done late lists only its own."""
    out = []
    unpaid = select(Tab).where(Tab.settled_at.is_(None), Tab.merged_into.is_(None), Tab.business_day <= day)
    for tab in db.scalars(unpaid.order_by(Tab.opened_at, Tab.id)):
        bill = bill_of_tab(db, hall, tab.id, now)
        if bill.owed_cents > 0 or not bill.closed:
            out.append(OpenTab(tab.id, tab_place(hall, tab), tab.opened_at, bill.total_cents, bill.owed_cents, not bill.closed))
    return out


def _closed_map(db: Db, day: date) -> dict[date, datetime]:
    rows = db.execute(
        select(BusinessDay.day, BusinessDay.closed_at).where(
            BusinessDay.day >= day - timedelta(days=LOOKBACK_DAYS + 1), BusinessDay.day <= day, BusinessDay.closed_at.is_not(None)
        )
    )
    return {d: c for d, c in rows if c is not None}


def _on_day(hall: HallState, day: date, closed: dict[date, datetime]) -> Callable[[datetime], bool]:
    return lambda at: counting_day(at, hall.venue, closed) == day


def _item_voids(db: Db, hall: HallState, start: datetime, end: datetime, on_day: Callable[[datetime], bool]) -> list[VoidRecord]:
    rows = db.execute(
        select(TabItem, Tab)
        .join(Tab, Tab.id == TabItem.tab_id)
        .where(TabItem.voided_at.is_not(None), TabItem.voided_at >= start, TabItem.voided_at < end)
    ).all()
    return [
        VoidRecord(
            i.voided_at,
            i.voided_by or "",
            i.void_reason or "",
            i.name,
            i.name_en or i.name,
            i.quantity,
            i.quantity * i.unit_cents,
            tab_place(hall, t),
            t.id,
            "item",
        )
        for i, t in rows
        if i.voided_at is not None and on_day(i.voided_at)
    ]


def _game_ops(db: Db, kind: str, start: datetime, end: datetime) -> list[tuple[GameOp, Game]]:
    return list(
        db.execute(
            select(GameOp, Game)
            .join(Game, Game.id == GameOp.session_id)
            .where(GameOp.kind == kind, GameOp.at >= start, GameOp.at < end)
            .order_by(GameOp.at, GameOp.id)
        ).all()
    )


def _corrections(db: Db, hall: HallState, start: datetime, end: datetime, on_day: Callable[[datetime], bool]) -> list[CorrectionRecord]:
    return [
        CorrectionRecord(
            op.at,
            op.actor,
            op.reason or "",
            int((op.data or {}).get("amount_cents", 0) or 0),
            hall.tables[game.table_id].name if game.table_id in hall.tables else game.table_id,
            game.id,
        )
        for op, game in _game_ops(db, "correction", start, end)
        if on_day(op.at)
    ]


def opening_of(db: Db, day: date) -> DayOpening:
    row = db.get(BusinessDay, day)
    if row is None:
        return DayOpening(day, None, "", 0, False)
    return DayOpening(day, row.opened_at, row.opened_by, row.float_cents, _auto_opened(db, day) and not _float_given(db, day))


def build_report(
    db: Db,
    hall: HallState,
    day: date,
    now: datetime,
    *,
    closed_by: str | None = None,
    counted_cents: int | None = None,
    open_tabs: Iterable[OpenTab] | None = None,
) -> ZReport:
    """The day's Z report counted now from its rows (only reads them); see broker.domain.till.zreport."""
    closed = _closed_map(db, day)
    on_day = _on_day(hall, day, closed)
    # Things done on the day can only have happened before its end, and no earlier than LOOKBACK_DAYS
    # before it (a day closed early passes what follows to the next one, see counting_day).
    start, _ = business_day_bounds(day - timedelta(days=LOOKBACK_DAYS), hall.venue)
    _, end = business_day_bounds(day, hall.venue)
    return z_report(
        opening_of(db, day),
        payment_records(db, hall, day, day),
        methods_of(hall),
        made_at=now,
        fallback_vat=hall.venue.billing.vat_percent,
        voids=_item_voids(db, hall, start, end, on_day),
        corrections=_corrections(db, hall, start, end, on_day),
        open_tabs=open_tabs_now(db, hall, now, day) if open_tabs is None else open_tabs,
        closed_by=closed_by,
        counted_cents=counted_cents,
        tournaments=table_time_on(db, hall, day, now),
    )


def day_report(db: Db, hall: HallState, day: date, now: datetime) -> ZReport:
    """A closed day's frozen Z report, or an open day's figures as they stand now."""
    row = db.get(BusinessDay, day)
    if row is not None and row.closed_at is not None and row.report:
        return from_json(row.report)
    return build_report(db, hall, day, now)
