"""Issue 19, item 1 (b): on a split tab a payment must name its part.

Before, a payment naming no part was booked over all the tab's rates: the tab then showed paid
while part 2 still owed, and the parts no longer added up to the bill."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from broker.hall.facade import ServiceError
from broker.till.payments import PayTab
from tests.support.matching import some
from tests.till.payments_support import STAFF, clock, facade, played_tab, rows, service, set_split  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from tests.dashboard.conftest import FakeClock


LINE = {
    "description": "Čas",
    "description_en": "Time",
    "quantity": 1,
    "unit_cents": 450,
    "amount_cents": 450,
    "vat_percent": 23,
    "category": "table_time",
}
VAT = [{"vat_percent": 23, "gross_cents": 450, "vat_cents": 84}]


def test_a_payment_without_a_part_on_a_split_tab_is_refused(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock)  # 9,00 €
    parts = [{"n": n, "amount_cents": 450, "lines": [LINE], "vat": VAT} for n in (1, 2)]
    set_split(facade, tab, {"mode": "equal", "parts": parts})
    facade.execute(PayTab(tab=tab, method="card", amount_cents=450, part=1, actor=STAFF))
    before = rows(facade)
    with pytest.raises(ServiceError, match="split into parts: choose the part"):
        facade.execute(PayTab(tab=tab, method="card", amount_cents=450, actor=STAFF))
    assert rows(facade) == before
    view = facade.reads.till.tab_payments(tab)
    assert view is not None
    assert (view.status, [p.owed_cents for p in view.parts]) == ("partly_paid", [0, 450])
    facade.execute(PayTab(tab=tab, method="cash", amount_cents=450, tendered_cents=500, part=2, actor=STAFF))
    assert some(facade.reads.till.tab_payments(tab)).status == "paid"
