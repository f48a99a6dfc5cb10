"""Issue 32 §1, the stock's pages and API in Slovak: the bar's product buttons say "posledné 3", the
overview, write-offs (the bar's), deliveries, the stocktake, recipes and the report with its CSV and
.xlsx (the manager's); bad input is a clear Slovak 4xx and changes nothing. The writes' rules run on
both databases in tests/broker/stock; these test the pages, on SQLite, over a hub without MQTT."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from broker.hall.facade import HubFacade
from broker.stock.stock import AddStockItem, RecordDelivery, SetRecipe
from broker.storage.models import StockMovement
from broker.till.tabs import AddProduct, OpenWalkInTab
from tests.dashboard.conftest import MANAGER, STAFF, FakeClock, add_users, sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import started_hub
from tests.support.web import bound_app

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from tests.dashboard.pages_client import Pages

pytestmark = sqlite_only


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(db_url: str, clock: FakeClock) -> Iterator[Hub]:
    with started_hub(db_url, clock=clock, watchdog=False) as hub:
        yield hub


def _beer(hub: Any, bottles: int = 4) -> tuple[int, int]:
    item = hub.execute(AddStockItem(name="Bažant fľaša", unit="piece", threshold_milli=2000, actor=MANAGER))
    product = hub.execute(
        AddProduct(name="Bažant 0,5 l", name_en="Bažant 0.5 l", price_cents=250, vat_percent=23, category="drinks", actor=MANAGER)
    )
    hub.execute(SetRecipe(product=product, lines=((item, 1000),), actor=MANAGER))
    hub.execute(
        RecordDelivery(item=item, quantity_milli=bottles * 1000, price_cents=492, vat_percent=23, supplier="Heineken SK", actor=MANAGER)
    )
    return item, product


def _moves(hub: Any) -> int:
    with hub.store.reader() as db:
        return int(db.scalar(select(func.count()).select_from(StockMovement)) or 0)


def _level(hub: Any, item: int) -> int:
    view = HubFacade(hub).reads.stock.item(item)
    assert view is not None
    return view.level_milli


def _error(html: str) -> str:
    m = re.search(r'<p class="error-box" role="alert" id="stock-error">([^<]*)</p>', html)
    assert m, html[:3000]
    return m.group(1)


def test_the_bar_buttons_say_how_many_are_left_and_sell_on(pages: Pages) -> None:
    hub = pages.service
    item, product = _beer(hub, bottles=4)
    tab = hub.execute(OpenWalkInTab(actor=STAFF))
    page = pages.page(f"/tabs/{tab}", client=pages.staff)
    assert f'data-product="{product}"' in page and "posledné" not in page  # 4 left: nothing said
    for left in (3, 2, 1, 0, -1):
        r = pages.post(f"/tabs/{tab}/items", {"product_id": product, "quantity": "1"}, client=pages.staff)
        assert r.status_code == 303, r.text[:500]
        page = pages.page(f"/tabs/{tab}", client=pages.staff)
        said = re.search(rf'data-product="{product}">.*?</button>', page, re.S)
        assert said is not None
        expected = f"posledné {left}" if left > 0 else f"{left} na sklade"
        assert expected in said.group(0), (left, said.group(0))
    assert _level(hub, item) == -1000


def test_the_stock_pages_in_slovak_and_who_sees_what(pages: Pages) -> None:
    hub = pages.service
    _beer(hub)
    overview = pages.page("/stock")
    assert "Sklad" in overview and "Bažant fľaša" in overview and "Pridať skladovú položku" in overview
    staff = pages.page("/stock", client=pages.staff)
    assert "Bažant fľaša" in staff and "Pridať skladovú položku" not in staff and "Dodávky" not in staff
    for path in ("/stock/deliveries", "/stock/count", "/stock/recipes", "/stock/report"):
        assert "Sklad" in pages.page(path)
        pages.refused_to_others("GET", path)
    assert "Odpis" in pages.page("/stock/write-offs", client=pages.staff)


def test_a_write_off_a_delivery_and_a_stocktake_through_the_pages(pages: Pages) -> None:
    hub = pages.service
    item, _ = _beer(hub, bottles=4)
    r = pages.post("/stock/write-offs", {"item": item, "quantity": "1", "reason": "broken", "note": "spadla"}, client=pages.staff)
    assert r.status_code == 303
    assert "Odpísané" in pages.page(r.headers["location"], client=pages.staff)
    r = pages.post("/stock/deliveries", {"item": item, "quantity": "24", "price": "18,00", "vat": "23", "supplier": "Heineken SK"})
    assert "Dodávka zapísaná" in pages.follow(r)  # includes_vat unticked: the price is excl. VAT
    [d] = [m for m in HubFacade(hub).reads.stock.movements(kinds=("delivery",)) if m.quantity_milli == 24_000]
    assert (d.price_net_cents, d.price_gross_cents) == (1800, 2214)
    assert _level(hub, item) == 27_000
    r = pages.post("/stock/count", {f"count-{item}": "25", "note": "december"})
    assert "Inventúra uložená" in pages.follow(r)
    assert _level(hub, item) == 25_000
    count = pages.page("/stock/count")
    assert "december" in count


def test_bad_input_is_a_slovak_4xx_and_changes_nothing(pages: Pages) -> None:
    hub = pages.service
    item, product = _beer(hub)
    before = _moves(hub), _level(hub, item)
    cases: list[tuple[str, dict[str, Any], Any, int, str]] = [
        ("/stock/write-offs", {"item": item, "quantity": "1,2345", "reason": "broken"}, pages.staff, 400, "Zadajte množstvo"),
        ("/stock/write-offs", {"item": item, "quantity": "1", "reason": "stolen"}, pages.staff, 409, "Vyberte, prečo"),
        ("/stock/write-offs", {"item": item, "quantity": "1", "reason": "other", "note": ""}, pages.staff, 409, "Napíšte, čo sa stalo"),
        ("/stock/write-offs", {"item": "99999", "quantity": "1", "reason": "broken"}, pages.staff, 404, "Taká skladová položka neexistuje"),
        ("/stock/write-offs", {"item": "x", "quantity": "1", "reason": "broken"}, pages.staff, 400, "Vyberte skladovú položku"),
        ("/stock/deliveries", {"item": item, "quantity": "6", "price": "12,345", "supplier": "Metro"}, pages.manager, 400, "Zadajte cenu"),
        ("/stock/deliveries", {"item": item, "quantity": "6", "price": "12", "supplier": "M"}, pages.manager, 409, "Uveďte dodávateľa"),
        (
            "/stock/deliveries",
            {"item": item, "quantity": "6", "price": "12", "vat": "7", "supplier": "Metro"},
            pages.manager,
            400,
            "DPH je",
        ),
        ("/stock/count", {f"count-{item}": "-3"}, pages.manager, 400, "Zadajte množstvo"),
        ("/stock/count", {f"count-{item}": ""}, pages.manager, 400, "Spočítajte aspoň jednu položku"),
        ("/stock/count", {"count-99999": "3"}, pages.manager, 404, "Taká skladová položka neexistuje"),
        ("/stock/items", {"name": "Bažant FĽAŠA", "unit": "piece", "threshold": "1"}, pages.manager, 409, "Skladová položka s názvom"),
        ("/stock/items", {"name": "Rum", "unit": "barrel", "threshold": "1"}, pages.manager, 400, "Jednotka je"),
        ("/stock/returns", {"tab_item": "99999", "reason": "neotvorená"}, pages.manager, 404, "Taká položka na účte neexistuje"),
        (f"/stock/recipes/{product}", {"item-0": str(item), "qty-0": "0"}, pages.manager, 400, "Zadajte množstvo"),
    ]
    for path, data, client, status, said in cases:
        r = pages.post(path, data, client=client)
        assert r.status_code == status, (path, data, r.status_code, r.text[:300])
        assert said in _error(r.text), (path, _error(r.text))
    assert (_moves(hub), _level(hub, item)) == before
    assert (
        pages.post("/stock/deliveries", {"item": item, "quantity": "6", "price": "12", "supplier": "Metro"}, client=pages.staff).status_code
        == 403
    )


def test_the_report_and_its_exports(pages: Pages) -> None:
    hub = pages.service
    item, product = _beer(hub, bottles=4)  # 4,92 € incl. 23 %: 1,00 € a bottle excl.
    tab = hub.execute(OpenWalkInTab(actor=STAFF))
    pages.post(f"/tabs/{tab}/items", {"product_id": product, "quantity": "2"}, client=pages.staff)
    pages.post("/stock/count", {f"count-{item}": "1"})  # 2 expected, 1 counted: a bottle missing
    page = pages.page("/stock/report?year=2026")
    assert "Marža podľa produktu a mesiaca" in page and "2026-11" in page
    rows = list(
        csv.reader(io.StringIO(pages.manager.get("/stock/report/margins.csv?year=2026").content.decode("utf-8-sig")), delimiter=";")
    )
    # 2 × 2,50 € = 5,00 € incl. VAT, 4,07 € excl.; cost 2 × 1,00 €; margin 2,07 € (51 %)
    assert rows[1] == ["2026-11", "Bažant 0,5 l", "2", "5,00", "4,07", "2,00", "2,07", "51"]
    shrink = list(
        csv.reader(io.StringIO(pages.manager.get("/stock/report/shrinkage.csv?year=2026").content.decode("utf-8-sig")), delimiter=";")
    )
    assert shrink[0] == ["Skladová položka", "Jednotka", "Rozdiel", "Hodnota (€)"]
    assert shrink[1] == ["Bažant fľaša", "ks", "-1", "-1,00"]
    xlsx = pages.manager.get("/stock/report.xlsx?year=2026")
    assert xlsx.status_code == 200 and xlsx.content[:2] == b"PK"
    assert pages.manager.get("/stock/report/nothing.csv").status_code == 404


def test_the_api_moves_stock_and_refuses_bad_input(service: Hub, clock: FakeClock) -> None:
    from tests.dashboard.conftest import PASSWORD, basic

    add_users(service)
    item, product = _beer(service)
    with TestClient(bound_app(service, pages=False)) as client:
        manager, staff = basic(MANAGER, PASSWORD), basic(STAFF, PASSWORD)
        r = client.post("/api/stock/write-offs", json={"item": item, "quantity_milli": 1000, "reason": "expired"}, headers=staff)
        assert r.status_code == 201, r.text
        assert (
            client.post(
                "/api/stock/deliveries", json={"item": item, "quantity_milli": 1000, "price_cents": 1, "supplier": "Metro"}, headers=staff
            ).status_code
            == 403
        )
        for body in (
            {"item": item, "quantity_milli": 0, "reason": "expired"},
            {"item": item, "quantity_milli": 1.5, "reason": "expired"},
            {"item": item, "quantity_milli": 1000, "reason": "gone"},
        ):
            assert client.post("/api/stock/write-offs", json=body, headers=staff).status_code == 422
        assert (
            client.post(
                "/api/stock/write-offs", json={"item": 99999, "quantity_milli": 1000, "reason": "expired"}, headers=staff
            ).status_code
            == 404
        )
        items = client.get("/api/stock/items", headers=staff).json()
        assert items[0]["level_milli"] == 3000 and items[0]["unit_cost_cents"] == 0  # purchase prices: the manager's
        assert client.get("/api/stock/items", headers=manager).json()[0]["unit_cost_cents"] == 100
        r = client.put(f"/api/stock/recipes/{product}", json={"lines": [{"item": item, "quantity_milli": 2000}]}, headers=manager)
        assert r.status_code == 200 and r.json()[0]["quantity_milli"] == 2000, r.text
        r = client.post("/api/stock/counts", json={"counts": [{"item": item, "counted_milli": 5000}]}, headers=manager)
        assert r.status_code == 201, r.text
        assert (r.json()["items"], r.json()["moved"]) == (1, 1)
        assert client.get("/api/stock/report?year=2026", headers=manager).json()["value_cents"] == 500
        assert [m["kind"] for m in client.get("/api/stock/movements", headers=manager).json()] == ["stocktake", "write_off", "delivery"]
