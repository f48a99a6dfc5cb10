"""Uzávierka: the business day on the pages. Staff open the day with the float, watch the running
figures and close it with the counted cash (the Z report, then printed); the manager sees the
closed days with their Z reports and exports them (CSV for Slovak Excel, xlsx).

The rules are the close-out's (broker.till.closeout): these routes call the same facade
methods as the API (dashboard.api.days). A refused form comes back with the reason and what was
typed; a second tap on "close" finds the day closed and shows its Z report instead of an error.
Reached from the bills page (/bills) and, for the manager, the reports page: the top bar has no
room for another link at 1280 px.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.euros import parse_euros
from broker.domain.till.revenue import LABEL
from broker.domain.till.zreport import ZReport
from broker.hall.facade import ServiceError
from broker.hall.read_models import HallReads
from broker.till.closeout import MAX_DRAWER_CENTS, CloseDay, OpenDay
from dashboard.access import allows, counts_blind
from dashboard.api.dates import WRITTEN_MAX
from dashboard.api.deps import Hub, Reads
from dashboard.web import i18n
from dashboard.web.auth import PageForbidden, page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.pages_reports import _eur, _local, csv_bytes, xlsx_bytes
from dashboard.web.request_text import refusal, translated
from dashboard.web.tab_parts import MONEY_CATEGORY_WORDS
from dashboard.web.templating import flash, render

router = APIRouter()
NAV: list[Any] = []  # no top-bar link (no room at 1280 px): /bills and /reports link here

AmountField = Annotated[str, Form(max_length=40)]

# Categories as staff read them (the words of the tab pages, and money no line explains); an
# unknown id is shown as it is.
CATEGORIES = MONEY_CATEGORY_WORDS


def drawer_cents(text: str) -> int | None:
    """'50', '50,00', '1 234,50', '412.5' → cents; None when it is not an amount of cash (negative, 3 decimals, words)."""
    return parse_euros(text, low=0, high=MAX_DRAWER_CENTS)


def _category(request: Request, category: str) -> str:
    return translated(request, CATEGORIES[category]) if category in CATEGORIES else category


def blind(z: ZReport, user: Staff) -> bool:
    """A blind count: staff see neither the expected cash nor the takings of a day still open."""
    return counts_blind(user.role, z.closed)


def _method(request: Request, z: ZReport, method: str) -> str:
    for m in z.by_method:
        if m.method == method:
            return m.name if i18n.lang_of(request) == "sk" else m.name_en
    return method


def _tab_name(request: Request, where: str, tab_id: int | None) -> str:
    return where or (translated(request, N_("Walk-in tab no. %(num)d"), num=tab_id) if tab_id else "")


def z_view(request: Request, z: ZReport, user: Staff) -> dict[str, Any]:
    """What the Z report template prints, names in the visitor's language; blind for staff while the
    day is open (they count the cash before they see what the drawer should hold: "day.expected")."""
    return {
        "z": z,
        "blind": blind(z, user),
        "category": lambda c: _category(request, c),
        "method": lambda m: _method(request, z, m),
        "tab_name": lambda where, tab_id: _tab_name(request, where, tab_id),
        "en": i18n.lang_of(request) != "sk",
    }


def _can_see(user: Staff, day: date, reads: HallReads) -> None:
    """Staff see the day they work on and the last one closed (to print it again); earlier days are the manager's."""
    if allows(user.role, "day.history"):
        return
    if reads.till.day_overview().at_hand(day):
        return
    raise PageForbidden(user, "manager")


def _day_page(
    request: Request,
    reads: HallReads,
    user: Staff,
    *,
    day: date | None = None,
    error: str | None = None,
    form: dict[str, Any] | None = None,
    status: int = 200,
) -> Response:
    overview = reads.till.day_overview()
    shown = day or overview.day
    report = overview.report if shown == overview.day else reads.till.day_report(shown)
    return render(
        request,
        "day.html",
        {
            "overview": overview,
            "shown": shown,
            "form_error": error,
            "form": form or {},
            "history": allows(user.role, "day.history"),
            **z_view(request, report, user),
        },
        status=status,
    )


@router.get("/day")
def day_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("day.run"))], day: str | None = None) -> Response:
    """Uzávierka: the running day (open it, its figures, close it), or an earlier day left open."""
    shown = _parse_day(reads, day) if day else None
    if shown is not None:
        overview = reads.till.day_overview()
        if shown != overview.day and shown not in overview.unclosed:
            return RedirectResponse(f"/day/{shown.isoformat()}/report", status_code=303)
    return _day_page(request, reads, user, day=shown)


@router.get("/day/figures")
def day_figures(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("day.run"))]) -> Response:
    """The running day's Z report figures alone (the /day page re-fetches them as the evening goes on)."""
    return render(request, "_zreport.html", z_view(request, reads.till.day_overview().report, user))


def _parse_day(reads: HallReads, text: str) -> date:
    """A day the page or form names, read by the hall's parser (DateRefused: a 400 page)."""
    return reads.dates().day(text)


@router.post("/day/open", dependencies=[Depends(verify_csrf)])
def open_day(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("day.run"))], float_eur: AmountField = "") -> Response:
    form = {"float": float_eur}
    cents = drawer_cents(float_eur)
    if cents is None:
        message = translated(request, N_("Give the float in euros, e.g. 50 or 50,00 (0 if the drawer is empty)."))
        return _day_page(request, hub.reads, user, error=message, form=form, status=400)
    try:
        day = hub.execute(OpenDay(float_cents=cents, actor=user.username))
    except ServiceError as e:
        return _day_page(request, hub.reads, user, error=refusal(request, e), form=form, status=409)
    flash(request, translated(request, N_("The day %(day)s is open; float %(float)s."), day=i18n.day(day), float=i18n.money(cents)), "ok")
    return RedirectResponse("/day", status_code=303)


@router.post("/day/close", dependencies=[Depends(verify_csrf)])
def close_day(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("day.run"))],
    day: Annotated[str, Form(max_length=WRITTEN_MAX)] = "",
    counted_eur: AmountField = "",
    open_tabs_ok: Annotated[str, Form(max_length=5)] = "",
) -> Response:
    shown = _parse_day(hub.reads, day)
    form = {"counted": counted_eur, "open_tabs_ok": bool(open_tabs_ok)}
    cents = drawer_cents(counted_eur)
    if cents is None:
        message = translated(request, N_("Give the cash counted in the drawer in euros, e.g. 412,50."))
        return _day_page(request, hub.reads, user, day=shown, error=message, form=form, status=400)
    try:
        hub.execute(CloseDay(day=shown, counted_cents=cents, open_tabs_ok=bool(open_tabs_ok), actor=user.username))
    except ServiceError as e:
        if any(s.day == shown and s.closed_at for s in _closed_now(hub.reads, shown)):
            # A second tap (or the other tablet was first): the day is closed, show its Z report.
            flash(request, refusal(request, e), "info")
            return RedirectResponse(f"/day/{shown.isoformat()}/report", status_code=303)
        return _day_page(request, hub.reads, user, day=shown, error=refusal(request, e), form=form, status=409)
    flash(request, gettext("The day is closed. Print the Z report and put it with the cash."), "ok")
    return RedirectResponse(f"/day/{shown.isoformat()}/report", status_code=303)


def _closed_now(reads: HallReads, day: date) -> list[Any]:
    overview = reads.till.day_overview()
    return [overview.last_closed] if overview.last_closed is not None and overview.last_closed.day == day else []


@router.get("/day/{day}/report")
def report_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("day.run"))], day: str) -> Response:
    """A day's Z report as it prints (A4 or an 80 mm roll): frozen once closed, running before."""
    shown = _parse_day(reads, day)
    _can_see(user, shown, reads)
    z = reads.till.day_report(shown)
    return render(request, "zreport.html", {"history": allows(user.role, "day.history"), **z_view(request, z, user)})


@router.get("/days")
def days_page(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("day.history"))]) -> Response:
    """The closed days (and any left open), newest first, with their Z reports and exports."""
    return render(request, "days.html", {"days": reads.till.business_days(), "today": reads.till.day_overview().day})


# --- exports -----------------------------------------------------------------------------------


def _drawer_rows(add: Callable[..., None], t: Callable[..., str], z: ZReport) -> None:
    """The export's lines of the cash drawer: the float, cash in and out, its rounding, expected and counted."""
    cash = t(N_("Cash in the drawer"))
    add(cash, t(N_("Float")), z.float_cents)
    drawer = next((m for m in z.by_method if m.cash), None)
    if drawer is not None:
        add(cash, t(N_("Cash taken")), drawer.payments_cents, count=drawer.count)
        add(cash, t(N_("Cash refunded")), drawer.reversals_cents)
    if z.rounding_cents:
        add(cash, t(N_("Cash rounding (no VAT, not takings)")), z.rounding_cents)
    add(cash, t(N_("Expected cash")), z.expected_cash_cents)
    if z.counted_cents is not None:
        add(cash, t(N_("Counted cash")), z.counted_cents)
        add(cash, t(N_("Difference")), z.variance_cents)


def _staff_rows(add: Callable[..., None], t: Callable[..., str], request: Request, z: ZReport) -> None:
    """The export's lines per person: their money, by method, and their voids (the shift report splits them by shift)."""
    for s in z.by_staff:
        add(t(N_("By staff")), s.staff, s.net_cents, count=s.count)
        for m in s.by_method:
            add(t(N_("By staff")), f"{s.staff} · {_method(request, z, m.method)}", m.cents)
        if s.voids:
            add(t(N_("By staff")), f"{s.staff} · {t(N_('Voided items'))}", -s.voids_cents, count=s.voids)


def _voucher_rows(add: Callable[..., None], t: Callable[..., str], z: ZReport) -> None:
    """Vouchers (zákon o DPH § 9a, broker.domain.vouchers): money taken that is not revenue, and credit used that is."""
    vouchers = t(N_("Vouchers"))
    for cents, label in (
        (z.voucher_sales_cents, N_("Credit sold (a multi-purpose voucher: not revenue, no VAT)")),
        (z.credit_redeemed_cents, N_("Paid from credit (revenue, VAT per the goods)")),
        (z.package_redeemed_cents, N_("Table time from packages (taxed when the package was sold)")),
    ):
        if cents:
            add(vouchers, t(label), cents)


def export_rows(request: Request, reads: HallReads, z: ZReport) -> list[list[Any]]:
    """The Z report as one table: a group, an item, then the figures (euros as Decimal, never float)."""
    t: Callable[..., str] = lambda text, **kw: translated(request, text, **kw)  # noqa: E731
    rows: list[list[Any]] = [
        [
            t(N_("Group")),
            t(N_("Item")),
            t(N_("Count")),
            t(N_("Base (€)")),
            t(N_("VAT (€)")),
            t(N_("Amount (€)")),
            t(N_("Who")),
            t(N_("Note")),
            t(N_("Time")),
        ]
    ]

    def add(
        group: str,
        item: Any,
        amount: int | None = None,
        *,
        count: Any = "",
        base: Any = "",
        vat: Any = "",
        who: str = "",
        note: str = "",
        at: datetime | None = None,
    ) -> None:
        rows.append([group, item, count, base, vat, _eur(amount) if amount is not None else "", who, note, _local(at, reads) if at else ""])

    day = t(N_("Day"))
    add(day, t(N_("Business day")), note=z.day.isoformat())
    add(
        day,
        t(N_("Opened")),
        who=z.opened_by,
        note=t(N_("opened by itself with the first payment")) if z.auto_opened else "",
        at=z.opened_at,
    )
    add(day, t(N_("Closed")) if z.closed else t(N_("Running figures")), who=z.closed_by or "", at=z.closed_at or z.made_at)
    _drawer_rows(add, t, z)
    for m in z.by_method:
        add(t(N_("By payment method")), _method(request, z, m.method), m.net_cents, count=m.count)
    _staff_rows(add, t, request, z)
    for cat in z.by_category:
        add(t(N_("By category")), _category(request, cat.category), cat.gross_cents)
    for rate in z.by_vat:
        add(t(N_("By VAT rate")), f"{rate.vat_percent} %", rate.gross_cents, base=_eur(rate.net_cents), vat=_eur(rate.vat_cents))
    add(t(N_("Total")), t(N_("Table time")), z.table_time_cents)
    add(t(N_("Total")), t(N_("Items")), z.items_cents)
    add(t(N_("Total")), t(LABEL), z.total_cents, count=z.payments_count)
    _voucher_rows(add, t, z)
    for r in z.refunds:
        note = t(N_("Correction of %(day)s"), day=i18n.day(r.corrects_day)) if r.corrects_day else ""
        add(
            t(N_("Refunds")),
            _method(request, z, r.method),
            r.amount_cents,
            who=r.staff,
            note=" · ".join(x for x in (r.reason, note) if x),
            at=r.at,
        )
    for v in z.voids:
        add(
            t(N_("Voids")),
            v.description_en if i18n.lang_of(request) != "sk" else v.description,
            -v.amount_cents,
            count=v.quantity,
            who=v.by,
            note=v.reason,
            at=v.at,
        )
    for c in z.corrections:
        add(
            t(N_("Manager corrections")),
            t(N_("%(table)s, game no. %(num)d"), table=c.where, num=c.game),
            c.amount_cents,
            who=c.by,
            note=c.reason,
            at=c.at,
        )
    for e in z.earlier_days:
        add(
            t(N_("Corrections of earlier days")),
            _tab_name(request, e.tab, e.tab_id),
            e.amount_cents,
            who=e.staff,
            note=t(N_("Correction of %(day)s"), day=i18n.day(e.corrects_day)),
            at=e.at,
        )
    for o in z.open_tabs:
        add(t(N_("Tabs left open")), _tab_name(request, o.where, o.tab_id), o.owed_cents, at=o.opened_at)
    return rows


def _export(request: Request, reads: HallReads, user: Staff, day: str) -> tuple[date, list[list[Any]]]:
    shown = _parse_day(reads, day)
    token = i18n.use_lang(i18n.lang_of(request))  # i18n.day formats in the page's language
    try:
        return shown, export_rows(request, reads, reads.till.day_report(shown))
    finally:
        i18n.reset_lang(token)


@router.get("/days/{day}.csv")
def day_csv(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("day.history"))], day: str) -> Response:
    shown, rows = _export(request, reads, user, day)
    return Response(
        csv_bytes(rows),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="lavos-z-{shown.isoformat()}.csv"'},
    )


@router.get("/days/{day}.xlsx")
def day_xlsx(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("day.history"))], day: str) -> Response:
    shown, rows = _export(request, reads, user, day)
    return Response(
        xlsx_bytes([(translated(request, N_("Z report")), rows)]),
        media_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        headers={"Content-Disposition": f'attachment; filename="lavos-z-{shown.isoformat()}.xlsx"'},
    )
