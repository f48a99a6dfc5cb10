"""Reports for the manager: revenue, table time billed, table utilisation, ball drops, foosball use.

Days are business days (broker.domain.schedule: from the venue's cut, 06:00 local time, to the next
morning's, so a game running past midnight belongs to the evening it started, and a DST night makes
a day 23 or 25 hours long);
hours are the venue's local ones; the database keeps UTC. Revenue is the money taken, the payments
counted on the days (broker.domain.till.revenue, the Z report's definition), so a day's report and its
Z report say the same; table time billed comes from replaying each game's op log into its bill, the
same fold that billed the customer. Pure SQLAlchemy over the caller's session: no HTTP, no clock of its own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import date, datetime, timedelta
from typing import Annotated

from pydantic import Field, PlainSerializer
from sqlalchemy import Select, select
from sqlalchemy.orm import Session, selectinload

from broker.core.ports import HallState
from broker.domain.billing import Bill
from broker.domain.floor import game_ops
from broker.domain.floor.game_log import replay_row
from broker.domain.json_shape import HIDDEN, every_field_sent, json_name
from broker.domain.refusals import N_, Refusal
from broker.domain.schedule import business_day_bounds
from broker.domain.tariffs import as_utc
from broker.domain.till.revenue import Revenue
from broker.domain.till.revenue import revenue as revenue_of
from broker.domain.venue import Venue
from broker.storage.members import FIRST_YEAR, LAST_YEAR
from broker.storage.models import Event, FoosballCheckin, Game, Member
from broker.till.takings import payment_records

MAX_RANGE_DAYS = 366  # a year and a leap day: one report request must stay cheap


class ReportError(Refusal):
    """A report that cannot be made as asked; str() says what to ask instead."""


def day_bounds(day: date, venue: Venue) -> tuple[datetime, datetime]:
    """[start, end) of the business day `day` in UTC (from the venue's cut, 06:00 local, to the next morning's)."""
    # date.min and date.max pass any date parser, and their midnight in UTC is out of range.
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise ReportError(
            N_("The day %(day)s is outside the years %(first)d–%(last)d; give a day the hall was open, e.g. 2026-11-30."),
            day=day.isoformat(),
            first=FIRST_YEAR,
            last=LAST_YEAR,
        )
    return business_day_bounds(day, venue)


def local_hours(day: date, venue: Venue) -> list[tuple[datetime, datetime]]:
    """The business day's hours as UTC intervals: 24, or 23/25 over a DST night (real hours, not wall-clock ones)."""
    start, end = day_bounds(day, venue)
    hours = []
    while start < end:
        hours.append((start, min(start + timedelta(hours=1), end)))
        start += timedelta(hours=1)
    return hours


def _check_range(first: date, last: date) -> None:
    if last < first:
        raise ReportError(N_("The range ends (%(last)s) before it starts (%(first)s)."), last=last.isoformat(), first=first.isoformat())
    if (last - first).days >= MAX_RANGE_DAYS:
        raise ReportError(
            N_("The range %(first)s – %(last)s is longer than %(days)d days; ask for a year at most."),
            first=first.isoformat(),
            last=last.isoformat(),
            days=MAX_RANGE_DAYS,
        )


def _state_of(row: Game, venue: Venue) -> game_ops.GameState:
    return replay_row(row, venue)


def _with_ops(query: Select[Game]) -> Select[Game]:
    return query.options(selectinload(Game.ops))


# --- revenue and table time -------------------------------------------------------------------
# Revenue is the money taken (broker.domain.till.revenue): the payments counted on the days, as the Z
# report counts them. What the games billed for table time is another figure, labelled as such.

ADJUSTMENTS = "adjustments"  # corrections, minimum-charge top-ups, the floor at zero


def revenue(db: Session, hall: HallState, first: date, last: date) -> Revenue:
    """Revenue over business days first..last (inclusive): what was paid on them, refunds deducted,
    by day, table and what it paid for; a day's revenue is its Z report's takings."""
    _check_range(first, last)
    day_bounds(first, hall.venue), day_bounds(last, hall.venue)  # years outside the registry's are refused
    return revenue_of(payment_records(db, hall, first, last), first, last, fallback_vat=hall.venue.billing.vat_percent)


@every_field_sent
@dataclass
class TableTime:
    """Table time billed by the games started on business days first..last and stopped since:
    by tariff (corrections and top-ups under ADJUSTMENTS). Billed, not paid: revenue is what was paid."""

    first: Annotated[date, HIDDEN]
    last: Annotated[date, HIDDEN]
    total_cents: int = 0
    games: int = 0
    by_tariff: Annotated[dict[str, int], Field(description="Tariff id → cents; corrections and minimum top-ups under 'adjustments'")] = (
        field(default_factory=dict)
    )


@every_field_sent
@dataclass(frozen=True)
class RevenueReport(Revenue):
    """The revenue (what was paid) and, beside it, the table time the games started on the days billed."""

    table_time: TableTime = field(kw_only=True)


def revenue_report(paid: Revenue, billed: TableTime) -> RevenueReport:
    return RevenueReport(**{f.name: getattr(paid, f.name) for f in fields(paid)}, table_time=billed)


def _add_bill(report: TableTime, bill: Bill) -> None:
    for line in bill.lines:
        key = (line.tariff_id or "unknown") if line.kind == "time" else ADJUSTMENTS
        report.by_tariff[key] = report.by_tariff.get(key, 0) + line.amount_cents
    report.total_cents += bill.total_cents
    report.games += 1


def table_time(db: Session, venue: Venue, first: date, last: date) -> TableTime:
    """Table time of the games started on business days first..last (inclusive) and stopped since.

    A game belongs to the evening it started: one started at 23:30 and stopped at 00:40 is
    that evening's, as the bill list of that day shows it."""
    _check_range(first, last)
    start, _ = day_bounds(first, venue)
    _, end = day_bounds(last, venue)
    rows = db.scalars(
        _with_ops(
            select(Game)
            .where(
                Game.state == "stopped",
                Game.started_at >= start,
                Game.started_at < end,
            )
            .order_by(Game.stopped_at, Game.id)
        )
    )
    report = TableTime(first, last)
    for row in rows:
        state = _state_of(row, venue)
        _add_bill(report, game_ops.bill(state, venue, state.last_at))
    return report


# --- utilisation ----------------------------------------------------------------------------


@dataclass
class HourGrid:
    """Per table, one number per local hour of the day (hours[i] is the i-th hour's start)."""

    day: date
    hours: list[datetime]
    tables: dict[str, list[int]]


def _overlap_s(a: datetime, b: datetime, lo: datetime, hi: datetime) -> int:
    return max(0, int((min(b, hi) - max(a, lo)).total_seconds()))


def utilisation(db: Session, venue: Venue, day: date, now: datetime) -> HourGrid:
    """Seconds played (paused time excluded) per billed table per local hour of `day`.

    Open games count up to `now`, the caller's clock (the hub's billing clock).
    """
    hours = local_hours(day, venue)
    start, end = hours[0][0], hours[-1][1]
    grid = {t.id: [0] * len(hours) for t in venue.tables if t.kind.billed}
    rows = db.scalars(
        _with_ops(
            select(Game).where(
                Game.started_at < end,
                (Game.stopped_at.is_(None)) | (Game.stopped_at > start),
            )
        )
    )
    for row in rows:
        state = _state_of(row, venue)
        upto = state.last_at if not state.is_open else max(as_utc(now), state.last_at)
        for seg in game_ops.segments(state, venue, upto):
            cells = grid.setdefault(seg.table, [0] * len(hours))
            for i, (lo, hi) in enumerate(hours):
                cells[i] += _overlap_s(seg.start, seg.end, lo, hi)
    return HourGrid(day, [lo for lo, _ in hours], grid)


def drops(db: Session, venue: Venue, day: date) -> HourGrid:
    """Ball drops per pocket table per local hour, by the central clock (a Pi's may be unsynced)."""
    hours = local_hours(day, venue)
    start, end = hours[0][0], hours[-1][1]
    grid = {t.id: [0] * len(hours) for t in venue.tables if t.pin_map.pockets}
    rows = db.execute(
        select(Event.table_id, Event.received_at).where(
            Event.type == "pocket",
            Event.received_at >= start,
            Event.received_at < end,
        )
    )
    for table_id, at in rows:
        index = int((at - start).total_seconds() // 3600)
        grid.setdefault(table_id, [0] * len(hours))[min(index, len(hours) - 1)] += 1
    return HourGrid(day, [lo for lo, _ in hours], grid)


# --- foosball -------------------------------------------------------------------------------


@every_field_sent
@dataclass
class FoosballUse:
    """One member's foosball over a period: check-ins, goals, the tables, the last check-in."""

    member_id: int
    name: Annotated[str, json_name("member")]
    checkins: int = 0
    goals: int = 0
    tables: Annotated[set[str], PlainSerializer(sorted, return_type=list[str])] = field(default_factory=set)
    last_at: datetime | None = None


def foosball_use(db: Session, venue: Venue, first: date, last: date) -> list[FoosballUse]:
    """Per member: check-ins and goals on the foosball tables over business days first..last, most active first."""
    _check_range(first, last)
    start, _ = day_bounds(first, venue)
    _, end = day_bounds(last, venue)
    rows: Iterable[tuple[FoosballCheckin, str]] = db.execute(
        select(FoosballCheckin, Member.name)
        .join(Member, Member.id == FoosballCheckin.member_id)
        .where(
            FoosballCheckin.checked_in_at >= start,
            FoosballCheckin.checked_in_at < end,
        )
        .order_by(FoosballCheckin.checked_in_at)
    ).tuples()
    use: dict[int, FoosballUse] = defaultdict(lambda: FoosballUse(0, ""))
    for checkin, name in rows:
        u = use[checkin.member_id]
        u.member_id, u.name = checkin.member_id, name
        u.checkins += 1
        u.goals += checkin.goals
        u.tables.add(checkin.table_id)
        u.last_at = checkin.last_goal_at or checkin.checked_in_at
    return sorted(use.values(), key=lambda u: (-u.checkins, -u.goals, u.name))
