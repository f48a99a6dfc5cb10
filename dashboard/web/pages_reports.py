"""Reports for the manager: one day or one month of revenue, table time, games, utilisation, ball
drops and foosball use, drawn as SVG charts on the page, each also downloadable as CSV and all as one .xlsx.

Revenue is one definition (broker.domain.till.revenue, LABEL): the money taken, as the Z report counts
it, so a day's revenue here is its Z report's takings. broker.reports.reports does the counting (local
days, DST, table time replayed from the op log); this module
picks the period (a business day, or a month of them up to today), sums the per-day hour grids of a
month by local hour of day, and shapes rows. Exports: CSV as Slovak Excel opens it (';', decimal
comma, UTF-8 with BOM, CRLF) per section, and one .xlsx workbook with a sheet per section.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import Response
from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from broker.accounts.staff import Staff
from broker.domain.csv_cells import excel_csv
from broker.domain.dates import HallDates
from broker.domain.people.membership import FIRST_YEAR
from broker.domain.schedule import business_hours
from broker.domain.till.revenue import LABEL, WALK_IN, Revenue
from broker.hall.read_models import HallReads
from broker.reports import reports
from broker.reports.reads import StoppedGame
from broker.reports.reports import ReportError
from dashboard.api.dates import WRITTEN_MAX
from dashboard.api.deps import get_hub, local_today
from dashboard.web import charts, i18n
from dashboard.web.auth import page_can
from dashboard.web.i18n import N_, gettext
from dashboard.web.request_text import translated
from dashboard.web.tab_parts import MONEY_CATEGORY_WORDS
from dashboard.web.templating import NavLink, render

router = APIRouter(prefix="/reports")
NAV = [NavLink("/reports", N_("Reports"), role="manager", order=70)]

PeriodText = Annotated[str | None, Query(max_length=WRITTEN_MAX)]


@dataclass(frozen=True)
class Period:
    """A business day, or a month of them up to today (a month never shows days still to come)."""

    kind: str  # "day" or "month"
    first: date
    last: date
    today: date

    @property
    def days(self) -> list[date]:
        return [self.first + timedelta(days=n) for n in range((self.last - self.first).days + 1)]

    @property
    def query(self) -> str:
        """The query string that asks for this period again (export links)."""
        return f"month={self.first:%Y-%m}" if self.kind == "month" else f"day={self.first.isoformat()}"

    @property
    def prev_query(self) -> str | None:
        before = self.first - timedelta(days=1)
        if before.year < FIRST_YEAR:
            return None
        return f"month={before:%Y-%m}" if self.kind == "month" else f"day={before.isoformat()}"

    @property
    def next_query(self) -> str | None:
        """The next day or month, or None when it has not begun yet."""
        after = _month_end(self.first) + timedelta(days=1) if self.kind == "month" else self.first + timedelta(days=1)
        if after > self.today:
            return None
        return f"month={after:%Y-%m}" if self.kind == "month" else f"day={after.isoformat()}"


def _month_end(first: date) -> date:
    return (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)


def parse_period(request: Request, dates: HallDates, day: str | None, month: str | None) -> Period:
    """?day=YYYY-MM-DD or ?month=YYYY-MM (not both), read by the hall's parser (DateRefused: a 400
    page); neither means today's business day."""
    today = dates.today
    if day and month:
        raise ReportError(translated(request, N_("Ask for a day or a month, not both.")))
    if month:
        first = dates.month(month)
        last = _month_end(first)
    elif day:
        first = last = dates.day(day)
    else:
        return Period("day", today, today, today)
    if first > today:  # nothing happened yet: say so rather than draw empty charts
        raise ReportError(translated(request, N_("%(day)s has not come yet; reports go up to today."), day=first.isoformat()))
    return Period("month" if month else "day", first, min(last, today), today)


# --- the data --------------------------------------------------------------------------------


@dataclass
class HourTable:
    """A value per table per local hour of day (tables[t][h], h 0-23), summed over the period's days.

    `hours` are the hours shown, in the order the business day runs (18, ..., 23, 0, 1)."""

    hours: list[int]
    tables: dict[str, list[float]]

    def total(self, table: str) -> float:
        return sum(self.tables[table])


@dataclass
class Report:
    period: Period
    revenue: Revenue  # what was paid (the Z reports' takings)
    table_time: reports.TableTime  # what the games billed for table time
    games: list[StoppedGame]  # with their members' names
    utilisation: HourTable  # minutes
    drops: HourTable
    foosball: list[reports.FoosballUse]


def _by_hour_of_day(grids: list[reports.HourGrid], reads: HallReads, scale: float) -> HourTable:
    # A month is summed by local hour of day; a DST night's doubled 02:00 simply adds to hour 2.
    tables: dict[str, list[float]] = {}
    for grid in grids:
        hours = [h.astimezone(reads.venue.tz).hour for h in grid.hours]
        for table, cells in grid.tables.items():
            row = tables.setdefault(table, [0.0] * 24)
            for hour, value in zip(hours, cells):
                row[hour] += value / scale
    return HourTable(_shown_hours(tables, reads), tables)


def _shown_hours(tables: dict[str, list[float]], reads: HallReads) -> list[int]:
    """Opening hours (training starts earlier) up to midnight, plus any hour with play, in business-day
    order (a game at 00:30 shows after 23:00): 24 columns crowd a phone."""
    venue = reads.venue
    order = business_hours(venue)
    where = {hour: n for n, hour in enumerate(order)}
    opens = [where[h.open.hour] for h in venue.hours.values()] + [where[t.hours.open.hour] for t in venue.tariffs if t.hours]
    busy = [where[h] for h in range(24) if any(row[h] for row in tables.values())]
    first = min(opens + busy, default=0)
    last = max([*busy, where[23]])
    return list(order[first : last + 1])


def build_report(reads: HallReads, period: Period) -> Report:
    today = local_today(reads)
    played = [d for d in period.days if d <= today]  # future days have nothing to count
    # One transaction: the list of games is the rows the revenue counts (stopped on one of the days).
    f = reads.reports.period_figures(period.first, period.last, played)
    return Report(
        period,
        f.revenue,
        f.table_time,
        f.stopped,
        _by_hour_of_day(f.utilisation, reads, 60.0),
        _by_hour_of_day(f.drops, reads, 1.0),
        f.foosball,
    )


def tariff_names(reads: HallReads) -> dict[str, tuple[str, str]]:
    """Tariff id → (Slovak, English) label, adjustments included."""
    names = {t.id: (t.name, t.name_en or t.name) for t in reads.venue.tariffs}
    names[reports.ADJUSTMENTS] = ("Úpravy", "Adjustments")
    return names


def place_name(reads: HallReads, table: str) -> str:
    """A table of the revenue by table in the page's language; the bar's tabs (no table) as such."""
    if table == WALK_IN:
        return gettext(N_("At the bar (no table)"))
    return reads.tables[table].name if table in reads.tables else table


def money_category(category: str) -> str:
    word = MONEY_CATEGORY_WORDS.get(category)
    return gettext(word) if word else category


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
            "table_bars": [(place_name(reads, t), v) for t, v in sorted(report.revenue.by_table.items())],
            "category_bars": [(money_category(c), v) for c, v in report.revenue.by_category.items()],
            "tariff_bars": [(names.get(k, (k, k))[pick], v) for k, v in sorted(report.table_time.by_tariff.items())],
            "util_rows": _hour_rows(report.utilisation, reads),
            "util_hours": [str(h) for h in report.utilisation.hours],
            "util_max": 60.0 * len(report.period.days),  # a full hour on every day of the period
            "drop_rows": _hour_rows(report.drops, reads),
            "drop_hours": [str(h) for h in report.drops.hours],
        }
    finally:
        i18n.reset_lang(token)


# --- exports: CSV for Slovak Excel, and .xlsx ---------------------------------------------------
# One table per export, cells as Python values (text, int, Decimal euros, local datetimes), headers in
# the visitor's language; the CSV writer and the workbook each write those values their own way.


def _eur(cents: int | None) -> Decimal | str:
    """Cents as a decimal euro amount (12.50, -2.00); no float ever involved."""
    return "" if cents is None else Decimal(cents).scaleb(-2)


def _local(dt: datetime | None, reads: HallReads) -> datetime | str:
    """A naive local datetime to the minute: what a spreadsheet shows and sorts as a date and time."""
    return dt.astimezone(reads.venue.tz).replace(tzinfo=None, second=0, microsecond=0) if dt else ""


def _table_name(reads: HallReads, table: str) -> str:
    return reads.tables[table].name if table in reads.tables else table


def _t(request: Request, text: str) -> str:
    return translated(request, text)


def _sheet_revenue(r: Report, reads: HallReads, request: Request) -> list[list[Any]]:
    """Revenue (the Z reports' takings) by day, table and category, then the table time billed by tariff."""
    names = tariff_names(reads)
    pick = 0 if i18n.lang_of(request) == "sk" else 1
    token = i18n.use_lang(i18n.lang_of(request))  # the place and category words in the visitor's language
    try:
        rows: list[list[Any]] = [[_t(request, N_("Group")), _t(request, N_("Item")), _t(request, N_("Amount (€)"))]]
        by_day, by_table, by_category = (_t(request, g) for g in (N_("Revenue by day"), N_("Revenue by table"), N_("Revenue by category")))
        rows += [[by_day, date.fromisoformat(k), _eur(v)] for k, v in r.revenue.by_day.items()]
        rows += [[by_table, place_name(reads, k), _eur(v)] for k, v in sorted(r.revenue.by_table.items())]
        rows += [[by_category, money_category(k), _eur(v)] for k, v in r.revenue.by_category.items()]
        rows.append([_t(request, LABEL), "", _eur(r.revenue.total_cents)])
        by_tariff = _t(request, N_("Table time billed by tariff"))
        rows += [[by_tariff, names.get(k, (k, k))[pick], _eur(v)] for k, v in sorted(r.table_time.by_tariff.items())]
        rows.append([_t(request, N_("Table time billed")), "", _eur(r.table_time.total_cents)])
    finally:
        i18n.reset_lang(token)
    return rows


def _sheet_games(r: Report, reads: HallReads, request: Request) -> list[list[Any]]:
    head = [N_("Game no."), N_("Table"), N_("Started"), N_("Stopped"), N_("Member"), N_("Amount (€)")]
    return [[_t(request, h) for h in head]] + [
        [s.id, _table_name(reads, s.table), _local(s.started_at, reads), _local(s.stopped_at, reads), s.member or "", _eur(s.total_cents)]
        for s in r.games
    ]


def _figure(value: float) -> int | Decimal:
    """60 rather than 60.0: drops are counts, and most minutes are whole; a Decimal, so never 0.30000000000000004."""
    d = Decimal(str(round(value, 1)))
    return int(d) if d == d.to_integral_value() else d


def _sheet_hours(table: HourTable, reads: HallReads, request: Request) -> list[list[Any]]:
    order = business_hours(reads.venue)
    return [[_t(request, N_("Table")), *(f"{h:02d}:00" for h in order), _t(request, N_("Total"))]] + [
        [_table_name(reads, t), *(_figure(cells[h]) for h in order), _figure(sum(cells))] for t, cells in table.tables.items()
    ]


def _sheet_foosball(r: Report, reads: HallReads, request: Request) -> list[list[Any]]:
    head = [N_("Member"), N_("Check-ins"), N_("Goals"), N_("Tables"), N_("Last played")]
    return [[_t(request, h) for h in head]] + [
        [u.name, u.checkins, u.goals, ", ".join(sorted(_table_name(reads, t) for t in u.tables)), _local(u.last_at, reads)]
        for u in r.foosball
    ]


Sheet = Callable[[Report, HallReads, Request], list[list[Any]]]
EXPORTS: dict[str, tuple[str, Sheet]] = {  # name in the URL → (sheet title, rows)
    "revenue": (N_("Revenue"), _sheet_revenue),
    "sessions": (N_("Games"), _sheet_games),  # the export's name in links others keep
    "utilisation": (N_("Utilisation"), lambda r, s, q: _sheet_hours(r.utilisation, s, q)),
    "drops": (N_("Balls potted"), lambda r, s, q: _sheet_hours(r.drops, s, q)),
    "foosball": (N_("Foosball"), _sheet_foosball),
}
CSV_EXPORTS = EXPORTS  # the old name, for callers that list the exports


def _csv_cell(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")  # Excel reads ISO dates in any locale
    if isinstance(value, date):
        return value.isoformat()
    return value


def csv_bytes(rows: list[list[Any]]) -> bytes:
    """A report as the CSV Slovak Excel opens (broker.domain.csv_cells.excel_csv: the one rule),
    dates as Excel reads them in any locale."""
    return excel_csv([_csv_cell(v) for v in row] for row in rows)


def xlsx_bytes(sheets: list[tuple[str, list[list[Any]]]]) -> bytes:
    """One workbook, a sheet per export: numbers as numbers (euros with two decimals), times as dates."""
    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets:
        ws = book.create_sheet(title[:31])  # Excel's limit for a sheet name
        for row in rows:
            ws.append(row)
            for cell, value in zip(ws[ws.max_row], row):
                # openpyxl stores text starting with "=" as a formula: a member named =HYPERLINK(...)
                # must stay the text it is (a string cell, shown as typed, no quote added).
                if isinstance(value, str) and cell.data_type == "f":
                    cell.data_type = "s"
        for cells in ws.iter_rows(min_row=2):
            for cell in cells:
                if isinstance(cell.value, (Decimal, float)):
                    cell.number_format = "0.00" if isinstance(cell.value, Decimal) and cell.value.as_tuple().exponent == -2 else "0.0"
                elif isinstance(cell.value, datetime):
                    cell.number_format = "d. m. yyyy h:mm"
                elif isinstance(cell.value, date):
                    cell.number_format = "d. m. yyyy"
        for n, cell in enumerate(ws[1], start=1):
            cell.font = Font(bold=True)
            ws.column_dimensions[get_column_letter(n)].width = max(10, len(str(cell.value or "")) + 2)
        ws.freeze_panes = "A2"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _stamp(period: Period) -> str:
    return period.first.strftime("%Y-%m") if period.kind == "month" else period.first.isoformat()


# --- routes ----------------------------------------------------------------------------------


def _period(request: Request, day: str | None, month: str | None) -> tuple[HallReads, Period]:
    reads = get_hub(request).reads
    return reads, parse_period(request, reads.dates(), day, month)


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


@router.get("/lavos.xlsx")
def report_xlsx(
    request: Request, user: Annotated[Staff, Depends(page_can("reports.view"))], day: PeriodText = None, month: PeriodText = None
) -> Response:
    reads, period = _period(request, day, month)
    report = build_report(reads, period)
    sheets = [(_t(request, title), make(report, reads, request)) for title, make in EXPORTS.values()]
    return Response(
        xlsx_bytes(sheets),
        media_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        headers={"Content-Disposition": f'attachment; filename="lavos-{_stamp(period)}.xlsx"'},
    )


@router.get("/{name}.csv")
def report_csv(
    request: Request, name: str, user: Annotated[Staff, Depends(page_can("reports.view"))], day: PeriodText = None, month: PeriodText = None
) -> Response:
    if name not in EXPORTS:
        raise HTTPException(
            404,
            translated(request, N_("There is no %(name)s export; choose one of: %(names)s."), name=name[:40], names=", ".join(EXPORTS)),
        )
    reads, period = _period(request, day, month)
    rows = EXPORTS[name][1](build_report(reads, period), reads, request)
    return Response(
        csv_bytes(rows),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="lavos-{name}-{_stamp(period)}.csv"'},
    )
