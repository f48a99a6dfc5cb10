"""Issue 19, item 4: once money is in on a running game's tab, only a manager voids its extras.

An extra is an item of the game's tab (item 7), so the tab's one rule holds (broker.till.tabs:
`_void_allowed`). Before, staff voided a game's extra after a payment and the tab then owed -0,60 €:
money nobody saw go back."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from sqlalchemy import select

from broker.hall.facade import ServiceError
from broker.storage.models import Tab
from broker.till.payments import PayTab
from broker.till.tabs import AddTabItem, VoidTabItem
from tests.support.matching import some
from tests.till.payments_support import MANAGER, STAFF, clock, facade, played_tab, rows, service  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from tests.dashboard.conftest import FakeClock


def test_a_staff_void_of_a_game_extra_is_refused_once_the_tab_has_a_payment(facade: HubFacade, clock: FakeClock) -> None:
    tab = played_tab(facade, clock, minutes=10, stop=False)
    with facade._hub.store.reader() as db:
        game = int(db.scalar(select(Tab.session_id).where(Tab.id == tab)))
    topping = facade.reads.till.product_of_extra("topping").id
    assert facade.reads.till.game_tab(game) == tab
    first = facade.execute(AddTabItem(tab=tab, product=topping, quantity=1, actor=STAFF))
    # No money in yet: staff may void (a mistyped extra).
    facade.execute(VoidTabItem(tab=tab, item=first, reason="omylom", actor=STAFF))
    second = facade.execute(AddTabItem(tab=tab, product=topping, quantity=1, actor=STAFF))
    facade.execute(PayTab(tab=tab, method="card", amount_cents=100, actor=STAFF))  # a part: the void leaves nothing overpaid
    before = rows(facade), some(facade.reads.till.tab_payments(tab)).owed_cents
    with pytest.raises(ServiceError, match="only a manager voids"):
        facade.execute(VoidTabItem(tab=tab, item=second, reason="omylom", actor=STAFF))
    assert (rows(facade), some(facade.reads.till.tab_payments(tab)).owed_cents) == before
    # A manager may (the refund is theirs to decide).
    facade.execute(VoidTabItem(tab=tab, item=second, reason="omylom", may_void_paid=True, actor=MANAGER))
    assert {i.id for i in facade.reads.till.game_items([game])[game] if i.voided_at is not None} == {first, second}
