"""The manager's reports (`reads.reports` on the dashboard): revenue, table time, utilisation and
drops per hour, foosball use, the games stopped in a period, a period's figures read at once
(broker.reports.reports has the queries). Read-only store sessions, frozen values out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import select

from broker.core.ports import HallState
from broker.core.store_errors import store_call
from broker.domain.till.revenue import Revenue
from broker.reports import reports
from broker.storage.models import Game, Member


@dataclass(frozen=True)
class StoppedGame:
    id: int
    table: str
    started_at: datetime
    stopped_at: datetime | None
    member: str | None
    total_cents: int | None


@dataclass(frozen=True)
class PeriodFigures:
    """A period's report figures, read in one transaction so the game list adds up to the table time."""

    revenue: Revenue  # what was paid (broker.domain.till.revenue: the Z report's takings)
    table_time: reports.TableTime  # what the games billed for table time
    stopped: list[StoppedGame]
    utilisation: list[reports.HourGrid]  # one per played day
    drops: list[reports.HourGrid]
    foosball: list[reports.FoosballUse]


class ReportsReads:
    """The reports' queries; none of them writes."""

    def __init__(self, hall: HallState) -> None:
        self._hall = hall
        self._store = hall.store

    @staticmethod
    def _stopped(db: Any, start: datetime, end: datetime) -> list[StoppedGame]:
        rows = db.execute(
            select(Game, Member.name)
            .outerjoin(Member, Member.id == Game.member_id)
            .where(
                Game.state == "stopped",
                Game.started_at >= start,
                Game.started_at < end,
            )
            .order_by(Game.stopped_at, Game.id)
        )
        return [StoppedGame(s.id, s.table_id, s.started_at, s.stopped_at, name, s.total_cents) for s, name in rows]

    @store_call
    def stopped_games(self, start: datetime, end: datetime) -> list[StoppedGame]:
        """Stopped games started in [start, end) (a business day's games), in stop order, with the member's name."""
        with self._store.reader() as db:
            return self._stopped(db, start, end)

    @store_call
    def revenue(self, first: date, last: date) -> Revenue:
        """What was paid over business days first..last (the Z reports' takings)."""
        with self._store.reader() as db:
            return reports.revenue(db, self._hall, first, last)

    @store_call
    def table_time(self, first: date, last: date) -> reports.TableTime:
        """What the games started on business days first..last billed for table time."""
        with self._store.reader() as db:
            return reports.table_time(db, self._hall.venue, first, last)

    @store_call
    def utilisation(self, day: date) -> reports.HourGrid:
        with self._store.reader() as db:
            return reports.utilisation(db, self._hall.venue, day, self._hall.clock())

    @store_call
    def drops(self, day: date) -> reports.HourGrid:
        with self._store.reader() as db:
            return reports.drops(db, self._hall.venue, day)

    @store_call
    def foosball_use(self, first: date, last: date) -> list[reports.FoosballUse]:
        with self._store.reader() as db:
            return reports.foosball_use(db, self._hall.venue, first, last)

    @store_call
    def period_figures(self, first: date, last: date, played: list[date]) -> PeriodFigures:
        """Revenue, table time, stopped games and foosball use over business days first..last; hour grids for the `played` days."""
        start, _ = self.day_bounds(first)
        _, end = self.day_bounds(last)
        now = self._hall.clock()
        with self._store.reader() as db:
            return PeriodFigures(
                reports.revenue(db, self._hall, first, last),
                reports.table_time(db, self._hall.venue, first, last),
                self._stopped(db, start, end),
                [reports.utilisation(db, self._hall.venue, d, now) for d in played],
                [reports.drops(db, self._hall.venue, d) for d in played],
                reports.foosball_use(db, self._hall.venue, first, last),
            )

    def day_bounds(self, day: date) -> tuple[datetime, datetime]:
        return reports.day_bounds(day, self._hall.venue)
