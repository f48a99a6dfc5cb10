"""Reports for the manager (broker.reports.reports does the work; this only shapes the JSON)."""

from __future__ import annotations

from datetime import tzinfo
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from broker.accounts.staff import Staff
from broker.reports import reports
from dashboard.api import responses as R
from dashboard.api.auth import can
from dashboard.api.dates import Day
from dashboard.api.deps import Reads

router = APIRouter(prefix="/reports", tags=["reports"])

DayQuery = Query(None, description="Business day, YYYY-MM-DD (06:00 to 06:00 local time; default: today's)")
# Every day here is read by the hall's parser (dashboard.api.dates): in the hall's range, else a 422.


def _grid(grid: reports.HourGrid, tz: tzinfo, scale: float) -> dict[str, Any]:
    return {
        "day": grid.day,
        "hours": [h.astimezone(tz).isoformat() for h in grid.hours],
        "tables": {t: [round(v / scale, 1) if scale != 1 else v for v in cells] for t, cells in grid.tables.items()},
        "totals": {t: round(sum(cells) / scale, 1) if scale != 1 else sum(cells) for t, cells in grid.tables.items()},
    }


@router.get(
    "/revenue",
    response_model=reports.RevenueReport,
    summary="Revenue (incl. VAT, paid: the Z reports' takings) in cents by day, table and category over business days from..to, "
    "and the table time the games started on them billed",
)
def revenue(
    reads: Reads,
    user: Annotated[Staff, Depends(can("reports.view"))],
    first: Annotated[Day, Query(alias="from", description="First business day, YYYY-MM-DD (06:00 to 06:00 local time)")],
    last: Annotated[Day | None, Query(alias="to", description="Last business day (default: the same as from)")] = None,
) -> reports.RevenueReport:
    return reports.revenue_report(reads.reports.revenue(first, last or first), reads.reports.table_time(first, last or first))


@router.get("/utilisation", response_model=R.GridOut, summary="Minutes played per table per local hour of a business day (06:00 to 06:00)")
def utilisation(reads: Reads, user: Annotated[Staff, Depends(can("reports.view"))], day: Day | None = DayQuery) -> dict[str, Any]:
    return _grid(reads.reports.utilisation(day or reads.today()), reads.venue.tz, 60.0)


@router.get("/drops", response_model=R.GridOut, summary="Ball drops per pocket table per local hour of a business day (06:00 to 06:00)")
def drops(reads: Reads, user: Annotated[Staff, Depends(can("reports.view"))], day: Day | None = DayQuery) -> dict[str, Any]:
    return _grid(reads.reports.drops(day or reads.today()), reads.venue.tz, 1)


@router.get(
    "/foosball", response_model=list[reports.FoosballUse], summary="Foosball check-ins and goals per member over business days from..to"
)
def foosball(
    reads: Reads,
    user: Annotated[Staff, Depends(can("reports.view"))],
    first: Annotated[Day, Query(alias="from")],
    last: Annotated[Day | None, Query(alias="to")] = None,
) -> list[reports.FoosballUse]:
    return reads.reports.foosball_use(first, last or first)
