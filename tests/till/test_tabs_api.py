"""Tabs over the real hub and API, on SQLite and PostgreSQL: items, voids, walk-ins, merge, split,
the product list; every refusal changes nothing (the rows are compared before and after)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.storage.models import AuditEntry, Payment, Product, Tab, TabItem
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


def _rows(api: Any) -> list[list[Any]]:
    """Everything the tabs part writes, as plain tuples."""
    with api.service.store.reader() as db:
        tabs = [(t.id, t.table_id, t.session_id, t.label, t.merged_into, t.split) for t in db.scalars(select(Tab).order_by(Tab.id))]
        items = [
            (i.id, i.tab_id, i.name, i.quantity, i.unit_cents, i.vat_percent, i.voided_at, i.void_reason)
            for i in db.scalars(select(TabItem).order_by(TabItem.id))
        ]
        products = [
            (p.id, p.name, p.price_cents, p.vat_percent, p.category, p.active) for p in db.scalars(select(Product).order_by(Product.id))
        ]
        audit = db.scalars(select(AuditEntry.id).order_by(AuditEntry.id)).all()
        return [tabs, items, products, list(audit)]


def _product(api: Any, name: str) -> dict[str, Any]:
    return next(p for p in api.ok("GET", "/api/products") if p["name"] == name)


def _game(api: Any, table: str = "pool-01") -> tuple[int, int]:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": table})["id"]
    tab = api.ok("GET", f"/api/sessions/{sid}/tab")
    return sid, tab["id"]


def test_the_product_list_is_seeded_from_the_venue_and_drinks(api: Api) -> None:
    names = {p["name"]: p for p in api.ok("GET", "/api/products")}
    topping = names["Prísada na pizzu navyše"]
    assert (topping["price_cents"], topping["category"], topping["vat_percent"]) == (
        60,
        "pizza_toppings",
        23,
    )  # the venue's rate, as its extras
    assert names["Krabica na pizzu so sebou"]["price_cents"] == 40
    assert names["Štartovné na turnaj (člen)"]["price_cents"] == 300 and names["Štartovné na turnaj (nečlen)"]["price_cents"] == 500
    assert names["Pivo 0,5 l"]["vat_percent"] == 23 and names["Pivo 0,5 l"]["category"] == "drinks"


def test_two_drinks_on_a_game_one_voided_and_the_vat_per_rate(api: Api) -> None:
    sid, tab = _game(api)
    beer = _product(api, "Pivo 0,5 l")
    topping = api.ok(
        "POST", "/api/products", 201, as_manager=True, json={"name": "Toast", "price_cents": 60, "vat_percent": 19, "category": "food"}
    )
    t = api.ok("POST", f"/api/tabs/{tab}/items", 201, json={"product_id": beer["id"], "quantity": 2})
    beer_item = t["item_id"]
    api.ok("POST", f"/api/tabs/{tab}/items", 201, json={"product_id": topping["id"], "quantity": 1})
    api.clock.advance(minutes=60)
    t = api.ok("POST", f"/api/tabs/{tab}/items/{beer_item}/void", json={"reason": "zadané omylom"})
    item = next(i for s in t["sources"] for i in s["items"] if i["id"] == beer_item)
    assert item["voided_by"] == "jana" and item["void_reason"] == "zadané omylom"
    assert [x["description"] for x in t["lines"] if x["key"].startswith("item:")] == ["Toast"]
    time = sum(x["amount_cents"] for x in t["lines"] if x["category"] == "table_time")
    assert t["total_cents"] == time + 60 and t["status"] == "open" and t["owed_cents"] == t["total_cents"]
    assert {v["vat_percent"]: v["gross_cents"] for v in t["vat"]} == {23: time, 19: 60}
    with api.service.store.reader() as db:
        audit = db.scalars(select(AuditEntry).where(AuditEntry.action == "tab.item_void")).one()
        assert (audit.actor, audit.reason, audit.target) == ("jana", "zadané omylom", f"tab:{tab}")
    api.ok("POST", f"/api/sessions/{sid}/stop")


def test_a_price_change_does_not_change_an_item_already_on_a_tab(api: Api) -> None:
    _, tab = _game(api)
    beer = _product(api, "Pivo 0,5 l")
    api.ok("POST", f"/api/tabs/{tab}/items", 201, json={"product_id": beer["id"]})
    changed = api.ok("PATCH", f"/api/products/{beer['id']}", as_manager=True, json={"price_cents": 290})
    assert changed["price_cents"] == 290 and changed["used"] is True
    t = api.ok("GET", f"/api/tabs/{tab}")
    assert [i["unit_cents"] for s in t["sources"] for i in s["items"]] == [250]


def test_a_double_submitted_item_is_one_item(api: Api) -> None:
    _, tab = _game(api)
    beer = _product(api, "Pivo 0,5 l")
    body = {"product_id": beer["id"], "quantity": 1, "request_id": "form-key-123456"}
    first = api.ok("POST", f"/api/tabs/{tab}/items", 201, json=body)
    again = api.ok("POST", f"/api/tabs/{tab}/items", 201, json=body)
    assert first["item_id"] == again["item_id"] and len(again["sources"][0]["items"]) == 1


@pytest.mark.parametrize("quantity", [0, -1, 1.5, "2", 100, 10**12, None, "x"])
def test_bad_quantities_are_refused_and_change_nothing(api: Api, quantity: Any) -> None:
    _, tab = _game(api)
    beer = _product(api, "Pivo 0,5 l")
    before = _rows(api)
    r = api.client.post(f"/api/tabs/{tab}/items", headers=api.staff, json={"product_id": beer["id"], "quantity": quantity})
    assert r.status_code == 422
    assert _rows(api) == before


def test_refusals_change_nothing(api: Api) -> None:
    _sid, tab = _game(api)
    _, other = _game(api, "pool-02")
    beer = _product(api, "Pivo 0,5 l")
    item = api.ok("POST", f"/api/tabs/{tab}/items", 201, json={"product_id": beer["id"]})["item_id"]
    api.ok("PATCH", f"/api/products/{_product(api, 'Kofola 0,5 l')['id']}", as_manager=True, json={"active": False})
    kofola = next(p for p in api.ok("GET", "/api/products?all=true", as_manager=True) if p["name"] == "Kofola 0,5 l")
    before = _rows(api)
    assert "no longer sold" in api.refused("POST", f"/api/tabs/{tab}/items", 409, json={"product_id": kofola["id"]})
    assert api.refused("POST", f"/api/tabs/{tab}/items", 404, json={"product_id": 999999})
    assert api.refused("POST", f"/api/tabs/{other}/items/{item}/void", 404, json={"reason": "another tab's item"})
    assert api.refused("POST", f"/api/tabs/{tab}/items/{item}/void", 422, json={"reason": "x"})
    assert "itself" in api.refused("POST", f"/api/tabs/{tab}/merge", 409, json={"tab_id": tab})
    assert "still running" in api.refused("POST", f"/api/tabs/{tab}/split", 409, json={"mode": "equal", "parts": 2})
    assert api.refused("POST", f"/api/tabs/{tab}/split", 422, json={"mode": "amounts", "parts": 2})
    assert "not split" in api.refused("DELETE", f"/api/tabs/{tab}/split", 409)
    assert api.refused("POST", "/api/products", 409, as_manager=True, json={"name": "pivo 0,5 L", "price_cents": 100, "vat_percent": 23})
    assert api.refused("POST", "/api/products", 422, as_manager=True, json={"name": "Drahé", "price_cents": -1, "vat_percent": 23})
    assert api.refused("POST", "/api/products", 422, as_manager=True, json={"name": "Iné DPH", "price_cents": 1, "vat_percent": 20})
    assert api.refused("POST", "/api/products", 403, as_manager=False, json={"name": "Staff", "price_cents": 1, "vat_percent": 23})
    assert _rows(api) == before


def test_after_a_payment_only_a_manager_voids(api: Api) -> None:
    _, tab = _game(api)
    beer = _product(api, "Pivo 0,5 l")
    item = api.ok("POST", f"/api/tabs/{tab}/items", 201, json={"product_id": beer["id"]})["item_id"]
    api.ok("POST", f"/api/tabs/{tab}/items", 201, json={"product_id": beer["id"]})  # the void leaves a beer owed

    def _write(db: Any) -> None:
        db.add(Payment(tab_id=tab, method="cash", amount_cents=100, staff="jana", business_day=api.service.till.tabs.h.clock().date()))

    on_writer(api.service, _write)  # a payment as helper m2's part records it
    before = _rows(api)
    assert "only a manager" in api.refused("POST", f"/api/tabs/{tab}/items/{item}/void", 409, as_manager=False, json={"reason": "omyl"})
    assert _rows(api) == before
    api.ok("POST", f"/api/tabs/{tab}/items/{item}/void", as_manager=True, json={"reason": "omyl"})


def test_a_walk_in_merged_into_a_table_and_two_tables_split_equally(api: Api) -> None:
    sid1, tab1 = _game(api)
    sid2, tab2 = _game(api, "pool-02")
    beer = _product(api, "Pivo 0,5 l")
    walk = api.ok("POST", "/api/tabs", 201, json={"label": "Peter pri bare"})
    assert walk["table_id"] is None and walk["name"] == "Peter pri bare"
    api.ok("POST", f"/api/tabs/{walk['id']}/items", 201, json={"product_id": beer["id"], "quantity": 3})
    assert walk["id"] in [u["id"] for u in api.ok("GET", "/api/tabs")]
    api.clock.advance(minutes=45)
    api.ok("POST", f"/api/tabs/{tab1}/merge", json={"tab_id": walk["id"]})
    merged = api.ok("POST", f"/api/tabs/{tab1}/merge", json={"tab_id": tab2})
    assert [s["tab_id"] for s in merged["sources"]] == [tab1, tab2, walk["id"]]  # the tab, then the merged ones by id
    assert merged["total_cents"] == sum(s["total_cents"] for s in merged["sources"])
    before = _rows(api)
    assert "merged into" in api.refused("POST", f"/api/tabs/{walk['id']}/items", 409, json={"product_id": beer["id"]})
    assert "merged into" in api.refused("POST", f"/api/tabs/{tab2}/merge", 409, json={"tab_id": tab1})
    assert "merged into" in api.refused("POST", f"/api/tabs/{tab1}/merge", 409, json={"tab_id": walk["id"]})
    assert "still running" in api.refused("POST", f"/api/tabs/{tab1}/split", 409, json={"mode": "equal", "parts": 2})
    assert _rows(api) == before
    api.ok("POST", f"/api/sessions/{sid1}/stop")
    api.ok("POST", f"/api/sessions/{sid2}/stop")
    t = api.ok("POST", f"/api/tabs/{tab1}/split", json={"mode": "equal", "parts": 2})
    parts = t["split"]["parts"]
    assert sum(p["amount_cents"] for p in parts) == t["total_cents"] and abs(parts[0]["amount_cents"] - parts[1]["amount_cents"]) <= 1
    for rate in t["vat"]:
        assert sum(v["vat_cents"] for p in parts for v in p["vat"] if v["vat_percent"] == rate["vat_percent"]) == rate["vat_cents"]
    before = _rows(api)
    assert "split" in api.refused("POST", f"/api/tabs/{tab1}/items", 409, json={"product_id": beer["id"]})
    assert "add up to" in api.refused("POST", f"/api/tabs/{tab1}/split", 409, json={"mode": "amounts", "amounts": [1, 2]})
    assert _rows(api) == before
    keys = {x["key"]: (1 if n == 0 else 2) for n, x in enumerate(t["lines"])}
    by_items = api.ok("POST", f"/api/tabs/{tab1}/split", json={"mode": "items", "items": keys})
    assert by_items["split"]["mode"] == "items"
    assert api.ok("DELETE", f"/api/tabs/{tab1}/split")["split"] is None


def test_the_same_form_sent_from_five_threads_at_once_is_one_item(api: Api) -> None:
    """The writer serialises the five; the first makes the item, the others find it by its key."""
    from concurrent.futures import ThreadPoolExecutor

    _, tab = _game(api)
    body = {"product_id": _product(api, "Kofola 0,5 l")["id"], "quantity": 2, "request_id": "tap-tap-tap-tap"}

    def send(_: int) -> int:
        r = api.client.post(f"/api/tabs/{tab}/items", headers=api.staff, json=body)
        assert r.status_code == 201, r.text
        result: int = r.json()["item_id"]
        return result

    with ThreadPoolExecutor(5) as pool:
        ids = set(pool.map(send, range(5)))
    assert len(ids) == 1
    with api.service.store.reader() as db:
        assert db.scalars(select(TabItem.id).where(TabItem.tab_id == tab)).all() == list(ids)


def test_a_sale_at_the_bar_without_a_name_and_stopping_every_game_at_closing(api: Api) -> None:
    """Issue 19, items 15 and 10 over the API: a walk-in tab named by the time; a manager stops every
    game at once (staff may not), each tab left to be paid."""
    bar = api.ok("POST", "/api/tabs", 201, json={})
    assert bar["name"] == "Bar 18:00" and bar["table_id"] is None
    assert api.ok("POST", "/api/tabs", 201, json={"label": "Peter"})["name"] == "Peter"
    sid, tab = _game(api, "pool-01")
    api.clock.advance(minutes=30)
    before = _rows(api)
    api.refused("POST", "/api/sessions/stop-all", 403, as_manager=False, json={"confirm": True})  # a manager's
    for body in (None, {}, {"confirm": False}, {"confirm": "yes"}):  # the caller must mean it
        api.refused("POST", "/api/sessions/stop-all", 422, json=body)
    assert _rows(api) == before and api.ok("GET", f"/api/sessions/{sid}")["state"] == "running"
    done = api.ok("POST", "/api/sessions/stop-all", as_manager=True, json={"confirm": True})
    assert done == {"stopped": [{"session_id": sid, "table": "pool-01", "tab_id": tab, "total_cents": 300, "owed_cents": 300}]}
    assert api.ok("GET", f"/api/sessions/{sid}")["state"] == "stopped"
    assert [t["id"] for t in api.ok("GET", "/api/tabs") if t["session_id"] == sid] == [tab]
    assert api.ok("POST", "/api/sessions/stop-all", as_manager=True, json={"confirm": True}) == {"stopped": []}
