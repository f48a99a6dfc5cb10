"""The product list (/products), the manager's: add, change (name, English name, price incl. VAT,
VAT rate, category), deactivate. A product an item refers to is never deleted; a price change
never changes items already on tabs (they copied name, price and VAT). Linked from the bills page.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from broker.accounts.staff import Staff
from broker.domain.euros import PRODUCT_CATEGORIES, VAT_RATES, parse_euros
from broker.domain.refusals import Refusal
from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.till.tabs import MAX_NAME, MAX_PRICE_CENTS, AddProduct, UpdateProduct
from dashboard.api.deps import Hub, IdPath
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_, gettext
from dashboard.web.request_text import refusal, translated
from dashboard.web.tab_parts import category_word
from dashboard.web.table_page import speaking
from dashboard.web.templating import flash, render

router = APIRouter(prefix="/products")
Name = Annotated[str, Form(max_length=MAX_NAME + 40)]
Short = Annotated[str, Form(max_length=40)]


def _cents(text: str) -> int | None:
    """'2,50' / '2.50' / '3' euros → cents; None when not an amount from 0,00 € to the limit."""
    return parse_euros(text, low=0, high=MAX_PRICE_CENTS)


def _page(request: Request, hub: HubFacade, status: int = 200, **extra: Any) -> Response:
    return render(
        request,
        "products.html",
        {
            "products": hub.reads.till.products(),
            "categories": PRODUCT_CATEGORIES,
            "rates": VAT_RATES,
            "category_word": category_word,
            "form": {},
            "form_error": None,
            "error_for": None,
            **extra,
        },
        status=status,
    )


@router.get("")
def products_page(request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("products.edit"))]) -> Response:
    return _page(request, hub)


def _checked(request: Request, price: str, vat: str, category: str) -> tuple[int, int] | str:
    cents = _cents(price)
    if cents is None:
        return translated(request, N_("Give the price in euros incl. VAT, e.g. 2,50 (up to %(max)s)."), max="1 000,00 €")
    if not vat.isdigit() or int(vat) not in VAT_RATES:
        return translated(request, N_("VAT is one of %(rates)s %%."), rates=", ".join(str(r) for r in VAT_RATES))
    if category not in PRODUCT_CATEGORIES:
        return translated(request, N_("There is no such category."))
    return cents, int(vat)


def _refused(request: Request, hub: HubFacade, error: Refusal | str, form: dict[str, Any], error_for: int | None, status: int) -> Response:
    message = refusal(request, error) if isinstance(error, Refusal) else error
    return _page(request, hub, status, form=form, form_error=message, error_for=error_for)


@router.post("", dependencies=[Depends(verify_csrf)])
def add_product(
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("products.edit"))],
    name: Name = "",
    name_en: Name = "",
    price: Short = "",
    vat: Short = "23",
    category: Short = "drinks",
) -> Response:
    form = {"name": name, "name_en": name_en, "price": price, "vat": vat, "category": category}
    with speaking(request):
        checked = _checked(request, price, vat, category)
        if isinstance(checked, str):
            return _refused(request, hub, checked, form, 0, 400)
        try:
            hub.execute(
                AddProduct(
                    name=name, name_en=name_en, price_cents=checked[0], vat_percent=checked[1], category=category, actor=user.username
                )
            )
        except ServiceError as e:
            return _refused(request, hub, e, form, 0, 409)
        flash(request, gettext("Product added: %(product)s") % {"product": " ".join(name.split())}, "ok")
    return RedirectResponse("/products", status_code=303)


@router.post("/{product_id}", dependencies=[Depends(verify_csrf)])
def change_product(
    product_id: IdPath,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("products.edit"))],
    name: Name = "",
    name_en: Name = "",
    price: Short = "",
    vat: Short = "",
    category: Short = "",
    active: Short = "",
) -> Response:
    form = {"name": name, "name_en": name_en, "price": price, "vat": vat, "category": category, "active": active}
    with speaking(request):
        checked = _checked(request, price, vat, category)
        if isinstance(checked, str):
            return _refused(request, hub, checked, form, product_id, 400)
        change = UpdateProduct(
            product_id=product_id,
            name=name,
            name_en=name_en,
            price_cents=checked[0],
            vat_percent=checked[1],
            category=category,
            active=active == "1",
            actor=user.username,
        )
        try:
            hub.execute(change)
        except NotFound:
            raise
        except ServiceError as e:
            return _refused(request, hub, e, form, product_id, 409)
        flash(request, gettext("Product saved; tabs keep the price they were given."), "ok")
    return RedirectResponse("/products", status_code=303)
