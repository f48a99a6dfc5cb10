"""A double tap on the till makes one tab or one item, also when the hub restarted between the two
taps: the form's one-time key is stored with the row it made (tabs.form_key, tab_items.form_key),
so the database answers a repeat. A key that made an item on another tab is a stale or copied
form, and a key that cannot be one is refused; neither changes anything. SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.hall.facade import HubFacade, ServiceError
from broker.storage.models import Tab, TabItem
from broker.till.tabs import AddTabItem, OpenWalkInTab
from tests.dashboard.conftest import FakeClock
from tests.support.hub import fresh_login, started_hub

if TYPE_CHECKING:
    from contextlib import _GeneratorContextManager

    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto


STAFF = "jana"


def _counts(facade: HubFacade) -> tuple[int, int]:
    with facade._hub.store.reader() as db:
        return db.scalars(select(func.count()).select_from(Tab)).one(), db.scalars(select(func.count()).select_from(TabItem)).one()


def _hub(mosquitto: Any, db_url: Any, clock: Any) -> _GeneratorContextManager[Hub, None, None]:
    return started_hub(db_url, mosquitto=mosquitto, clock=clock, client_id=fresh_login())


def test_a_repeat_after_a_hub_restart_is_answered_with_what_the_first_tap_made(mosquitto: Mosquitto, db_url: str) -> None:
    clock = FakeClock()
    with _hub(mosquitto, db_url, clock) as hub:
        facade = HubFacade(hub)
        product = next(iter(facade.reads.till.products(active_only=True)))
        beer = product.id
        tab = facade.execute(OpenWalkInTab(label="Peter pri bare", form_key="walk-in-key-1", actor=STAFF))
        item = facade.execute(AddTabItem(tab=tab, product=beer, quantity=2, form_key="item-key-0001", actor=STAFF))
        assert (
            facade.execute(AddTabItem(tab=tab, product=beer, quantity=2, form_key="item-key-0001", actor=STAFF)) == item
        )  # the double tap
        before = _counts(facade)

    with _hub(mosquitto, db_url, clock) as hub:  # a new hub process on the same database
        facade = HubFacade(hub)
        assert facade.execute(OpenWalkInTab(label="Peter pri bare", form_key="walk-in-key-1", actor=STAFF)) == tab
        assert facade.execute(AddTabItem(tab=tab, product=beer, quantity=2, form_key="item-key-0001", actor=STAFF)) == item
        assert _counts(facade) == before
        assert facade.reads.till.tab(tab).total_cents == 2 * product.price_cents
        # A new form (a new key) is a new item, and no key at all always is.
        facade.execute(AddTabItem(tab=tab, product=beer, quantity=1, form_key="item-key-0002", actor=STAFF))
        facade.execute(AddTabItem(tab=tab, product=beer, quantity=1, actor=STAFF))
        facade.execute(AddTabItem(tab=tab, product=beer, quantity=1, actor=STAFF))
        assert _counts(facade) == (before[0], before[1] + 3)


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("key", "says"),
    [("short", "This form is broken"), ("x" * 65, "This form is broken"), ("kľúč-s-diakritikou", "This form is broken")],
)
def test_a_key_that_cannot_be_a_form_key_is_refused(mosquitto: Mosquitto, db_url: Any, key: Any, says: Any) -> None:
    with _hub(mosquitto, db_url, FakeClock()) as hub:
        facade = HubFacade(hub)
        beer = next(p.id for p in facade.reads.till.products(active_only=True))
        tab = facade.execute(OpenWalkInTab(label="Bar", actor=STAFF))
        before = _counts(facade)
        with pytest.raises(ServiceError, match=says):
            facade.execute(AddTabItem(tab=tab, product=beer, quantity=1, form_key=key, actor=STAFF))
        with pytest.raises(ServiceError, match=says):
            facade.execute(OpenWalkInTab(label="Bar", form_key=key, actor=STAFF))
        assert _counts(facade) == before


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_key_used_on_another_tab_is_a_stale_form_and_changes_nothing(mosquitto: Mosquitto, db_url: Any) -> None:
    with _hub(mosquitto, db_url, FakeClock()) as hub:
        facade = HubFacade(hub)
        beer = next(p.id for p in facade.reads.till.products(active_only=True))
        first, second = (facade.execute(OpenWalkInTab(label=name, actor=STAFF)) for name in ("Peter", "Jana"))
        facade.execute(AddTabItem(tab=first, product=beer, quantity=1, form_key="copied-form-1", actor=STAFF))
        before = _counts(facade)
        with pytest.raises(ServiceError, match="already used on another tab"):
            facade.execute(AddTabItem(tab=second, product=beer, quantity=1, form_key="copied-form-1", actor=STAFF))
        assert _counts(facade) == before
        assert facade.reads.till.tab(second).total_cents == 0
