"""Issue 19, item 1 (a): the receipts of a tab add up to its bill per VAT rate, also when an item
is voided after a part payment; and a void never leaves money paid for nothing.

The issue's case: goods 6,75 € at 23 % and 4,86 € at 5 %; 5,80 € paid; the manager voids the 5 %
item; the rest paid. Before, the last payment gave the voided rate no weight: the receipts declared
5 % VAT on goods given back and 0,93 € of VAT in all against 1,26 € due."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.domain.till.money import vat_rows
from broker.domain.till.receipt import lines_from_json
from broker.hall.facade import ServiceError
from broker.storage.models import Payment, TabItem
from broker.till.payments import PayTab, ReversePayment
from broker.till.tabs import OpenWalkInTab, VoidTabItem
from tests.support.matching import some
from tests.till.payments_support import MANAGER, STAFF, add_item, clock, facade, rows, service  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from tests.dashboard.conftest import FakeClock


def _bar_tab(facade: Any) -> tuple[int, dict[str, int]]:
    tab = facade.execute(OpenWalkInTab(label="Novák", actor=STAFF))
    add_item(facade, tab, "Burger", 675, 23, category="food")
    add_item(facade, tab, "Kofola", 486, 5)
    with facade._hub.store.reader() as db:
        items = {i.name: i.id for i in db.scalars(select(TabItem).where(TabItem.tab_id == tab))}
    return tab, items


def _receipts_per_rate(facade: Any, tab: int) -> tuple[dict[int, int], dict[int, int]]:
    gross: defaultdict[int, int] = defaultdict(int)
    vat: defaultdict[int, int] = defaultdict(int)
    with facade._hub.store.reader() as db:
        for p in db.scalars(select(Payment).where(Payment.tab_id == tab)):
            for row in vat_rows(lines_from_json(p.lines)):
                gross[row.vat_percent] += row.gross_cents
                vat[row.vat_percent] += row.vat_cents
    return {r: c for r, c in gross.items() if c}, {r: c for r, c in vat.items() if c}


def test_a_void_after_a_part_payment_is_corrected_on_the_next_receipt(facade: HubFacade, clock: FakeClock) -> None:
    tab, items = _bar_tab(facade)
    facade.execute(PayTab(tab=tab, method="card", amount_cents=580, actor=STAFF))
    facade.execute(VoidTabItem(tab=tab, item=items["Kofola"], reason="vrátené", may_void_paid=True, actor=MANAGER))
    owed = some(facade.reads.till.tab_payments(tab)).owed_cents
    assert owed == 95
    last = facade.execute(PayTab(tab=tab, method="card", amount_cents=owed, actor=STAFF))
    gross, vat = _receipts_per_rate(facade, tab)
    assert gross == {23: 675}  # nothing left at 5 %: the returned drink carries no VAT
    assert sum(vat.values()) == 126  # 6,75 € at 23 %: 1,26 € of VAT, as the bill
    with facade._hub.store.reader() as db:
        lines = lines_from_json(some(db.get(Payment, last.payment_id)).lines)
    assert any(x.vat_percent == 5 and x.amount_cents < 0 for x in lines), lines  # the correcting line
    assert some(facade.reads.till.tab_payments(tab)).status == "paid"


def test_a_void_on_a_paid_tab_needs_the_refund_first(facade: HubFacade, clock: FakeClock) -> None:
    tab, items = _bar_tab(facade)
    paid = facade.execute(PayTab(tab=tab, method="card", amount_cents=1161, actor=STAFF))
    before = rows(facade)
    with pytest.raises(ServiceError, match="reverse its payment first"):
        facade.execute(VoidTabItem(tab=tab, item=items["Kofola"], reason="vrátené", may_void_paid=True, actor=MANAGER))
    assert rows(facade) == before and some(facade.reads.till.tab_payments(tab)).owed_cents == 0
    # The manager gives the money back, voids, and the guest pays the corrected bill.
    facade.execute(ReversePayment(payment=paid.payment_id, reason="vrátená kofola", actor=MANAGER))
    facade.execute(VoidTabItem(tab=tab, item=items["Kofola"], reason="vrátené", may_void_paid=True, actor=MANAGER))
    facade.execute(PayTab(tab=tab, method="card", amount_cents=675, actor=STAFF))
    assert _receipts_per_rate(facade, tab)[0] == {23: 675}
