"""Reports for the manager: one day or one month of revenue, sessions, utilisation, ball drops and
foosball use, drawn as SVG charts on the page, each also downloadable as CSV.

broker.hall.reports does the counting (local days, DST, money replayed from the op log); this module
picks the period, sums the per-day hour grids of a month by local hour of day, and shapes rows.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import Response

from broker.accounts.staff import Staff
from broker.domain.csv_cells import SafeWriter
from broker.hall import reports
from broker.hall.read_models import HallReads, StoppedSession
from broker.hall.reports import ReportError
from dashboard.api.deps import get_hub, local_today
from dashboard.web import charts, i18n
from dashboard.web.auth import page_can
from dashboard.web.i18n import N_
from dashboard.web.request_text import translated
from dashboard.web.templating import NavLink, render

router = APIRouter(prefix="/reports")
NAV = [NavLink("/reports", N_("Reports"), role="manager", order=70)]

PeriodText = Annotated[str | None, Query(max_length=20)]
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH = re.compile(r"^\d{4}-\d{2}$")


@dataclass(frozen=True)
class Period:
    kind: str  # "day" or "month"
    first: date
    last: date

    @property
    def days(self) -> list[date]:
        return [self.first + timedelta(days=n) for n in range((self.last - self.first).days + 1)]

    @property
    def query(self) -> str:
        """The query string that asks for this period again (CSV links)."""
        return f"month={self.first:%Y-%m}" if self.kind == "month" else f"day={self.first.isoformat()}"


def parse_period(request: Request, day: str | None, month: str | None, today: date) -> Period:
    """?day=YYYY-MM-DD or ?month=YYYY-MM (not both); neither means today."""
    if day and month:
        raise ReportError(translated(request, N_("Ask for a day or a month, not both.")))
    try:
        if month:
            if not _MONTH.match(month):
                raise ValueError
            first = date(int(month[:4]), int(month[5:]), 1)
            last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
            return Period("month", first, last)
        if day:
            if not _DAY.match(day):
                raise ValueError
            d = date.fromisoformat(day)
            return Period("day", d, d)
    except (ValueError, OverflowError):  # 2026-13, 0000-01, 9999-12 (its last day overflows)
        raise ReportError(
            translated(
                request, N_("%(value)s is not a date: give a day as 2026-11-30 or a month as 2026-11."), value=(month or day or "")[:20]
            )
        ) from None
    return Period("day", today, today)


# --- the data --------------------------------------------------------------------------------

SessionRow = StoppedSession  # a stopped session with its member's name (broker.hall.read_models)


@dataclass
class HourTable:
    """A value per table per local hour of day (0-23), summed over the period's days."""

    hours: list[int]
    tables: dict[str, list[float]]

    def total(self, table: str) -> float:
        return sum(self.tables[table])


@dataclass
class Report:
    period: Period
    revenue: reports.Revenue
    sessions: list[SessionRow]
    utilisation: HourTable  # minutes
    drops: HourTable
    foosball: list[reports.FoosballUse]


def _by_hour_of_day(grids: list[reports.HourGrid], reads: HallReads, scale: float) -> HourTable:
    # A month is summed by local hour of day; a DST day's doubled 02:00 simply adds to hour 2.
    tables: dict[str, list[float]] = {}
    for grid in grids:
        hours = [h.astimezone(reads.venue.tz).hour for h in grid.hours]
        for table, cells in grid.tables.items():
            row = tables.setdefault(table, [0.0] * 24)
            for hour, value in zip(hours, cells):
                row[hour] += value / scale
    return HourTable(_shown_hours(tables, reads), tables)


def _shown_hours(tables: dict[str, list[float]], reads: HallReads) -> list[int]:
    """Opening hours (training starts earlier) plus any hour with play: 24 columns crowd a phone."""
    venue = reads.venue
    opens = [h.open.hour for h in venue.hours.values()] + [t.hours.open.hour for t in venue.tariffs if t.hours]
    busy = [h for h in range(24) if any(row[h] for row in tables.values())]
    first = min(opens + busy, default=0)
    last = max(busy + [23], default=23)
    return list(range(first, last + 1))


def build_report(reads: HallReads, period: Period) -> Report:
    today = local_today(reads)
    played = [d for d in period.days if d <= today]  # future days have nothing to count
    # One transaction: the session list is the rows the revenue counts (stopped on one of the days).
    f = reads.period_figures(period.first, period.last, played)
    return Report(
        period, f.revenue, f.stopped, _by_hour_of_day(f.utilisation, reads, 60.0), _by_hour_of_day(f.drops, reads, 1.0), f.foosball
    )


def tariff_names(reads: HallReads) -> dict[str, tuple[str, str]]:
    """Tariff id → (Slovak, English) label, extras and adjustments included."""
    names = {t.id: (t.name, t.name_en or t.name) for t in reads.venue.tariffs}
    names[reports.EXTRAS] = ("Doplnky", "Extras")
    names[reports.ADJUSTMENTS] = ("Úpravy", "Adjustments")
    return names


def _hour_rows(table: HourTable, reads: HallReads) -> dict[str, list[float]]:
    return {reads.tables[t].name if t in reads.tables else t: [cells[h] for h in table.hours] for t, cells in table.tables.items()}


def chart_view(report: Report, reads: HallReads, lang: str) -> dict[str, Any]:
    """What the charts draw, labelled for `lang`: (label, value) bars and table × hour rows."""
    token = i18n.use_lang(lang)  # i18n.day formats in the context's language
    try:
        names = tariff_names(reads)
        pick = 0 if lang == "sk" else 1
        return {
            "day_bars": [(i18n.day(date.fromisoformat(d)), v) for d, v in report.revenue.by_day.items()],
            "table_bars": [(reads.tables[t].name if t in reads.tables else t, v) for t, v in sorted(report.revenue.by_table.items())],
            "tariff_bars": [(names.get(k, (k, k))[pick], v) for k, v in sorted(report.revenue.by_tariff.items())],
            "util_rows": _hour_rows(report.utilisation, reads),
            "util_hours": [str(h) for h in report.utilisation.hours],
            "util_max": 60.0 * len(report.period.days),  # a full hour on every day of the period
            "drop_rows": _hour_rows(report.drops, reads),
            "drop_hours": [str(h) for h in report.drops.hours],
        }
    finally:
        i18n.reset_lang(token)


# --- CSV -----------------------------------------------------------------------------------


def _eur(cents: int | None) -> Decimal | str:
    """Cents as a decimal euro amount for spreadsheets (12.50, -2.00); no float ever involved.

    A Decimal, not text: numbers are written as they are, text gets the formula guard."""
    return "" if cents is None else Decimal(cents).scaleb(-2)


def _iso(dt: datetime | None, reads: HallReads) -> str:
    return dt.astimezone(reads.venue.tz).isoformat(timespec="minutes") if dt else ""


def _csv_revenue(r: Report, reads: HallReads) -> list[list[Any]]:
    names = tariff_names(reads)
    rows: list[list[Any]] = [["group", "key", "name", "amount_cents", "amount_eur"]]
    rows += [["day", k, k, v, _eur(v)] for k, v in r.revenue.by_day.items()]
    rows += [["table", k, reads.tables[k].name if k in reads.tables else k, v, _eur(v)] for k, v in sorted(r.revenue.by_table.items())]
    rows += [["tariff", k, names.get(k, (k, k))[0], v, _eur(v)] for k, v in sorted(r.revenue.by_tariff.items())]
    rows.append(["total", "", "", r.revenue.total_cents, _eur(r.revenue.total_cents)])
    return rows


def _csv_sessions(r: Report, reads: HallReads) -> list[list[Any]]:
    return [["session", "table", "started", "stopped", "member", "amount_cents", "amount_eur"]] + [
        [s.id, s.table, _iso(s.started_at, reads), _iso(s.stopped_at, reads), s.member or "", s.total_cents, _eur(s.total_cents)]
        for s in r.sessions
    ]


def _figure(value: float) -> int | float:
    """60 rather than 60.0: drops are counts, and most minutes are whole."""
    value = round(value, 1)
    return int(value) if value.is_integer() else value


def _csv_hours(table: HourTable) -> list[list[Any]]:
    return [["table", *(f"{h:02d}:00" for h in range(24)), "total"]] + [
        [t, *(_figure(v) for v in cells), _figure(sum(cells))] for t, cells in table.tables.items()
    ]


def _csv_foosball(r: Report, reads: HallReads) -> list[list[Any]]:
    return [["member_id", "member", "checkins", "goals", "tables", "last"]] + [
        [u.member_id, u.name, u.checkins, u.goals, " ".join(sorted(u.tables)), _iso(u.last_at, reads)] for u in r.foosball
    ]


CSV_EXPORTS: dict[str, Callable[[Report, HallReads], list[list[Any]]]] = {
    "revenue": _csv_revenue,
    "sessions": _csv_sessions,
    "utilisation": lambda r, s: _csv_hours(r.utilisation),
    "drops": lambda r, s: _csv_hours(r.drops),
    "foosball": _csv_foosball,
}


def csv_text(rows: list[list[Any]]) -> str:
    out = io.StringIO(newline="")
    SafeWriter(out).writerows(rows)  # member, table and tariff names are text a spreadsheet must not run
    return out.getvalue()


# --- routes ----------------------------------------------------------------------------------


def _period(request: Request, day: str | None, month: str | None) -> tuple[HallReads, Period]:
    reads = get_hub(request).reads
    return reads, parse_period(request, day, month, local_today(reads))


@router.get("")
def report_page(
    request: Request, user: Annotated[Staff, Depends(page_can("reports.view"))], day: PeriodText = None, month: PeriodText = None
) -> Response:
    reads, period = _period(request, day, month)
    report = build_report(reads, period)
    return render(
        request,
        "reports.html",
        {
            "report": report,
            "period": period,
            "tables": reads.tables,
            "view": chart_view(report, reads, i18n.lang_of(request)),
            "bar_chart": charts.bar_chart,
            "heatmap": charts.heatmap,
            "money_fmt": lambda v: i18n.money(int(v)),
            "count_fmt": lambda v: i18n.number(round(v)),
        },
    )


@router.get("/{name}.csv")
def report_csv(
    request: Request, name: str, user: Annotated[Staff, Depends(page_can("reports.view"))], day: PeriodText = None, month: PeriodText = None
) -> Response:
    if name not in CSV_EXPORTS:
        raise HTTPException(
            404,
            translated(request, N_("There is no %(name)s export; choose one of: %(names)s."), name=name[:40], names=", ".join(CSV_EXPORTS)),
        )
    reads, period = _period(request, day, month)
    text = csv_text(CSV_EXPORTS[name](build_report(reads, period), reads))
    stamp = period.first.strftime("%Y-%m") if period.kind == "month" else period.first.isoformat()
    # utf-8-sig: Excel, which the committee uses, reads a BOM-less CSV as the wrong code page.
    return Response(
        text.encode("utf-8-sig"),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="lavos-{name}-{stamp}.csv"'},
    )
