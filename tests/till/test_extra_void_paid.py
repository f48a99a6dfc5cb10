"""Issue 19, item 4: once money is in on a running game's tab, only a manager voids its extras.

The same rule as for the tab's items (broker.hall.till.tabs: `_void_allowed`). Before, staff voided
a game's extra after a payment and the tab then owed -0,60 €: money nobody saw go back."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from broker.hall.facade import ServiceError
from broker.hall.games import AddExtra, VoidExtra
from broker.hall.till.payments import PayTab
from broker.storage.models import Tab
from tests.till.payments_support import MANAGER, STAFF, clock, facade, played_tab, rows, service  # noqa: F401


def _extra_op(facade, game: int) -> int:
    return facade.reads.game_state(game).extras[-1].op


def test_a_staff_void_of_a_game_extra_is_refused_once_the_tab_has_a_payment(facade, clock):
    tab = played_tab(facade, clock, minutes=10, stop=False)
    with facade._hub.store.reader() as db:
        game = int(db.scalar(select(Tab.session_id).where(Tab.id == tab)))
    facade.execute(AddExtra(game=game, extra="topping", quantity=1, actor=STAFF))
    first = _extra_op(facade, game)
    # No money in yet: staff may void (a mistyped extra).
    facade.execute(VoidExtra(game=game, extra_op=first, reason="omylom", actor=STAFF))
    facade.execute(AddExtra(game=game, extra="topping", quantity=1, actor=STAFF))
    second = _extra_op(facade, game)
    facade.execute(PayTab(tab=tab, method="card", amount_cents=160, actor=STAFF))
    before = rows(facade), facade.reads.tab_payments(tab).owed_cents
    with pytest.raises(ServiceError, match="only a manager voids"):
        facade.execute(VoidExtra(game=game, extra_op=second, reason="omylom", actor=STAFF))
    assert (rows(facade), facade.reads.tab_payments(tab).owed_cents) == before
    # A manager may (the refund is theirs to decide).
    facade.execute(VoidExtra(game=game, extra_op=second, reason="omylom", actor=MANAGER, issued_ok=True))
    assert {v.item.op for v in facade.reads.game_state(game).voids} == {first, second}
