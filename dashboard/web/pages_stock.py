"""The bar's stock (issue 32 §1): the overview (/stock: levels, low stock; the manager's items and
purchase value), write-offs (/stock/write-offs, the bar's: broken, expired, a staff drink),
deliveries (/stock/deliveries), the stocktake (/stock/count: a count per item, each difference a
movement), recipes (/stock/recipes: what one of a product takes) and the report (/stock/report, with
its CSV and .xlsx the way /reports exports). What costs money is the manager's (stock.manage).

Quantities are typed in the item's unit ("1,5" l, "24" ks) and kept in thousandths; prices in
euros ("12,50") and kept in cents. Bad input is a 400 with the form and its error, a refusal a 409,
each in the visitor's language, and neither changes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.euros import VAT_RATES, parse_euros
from broker.domain.refusals import Refusal
from broker.domain.stock import rules
from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.hall.read_models import HallReads
from broker.stock.reads import StockReport
from broker.stock.stock import (
    MAX_NAME,
    MAX_NOTE,
    AddStockItem,
    CountStock,
    RecordDelivery,
    ReturnToStock,
    SetRecipe,
    UpdateStockItem,
    WriteOffStock,
)
from dashboard.access import allows
from dashboard.api.deps import Hub, IdPath
from dashboard.web import i18n
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.pages_reports import csv_bytes, xlsx_bytes
from dashboard.web.request_text import refusal, translated
from dashboard.web.table_page import speaking
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/stock")
# The manager's menu; the bar reaches the stock from /bills (no room in its top bar at 1280 px).
NAV = [NavLink("/stock", N_("Stock"), role="manager", order=65)]
Name = Annotated[str, Form(max_length=MAX_NAME + 40)]
Short = Annotated[str, Form(max_length=40)]
Note = Annotated[str, Form(max_length=MAX_NOTE + 40)]
Key = Annotated[str, Form(max_length=80)]

UNIT_LABELS = {"piece": N_("pieces (ks)"), "litre": N_("litres (l)"), "kg": N_("kilograms (kg)")}
REASON_LABELS = {"broken": N_("Broken"), "expired": N_("Expired"), "staff_drink": N_("Staff drink"), "other": N_("Other")}
KIND_LABELS = {
    "sale": N_("Sale"),
    "void": N_("Void"),
    "return": N_("Returned to stock"),
    "delivery": N_("Delivery"),
    "write_off": N_("Write-off"),
    "stocktake": N_("Stocktake difference"),
}
STATE_LABELS = {"ok": N_("in stock"), "low": N_("running low"), "negative": N_("below zero")}
BAD_QUANTITY = N_("Give the quantity as a number, e.g. 1 or 0,5 (at most 3 decimals).")


def _words(request: Request) -> dict[str, Any]:
    lang = i18n.lang_of(request)

    def unit(u: str) -> str:
        return rules.UNIT_WORDS.get(u, (u, u))[0 if lang == "sk" else 1]

    def qty(milli: int) -> str:
        return rules.quantity_text(milli, lang)

    return {
        "unit_word": unit,
        "qty": qty,
        "unit_labels": {k: gettext(v) for k, v in UNIT_LABELS.items()},
        "reason_labels": {k: gettext(v) for k, v in REASON_LABELS.items()},
        "kind_labels": {k: gettext(v) for k, v in KIND_LABELS.items()},
        "state_labels": {k: gettext(v) for k, v in STATE_LABELS.items()},
        "rates": VAT_RATES,
        "form": {},
        "form_error": None,
    }


def _page(request: Request, hub: HubFacade, user: Staff, template: str, status: int = 200, **extra: Any) -> Response:
    reads = hub.reads
    manager = allows(user.role, "stock.manage")
    context: dict[str, Any] = {"items": reads.stock.items(), "manager": manager, **_words(request)}
    if template == "stock.html":
        context["sales"] = reads.stock.movements(kinds=("sale",), limit=20) if manager else []
    elif template == "stock_write_offs.html":
        context["moves"] = reads.stock.movements(kinds=("write_off",), limit=50)
    elif template == "stock_deliveries.html":
        context["moves"] = reads.stock.movements(kinds=("delivery",), limit=50)
    elif template == "stock_count.html":
        context["counts"] = reads.stock.counts()
    elif template == "stock_recipes.html":
        context["products"] = reads.till.products()
        context["recipes"] = reads.stock.recipes()
    context.update(extra)
    return render(request, template, context, status=status)


def _refused(
    request: Request, hub: HubFacade, user: Staff, template: str, error: Refusal | str, form: dict[str, Any], status: int
) -> Response:
    message = refusal(request, error) if isinstance(error, Refusal) else error
    return _page(request, hub, user, template, status, form=form, form_error=message)


def _quantity(text: str, *, low: int = 1) -> int | None:
    return rules.parse_quantity(text, low=low)


# --- the overview and the items -------------------------------------------------------------


@router.get("")
def stock_page(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.view"))]) -> Response:
    return _page(request, hub, user, "stock.html")


@router.post("/items", dependencies=[Depends(verify_csrf)])
def add_item(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("stock.manage"))],
    name: Name = "",
    unit: Short = "piece",
    threshold: Short = "0",
) -> Response:
    form = {"name": name, "unit": unit, "threshold": threshold, "for": 0}
    with speaking(request):
        limit = _quantity(threshold, low=0)
        if limit is None:
            return _refused(request, hub, user, "stock.html", translated(request, BAD_QUANTITY), form, 400)
        if unit not in rules.UNITS:
            return _refused(request, hub, user, "stock.html", translated(request, N_("The unit is one of: piece, litre, kg.")), form, 400)
        try:
            hub.execute(AddStockItem(name=name, unit=unit, threshold_milli=limit, actor=user.username))
        except ServiceError as e:
            return _refused(request, hub, user, "stock.html", e, form, _status(e))
        flash(request, gettext("Stock item added: %(item)s") % {"item": " ".join(name.split())}, "ok")
    return RedirectResponse("/stock", status_code=303)


@router.post("/items/{item_id}", dependencies=[Depends(verify_csrf)])
def change_item(
    item_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("stock.manage"))],
    name: Name = "",
    threshold: Short = "",
    active: Short = "",
) -> Response:
    form = {"name": name, "threshold": threshold, "active": active, "for": item_id}
    with speaking(request):
        limit = _quantity(threshold, low=0)
        if limit is None:
            return _refused(request, hub, user, "stock.html", translated(request, BAD_QUANTITY), form, 400)
        try:
            hub.execute(UpdateStockItem(item=item_id, name=name, threshold_milli=limit, active=active == "1", actor=user.username))
        except ServiceError as e:
            return _refused(request, hub, user, "stock.html", e, form, _status(e))
        flash(request, gettext("Stock item saved."), "ok")
    return RedirectResponse("/stock", status_code=303)


@router.post("/returns", dependencies=[Depends(verify_csrf)])
def return_to_stock(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("stock.manage"))],
    tab_item: Short = "",
    reason: Note = "",
) -> Response:
    form = {"tab_item": tab_item, "reason": reason}
    with speaking(request):
        if not tab_item.isdigit() or not 1 <= int(tab_item) <= 2**31 - 1:
            return _refused(request, hub, user, "stock.html", translated(request, N_("There is no such item on a tab.")), form, 400)
        try:
            hub.execute(ReturnToStock(tab_item=int(tab_item), reason=reason, actor=user.username))
        except ServiceError as e:
            return _refused(request, hub, user, "stock.html", e, form, _status(e))
        flash(request, gettext("The stock went back."), "ok")
    return RedirectResponse("/stock", status_code=303)


# --- write-offs (the bar's) and deliveries (the manager's) -------------------------------------


@router.get("/write-offs")
def write_offs_page(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.view"))]) -> Response:
    return _page(request, hub, user, "stock_write_offs.html")


@router.post("/write-offs", dependencies=[Depends(verify_csrf)])
def write_off(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("stock.view"))],
    item: Short = "",
    quantity: Short = "",
    reason: Short = "",
    note: Note = "",
    form_key: Key = "",
) -> Response:
    form = {"item": item, "quantity": quantity, "reason": reason, "note": note}
    template = "stock_write_offs.html"
    with speaking(request):
        milli = _quantity(quantity)
        if not item.isdigit() or not 1 <= int(item) <= 2**31 - 1:
            return _refused(request, hub, user, template, translated(request, N_("Choose a stock item.")), form, 400)
        if milli is None:
            return _refused(request, hub, user, template, translated(request, BAD_QUANTITY), form, 400)
        try:
            hub.execute(
                WriteOffStock(
                    item=int(item), quantity_milli=milli, reason=reason, note=note, form_key=form_key or None, actor=user.username
                )
            )
        except ServiceError as e:
            return _refused(request, hub, user, template, e, form, _status(e))
        flash(request, gettext("Written off."), "ok")
    return RedirectResponse("/stock/write-offs", status_code=303)


def _status(e: ServiceError) -> int:
    """A refusal's status: 404 for what is not there (a stale page's item), else 409."""
    return 404 if isinstance(e, NotFound) else 409


@router.get("/deliveries")
def deliveries_page(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))]) -> Response:
    return _page(request, hub, user, "stock_deliveries.html")


@router.post("/deliveries", dependencies=[Depends(verify_csrf)])
def deliver(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("stock.manage"))],
    item: Short = "",
    quantity: Short = "",
    price: Short = "",
    vat: Short = "23",
    includes_vat: Short = "",
    supplier: Name = "",
    note: Note = "",
    form_key: Key = "",
) -> Response:
    form = {
        "item": item,
        "quantity": quantity,
        "price": price,
        "vat": vat,
        "includes_vat": includes_vat,
        "supplier": supplier,
        "note": note,
    }
    template = "stock_deliveries.html"
    with speaking(request):
        milli = _quantity(quantity)
        cents = parse_euros(price, low=0)
        if not item.isdigit() or not 1 <= int(item) <= 2**31 - 1:
            return _refused(request, hub, user, template, translated(request, N_("Choose a stock item.")), form, 400)
        if milli is None:
            return _refused(request, hub, user, template, translated(request, BAD_QUANTITY), form, 400)
        if cents is None:
            return _refused(request, hub, user, template, translated(request, N_("Give the price in euros, e.g. 12,50.")), form, 400)
        if not vat.isdigit() or int(vat) not in VAT_RATES:
            message = translated(request, N_("VAT is one of %(rates)s %%."), rates=", ".join(str(r) for r in VAT_RATES))
            return _refused(request, hub, user, template, message, form, 400)
        try:
            hub.execute(
                RecordDelivery(
                    item=int(item),
                    quantity_milli=milli,
                    price_cents=cents,
                    vat_percent=int(vat),
                    includes_vat=includes_vat == "1",
                    supplier=supplier,
                    note=note,
                    form_key=form_key or None,
                    actor=user.username,
                )
            )
        except ServiceError as e:
            return _refused(request, hub, user, template, e, form, _status(e))
        flash(request, gettext("Delivery recorded."), "ok")
    return RedirectResponse("/stock/deliveries", status_code=303)


# --- the stocktake ------------------------------------------------------------------------------


@router.get("/count")
def count_page(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))]) -> Response:
    return _page(request, hub, user, "stock_count.html")


@router.post("/count", dependencies=[Depends(verify_csrf)])
async def count(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))]) -> Response:
    """One field per item, `count-<id>`: an empty one was not counted; a count typed is compared."""
    data = await request.form()
    fields = {k: v for k, v in data.items() if isinstance(v, str)}
    form = {k: v for k, v in fields.items() if k.startswith("count-")} | {"note": fields.get("note", "")}
    template = "stock_count.html"
    with speaking(request):
        counts: list[tuple[int, int]] = []
        for key, value in form.items():
            if not key.startswith("count-") or not value.strip():
                continue
            item = key.removeprefix("count-")
            milli = _quantity(value, low=0)
            if not item.isdigit() or not 1 <= int(item) <= 2**31 - 1 or milli is None:
                return _refused(request, hub, user, template, translated(request, BAD_QUANTITY), form | {"bad": key}, 400)
            counts.append((int(item), milli))
        if not counts:
            return _refused(request, hub, user, template, translated(request, N_("Count at least one item.")), form, 400)
        note = fields.get("note", "")[:MAX_NOTE]
        once = fields.get("form_key", "") or None
        try:
            hub.execute(CountStock(counts=tuple(counts), note=note, form_key=once, actor=user.username))
        except ServiceError as e:
            return _refused(request, hub, user, template, e, form, _status(e))
        flash(request, gettext("Stocktake saved: %(num)d items counted.") % {"num": len(counts)}, "ok")
    return RedirectResponse("/stock/count", status_code=303)


# --- recipes ----------------------------------------------------------------------------------


@router.get("/recipes")
def recipes_page(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))]) -> Response:
    return _page(request, hub, user, "stock_recipes.html")


@router.post("/recipes/{product_id}", dependencies=[Depends(verify_csrf)])
async def set_recipe(product_id: IdPath, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))]) -> Response:
    """Lines as `item-<n>` (a stock item's id, empty: no line) and `qty-<n>` (in its unit)."""
    data = await request.form()
    fields = {k: v for k, v in data.items() if isinstance(v, str)}
    template = "stock_recipes.html"
    with speaking(request):
        lines: list[tuple[int, int]] = []
        for n in range(12):
            item, qty = fields.get(f"item-{n}", "").strip(), fields.get(f"qty-{n}", "").strip()
            if not item:
                continue
            milli = rules.parse_quantity(qty, high=rules.MAX_PORTION_MILLI)
            if not item.isdigit() or not 1 <= int(item) <= 2**31 - 1 or milli is None:
                return _refused(request, hub, user, template, translated(request, BAD_QUANTITY), fields | {"for": product_id}, 400)
            lines.append((int(item), milli))
        try:
            hub.execute(SetRecipe(product=product_id, lines=tuple(lines), actor=user.username))
        except ServiceError as e:
            return _refused(request, hub, user, template, e, fields | {"for": product_id}, _status(e))
        flash(request, gettext("Recipe saved."), "ok")
    return RedirectResponse("/stock/recipes", status_code=303)


# --- the report and its exports ------------------------------------------------------------------

Year = Annotated[int | None, Query(ge=2000, le=2100)]


def _year(reads: HallReads, year: int | None) -> int:
    return year or reads.today().year


def _eur(cents: int) -> Decimal:
    return Decimal(cents).scaleb(-2)


def _qty(milli: int) -> Decimal | int:
    d = Decimal(milli).scaleb(-3)
    return int(d) if d == d.to_integral_value() else d.normalize()


def _unit_words(request: Request) -> Callable[[str], str]:
    unit: Callable[[str], str] = _words(request)["unit_word"]
    return unit


def _translator(request: Request) -> Callable[[str], str]:
    def t(message: str) -> str:
        return translated(request, message)

    return t


def _sheet_value(r: StockReport, request: Request) -> list[list[Any]]:
    t = _translator(request)
    rows: list[list[Any]] = [
        [t(N_("Stock item")), t(N_("Unit")), t(N_("Level")), t(N_("Purchase price excl. VAT (€)")), t(N_("Value (€)"))]
    ]
    unit = _unit_words(request)
    rows += [[i.name, unit(i.unit), _qty(i.level_milli), _eur(i.unit_cost_cents), _eur(i.value_cents)] for i in r.items if i.active]
    rows.append([t(N_("Total")), "", "", "", _eur(r.value_cents)])
    return rows


def _sheet_margins(r: StockReport, request: Request) -> list[list[Any]]:
    t = _translator(request)
    sk = i18n.lang_of(request) == "sk"
    head = [
        N_("Month"),
        N_("Product"),
        N_("Sold"),
        N_("Revenue incl. VAT (€)"),
        N_("Revenue excl. VAT (€)"),
        N_("Cost (€)"),
        N_("Margin (€)"),
        N_("Margin (%)"),
    ]
    return [[t(h) for h in head]] + [
        [
            m.month,
            m.name if sk else (m.name_en or m.name),
            m.quantity,
            _eur(m.revenue_gross_cents),
            _eur(m.revenue_net_cents),
            _eur(m.cost_cents),
            _eur(m.margin_cents),
            "" if m.margin_percent is None else m.margin_percent,
        ]
        for m in r.margins
    ]


def _sheet_shrinkage(r: StockReport, request: Request) -> list[list[Any]]:
    t = _translator(request)
    rows: list[list[Any]] = [[t(N_("Stock item")), t(N_("Unit")), t(N_("Difference")), t(N_("Value (€)"))]]
    unit = _unit_words(request)
    rows += [[s.name, unit(s.unit), _qty(s.quantity_milli), _eur(s.value_cents)] for s in r.shrinkage]
    return rows


EXPORTS: dict[str, tuple[str, Callable[[StockReport, Request], list[list[Any]]]]] = {
    "value": (N_("Stock value"), _sheet_value),
    "margins": (N_("Margins"), _sheet_margins),
    "shrinkage": (N_("Shrinkage"), _sheet_shrinkage),
}


@router.get("/report")
def report_page(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))], year: Year = None) -> Response:
    r = hub.reads.stock.report(_year(hub.reads, year))
    exports = {name: gettext(title) for name, (title, _) in EXPORTS.items()}
    return _page(request, hub, user, "stock_report.html", report=r, exports=exports)


@router.get("/report.xlsx")
def report_xlsx(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))], year: Year = None) -> Response:
    r = hub.reads.stock.report(_year(hub.reads, year))
    sheets = [(translated(request, title), make(r, request)) for title, make in EXPORTS.values()]
    return Response(
        xlsx_bytes(sheets),
        media_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        headers={"Content-Disposition": f'attachment; filename="lavos-stock-{r.year}.xlsx"'},
    )


@router.get("/report/{export}.csv")
def report_csv(
    request: Request, export: str, hub: Hub, user: Annotated[Staff, Depends(page_can("stock.manage"))], year: Year = None
) -> Response:
    if export not in EXPORTS:
        raise HTTPException(
            404,
            translated(request, N_("There is no %(name)s export; choose one of: %(names)s."), name=export[:40], names=", ".join(EXPORTS)),
        )
    r = hub.reads.stock.report(_year(hub.reads, year))
    return Response(
        csv_bytes(EXPORTS[export][1](r, request)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="lavos-stock-{export}-{r.year}.csv"'},
    )
