"""Issue 32 §1, the bar's stock on the hub's writer, on SQLite and PostgreSQL: a sale on a tab moves
its recipe out in the tab item's transaction, a void gives it back, a payment's reversal does not
(the manager's ReturnToStock does); deliveries, write-offs and stocktakes are movements whose sum is
the level; low and negative stock open one alert each, touched (not pushed again) by the second and
third sale, closed by a delivery; concurrent sales of the last bottles leave the level exact."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.stock.stock import (
    AddStockItem,
    CountStock,
    RecordDelivery,
    ReturnToStock,
    SetRecipe,
    UpdateStockItem,
    WriteOffStock,
    low_key,
    negative_key,
)
from broker.storage.models import Alert, StockMovement, TabItem
from broker.till.payments import PayTab, ReversePayment
from broker.till.tabs import AddProduct, AddTabItem, OpenWalkInTab, VoidTabItem
from tests.dashboard.conftest import sqlite_only
from tests.support.till_days import FakeClock, day_hub, local

STAFF, MANAGER = "jana", "boss"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(local(2026, 11, 10, 19, 0))


@pytest.fixture
def hall(db_url: str, clock: FakeClock) -> Iterator[tuple[Any, HubFacade]]:
    with day_hub(db_url, clock) as pair:
        yield pair


def _setup(f: HubFacade, *, threshold: int = 3000, delivered: int = 6000) -> tuple[int, int]:
    """A bottled beer tracked (one bottle a sale), `delivered` bottles in stock; (item, product)."""
    item = f.execute(AddStockItem(name="Zlatý Bažant 0,5 l fľaša", unit="piece", threshold_milli=threshold, actor=MANAGER))
    product = f.execute(
        AddProduct(name="Bažant fľaša", name_en="Bažant bottle", price_cents=250, vat_percent=23, category="drinks", actor=MANAGER)
    )
    f.execute(SetRecipe(product=product, lines=((item, 1000),), actor=MANAGER))
    if delivered:
        f.execute(
            RecordDelivery(item=item, quantity_milli=delivered, price_cents=1476, vat_percent=23, supplier="Heineken SK", actor=MANAGER)
        )
    return item, product


def _level(f: HubFacade, item: int) -> int:
    view = f.reads.stock.item(item)
    assert view is not None
    assert view.level_milli == f.reads.stock.level_sum(item)  # the level kept is the movements' sum
    return view.level_milli


def _alerts(hub: Any, key: str) -> list[tuple[int, bool]]:
    with hub.store.reader() as db:
        return [(a.count, a.closed_at is None) for a in db.scalars(select(Alert).where(Alert.cause_key == key).order_by(Alert.id))]


def _movements(hub: Any) -> int:
    with hub.store.reader() as db:
        return int(db.scalar(select(func.count()).select_from(StockMovement)) or 0)


def test_a_sale_moves_the_recipe_out_and_a_void_gives_it_back(hall: tuple[Any, HubFacade]) -> None:
    _, f = hall
    item, product = _setup(f)
    assert f.reads.stock.item(item).unit_cost_cents == 200  # type: ignore[union-attr]  # 14,76 € incl. 23 % for 6: 2,00 € excl.
    tab = f.execute(OpenWalkInTab(actor=STAFF))
    line = f.execute(AddTabItem(tab=tab, product=product, quantity=2, actor=STAFF))
    assert _level(f, item) == 4000
    sale = f.reads.stock.movements(kinds=("sale",))
    assert [(m.quantity_milli, m.value_cents, m.tab_item) for m in sale] == [(-2000, -400, line)]
    f.execute(VoidTabItem(tab=tab, item=line, reason="zlý stôl", actor=STAFF))
    assert _level(f, item) == 6000
    assert [m.kind for m in f.reads.stock.movements()] == ["void", "sale", "delivery"]  # rows, never overwritten


def test_a_pizza_takes_its_base_and_toppings(hall: tuple[Any, HubFacade]) -> None:
    _, f = hall
    base = f.execute(AddStockItem(name="Cesto na pizzu", unit="piece", threshold_milli=2000, actor=MANAGER))
    ham = f.execute(AddStockItem(name="Šunka", unit="kg", threshold_milli=200, actor=MANAGER))
    cheese = f.execute(AddStockItem(name="Syr", unit="kg", threshold_milli=200, actor=MANAGER))
    for i, q in ((base, 10_000), (ham, 1000), (cheese, 1000)):
        f.execute(
            RecordDelivery(item=i, quantity_milli=q, price_cents=1000, vat_percent=19, includes_vat=False, supplier="Metro", actor=MANAGER)
        )
    pizza = f.execute(
        AddProduct(name="Pizza šunková", name_en="Ham pizza", price_cents=790, vat_percent=19, category="food", actor=MANAGER)
    )
    f.execute(SetRecipe(product=pizza, lines=((base, 1000), (ham, 80), (cheese, 120)), actor=MANAGER))
    tab = f.execute(OpenWalkInTab(actor=STAFF))
    f.execute(AddTabItem(tab=tab, product=pizza, quantity=3, actor=STAFF))
    assert [_level(f, i) for i in (base, ham, cheese)] == [7000, 760, 640]
    assert f.reads.stock.left_by_product()[pizza] == 5  # the cheese makes 5 more (640 / 120)


def test_a_reversal_moves_no_stock_unless_the_manager_returns_it(hall: tuple[Any, HubFacade]) -> None:
    _, f = hall
    item, product = _setup(f)
    tab = f.execute(OpenWalkInTab(actor=STAFF))
    line = f.execute(AddTabItem(tab=tab, product=product, actor=STAFF))
    paid = f.execute(PayTab(tab=tab, method="card", amount_cents=250, actor=STAFF))
    f.execute(ReversePayment(payment=paid.payment_id, reason="hosť reklamoval", actor=MANAGER))
    assert _level(f, item) == 5000  # the beer was drunk
    f.execute(ReturnToStock(tab_item=line, reason="fľaša neotvorená", actor=MANAGER))
    assert _level(f, item) == 6000
    before = _movements(f._hub)
    with pytest.raises(ServiceError, match="went back already"):
        f.execute(ReturnToStock(tab_item=line, reason="znova", actor=MANAGER))
    with pytest.raises(NotFound):
        f.execute(ReturnToStock(tab_item=99_999, reason="neexistuje", actor=MANAGER))
    assert _movements(f._hub) == before


def test_deliveries_write_offs_and_a_stocktake_are_movements(hall: tuple[Any, HubFacade]) -> None:
    _, f = hall
    item, _ = _setup(f, delivered=0)
    f.execute(
        RecordDelivery(
            item=item, quantity_milli=24_000, price_cents=1800, vat_percent=23, includes_vat=False, supplier="Heineken SK", actor=MANAGER
        )
    )
    [d] = f.reads.stock.movements(kinds=("delivery",))
    assert (d.price_net_cents, d.price_gross_cents, d.vat_percent, d.supplier, d.value_cents) == (1800, 2214, 23, "Heineken SK", 1800)
    f.execute(WriteOffStock(item=item, quantity_milli=1000, reason="broken", actor=STAFF))
    f.execute(WriteOffStock(item=item, quantity_milli=1000, reason="staff_drink", actor=STAFF))
    assert _level(f, item) == 22_000
    count = f.execute(CountStock(counts=((item, 20_000),), note="mesačná", actor=MANAGER))
    assert _level(f, item) == 20_000
    [diff] = f.reads.stock.movements(kinds=("stocktake",))
    assert (diff.quantity_milli, diff.value_cents, diff.count) == (-2000, -150, count)
    again = f.execute(CountStock(counts=((item, 20_000),), actor=MANAGER))  # counted right: no movement
    assert f.reads.stock.counts()[0].id == again and f.reads.stock.counts()[0].moved == 0
    report = f.reads.stock.report(2026)
    assert report.value_cents == 1500  # 20 bottles at 0,75 €
    assert report.write_offs == {"broken": (1, 75), "staff_drink": (1, 75)}


def test_bad_input_is_refused_and_nothing_changes(hall: tuple[Any, HubFacade]) -> None:
    hub, f = hall
    item, product = _setup(f)
    before = _movements(hub), _level(f, item)
    refused = [
        WriteOffStock(item=item, quantity_milli=0, reason="broken", actor=STAFF),
        WriteOffStock(item=item, quantity_milli=1000, reason="stolen", actor=STAFF),
        WriteOffStock(item=item, quantity_milli=1000, reason="other", note="", actor=STAFF),
        RecordDelivery(item=item, quantity_milli=1000, price_cents=-1, supplier="Metro", actor=MANAGER),
        RecordDelivery(item=item, quantity_milli=1000, price_cents=100, vat_percent=7, supplier="Metro", actor=MANAGER),
        RecordDelivery(item=item, quantity_milli=1000, price_cents=100, supplier="", actor=MANAGER),
        CountStock(counts=(), actor=MANAGER),
        CountStock(counts=((item, -1),), actor=MANAGER),
        CountStock(counts=((item, 1000), (item, 2000)), actor=MANAGER),
        SetRecipe(product=product, lines=((item, 0),), actor=MANAGER),
        AddStockItem(name="Zlatý Bažant 0,5 L FĽAŠA", actor=MANAGER),
        AddStockItem(name="Rum", unit="barrel", actor=MANAGER),
    ]
    for cmd in refused:
        with pytest.raises(ServiceError):
            f.execute(cmd)
    for cmd in (WriteOffStock(item=999, quantity_milli=1000, reason="broken", actor=STAFF), SetRecipe(product=999, actor=MANAGER)):
        with pytest.raises(NotFound):
            f.execute(cmd)
    assert (_movements(hub), _level(f, item)) == before
    assert f.reads.stock.recipes()[product][0].quantity_milli == 1000


def test_a_double_tapped_delivery_is_one(hall: tuple[Any, HubFacade]) -> None:
    _, f = hall
    item, _ = _setup(f, delivered=0)
    cmd = RecordDelivery(item=item, quantity_milli=6000, price_cents=1476, supplier="Heineken SK", form_key="k" * 16, actor=MANAGER)
    assert f.execute(cmd) == f.execute(cmd)
    assert _level(f, item) == 6000


def test_low_stock_alerts_once_touches_on_repeats_and_closes_with_a_delivery(hall: tuple[Any, HubFacade]) -> None:
    hub, f = hall
    pushed: list[tuple[str, str]] = []
    hub.notifications.alert_changed = lambda event, alert: pushed.append((event, alert["cause"]))
    hub.alerts.notify = hub.notifications.alert_changed
    item, product = _setup(f, threshold=3000, delivered=5000)
    tab = f.execute(OpenWalkInTab(actor=STAFF))
    f.execute(AddTabItem(tab=tab, product=product, actor=STAFF))  # 4 left
    assert _alerts(hub, low_key(item)) == []
    for _ in range(3):  # 3, 2, 1: the first opens it, the second and third touch it
        f.execute(AddTabItem(tab=tab, product=product, actor=STAFF))
    assert _alerts(hub, low_key(item)) == [(3, True)]
    assert pushed == [("opened", low_key(item))]  # one push to the manager, not three
    assert f.reads.stock.left_by_product()[product] == 1
    f.execute(AddTabItem(tab=tab, product=product, quantity=3, actor=STAFF))  # nothing refused: -2
    assert _level(f, item) == -2000
    assert _alerts(hub, negative_key(item)) == [(1, True)]
    f.execute(AddTabItem(tab=tab, product=product, actor=STAFF))
    assert _alerts(hub, negative_key(item)) == [(2, True)]
    f.execute(RecordDelivery(item=item, quantity_milli=24_000, price_cents=4000, supplier="Heineken SK", actor=MANAGER))
    assert _alerts(hub, low_key(item)) == [(5, False)] and _alerts(hub, negative_key(item)) == [(2, False)]
    assert sorted(pushed[2:]) == [("resolved", low_key(item)), ("resolved", negative_key(item))]
    f.execute(UpdateStockItem(item=item, threshold_milli=30_000, actor=MANAGER))  # the manager raises the bar: low again
    assert _alerts(hub, low_key(item)) == [(5, False), (1, True)]


def test_concurrent_sales_of_the_last_bottles_leave_the_level_exact(hall: tuple[Any, HubFacade]) -> None:
    hub, f = hall
    item, product = _setup(f, threshold=0, delivered=3000)
    tabs = [f.execute(OpenWalkInTab(label=f"Hosť {n}", actor=STAFF)) for n in range(8)]
    go = threading.Barrier(len(tabs))
    errors: list[BaseException] = []

    def sell(tab: int) -> None:
        go.wait()
        try:
            f.execute(AddTabItem(tab=tab, product=product, actor=STAFF))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=sell, args=(t,)) for t in tabs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []  # nothing refused for lack of stock
    assert _level(f, item) == 3000 - 8000
    with hub.store.reader() as db:
        sold = db.scalar(select(func.sum(TabItem.quantity)).where(TabItem.product_id == product))
    assert sold == 8
    assert _alerts(hub, negative_key(item)) == [(5, True)]  # opened by the 4th sale, touched by each after


def test_the_report_counts_a_sale_in_its_local_month_and_year(hall: tuple[Any, HubFacade], clock: FakeClock) -> None:
    """Months and the year are the hall's: 23:30 on 30 November is November, 00:30 on 1 December is
    December, 00:30 on 1 January is next year's (all of them earlier dates in UTC)."""
    _, f = hall
    item, product = _setup(f, delivered=10_000)  # 14,76 € incl. VAT for 10: 1,20 € a bottle excl.
    for at in (local(2026, 11, 30, 23, 30), local(2026, 12, 1, 0, 30), local(2027, 1, 1, 0, 30)):
        clock.set(at)
        tab = f.execute(OpenWalkInTab(actor=STAFF))
        f.execute(AddTabItem(tab=tab, product=product, actor=STAFF))
    voided = f.execute(AddTabItem(tab=tab, product=product, actor=STAFF))
    f.execute(VoidTabItem(tab=tab, item=voided, reason="omylom", actor=STAFF))
    rows = [
        (m.month, m.quantity, m.revenue_gross_cents, m.revenue_net_cents, m.cost_cents, m.margin_cents)
        for m in f.reads.stock.report(2026).margins
    ]
    assert rows == [("2026-11", 1, 250, 203, 120, 83), ("2026-12", 1, 250, 203, 120, 83)]
    assert [(m.month, m.quantity) for m in f.reads.stock.report(2027).margins] == [("2027-01", 1)]
    assert _level(f, item) == 7000


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("sale"), st.integers(1, 3)),
        st.tuples(st.just("void"), st.integers(0, 9)),
        st.tuples(st.just("return"), st.integers(0, 9)),
        st.tuples(st.just("delivery"), st.integers(1, 5000)),
        st.tuples(st.just("write_off"), st.integers(1, 3000)),
        st.tuples(st.just("count"), st.integers(0, 9000)),
    ),
    min_size=1,
    max_size=10,
)


@sqlite_only
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_any_evening_leaves_the_level_the_sum_of_its_movements(hall: tuple[Any, HubFacade], ops: list[tuple[str, int]]) -> None:
    """Whatever the bar and the manager do, in any order (sales, voids, returns, deliveries,
    write-offs, counts), the level is the movements' sum and what a plain model of the rules says."""
    _, f = hall
    item = f.execute(AddStockItem(name=f"Fľaša {uuid.uuid4().hex[:8]}", threshold_milli=1000, actor=MANAGER))
    product = f.execute(
        AddProduct(name=f"Predaj {uuid.uuid4().hex[:8]}", name_en="", price_cents=200, vat_percent=23, category="drinks", actor=MANAGER)
    )
    f.execute(SetRecipe(product=product, lines=((item, 500),), actor=MANAGER))  # half a litre a sale
    tab = f.execute(OpenWalkInTab(actor=STAFF))
    model, sales = 0, []  # sales: [tab item, quantity, voided, returned]
    for op, n in ops:
        if op == "sale":
            sales.append([f.execute(AddTabItem(tab=tab, product=product, quantity=n, actor=STAFF)), n, False, False])
            model -= 500 * n
        elif op == "void" and sales:
            line = sales[n % len(sales)]
            cmd: Any = VoidTabItem(tab=tab, item=line[0], reason="omylom", actor=STAFF)
            if line[2]:
                with pytest.raises(ServiceError):
                    f.execute(cmd)
            else:  # the till voids it; its stock comes back unless a return brought it back already
                f.execute(cmd)
                model += 0 if line[3] else 500 * line[1]
                line[2] = True
        elif op == "return" and sales:
            line = sales[n % len(sales)]
            cmd = ReturnToStock(tab_item=line[0], reason="neotvorená", actor=MANAGER)
            if line[2] or line[3]:
                with pytest.raises(ServiceError):
                    f.execute(cmd)
            else:
                f.execute(cmd)
                model += 500 * line[1]
                line[3] = True
        elif op == "delivery":
            f.execute(RecordDelivery(item=item, quantity_milli=n, price_cents=n, supplier="Metro", actor=MANAGER))
            model += n
        elif op == "write_off":
            f.execute(WriteOffStock(item=item, quantity_milli=n, reason="broken", actor=STAFF))
            model -= n
        elif op == "count":
            f.execute(CountStock(counts=((item, n),), actor=MANAGER))
            model = n
        assert _level(f, item) == model, (op, n)
