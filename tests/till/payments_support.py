"""The payment tests' hall: a real hub (Mosquitto, SQLite and PostgreSQL) on a fake clock, its facade,
and tabs made the way the hall makes them (a game started and stopped through the facade).

Imported by the payment test modules (not a conftest: the till's other parts have their own).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.floor.games import StartGame, StopGame
from broker.hall.facade import HubFacade
from broker.storage.models import AuditEntry, Payment, Tab, TabItem
from tests.dashboard.conftest import FakeClock
from tests.support.hub import fresh_login, on_writer, started_hub

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from sim.mosquitto import Mosquitto


STAFF, MANAGER = "jana", "boss"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(mosquitto: Mosquitto, db_url: str, clock: FakeClock) -> Iterator[Hub]:
    with started_hub(db_url, mosquitto=mosquitto, client_id=fresh_login(), clock=clock, watchdog=False) as svc:
        yield svc


@pytest.fixture
def facade(service: Hub) -> HubFacade:
    return HubFacade(service)


def played_tab(facade: HubFacade, clock: FakeClock, table: str = "pool-01", minutes: float = 90, stop: bool = True) -> int:
    """A game of `minutes` on `table` (6,00 €/h standard: 90 min = 9,00 €); its tab's id."""
    sid = facade.execute(StartGame(table=table, actor=STAFF))
    clock.advance(minutes=minutes)
    if stop:
        facade.execute(StopGame(game=sid, actor=STAFF))
    with facade._hub.store.reader() as db:
        tab_id = db.scalar(select(Tab.id).where(Tab.session_id == sid))
        assert tab_id is not None
        return tab_id


def add_item(facade: HubFacade, tab_id: int, name: str, unit_cents: int, vat: int, quantity: int = 1, category: str = "drinks") -> None:
    """An item on the tab as m1's Tabs will put it (a row of tab_items, copied product)."""

    def _write(db: Any) -> None:
        db.add(
            TabItem(
                tab_id=tab_id,
                name=name,
                name_en=name,
                category=category,
                unit_cents=unit_cents,
                vat_percent=vat,
                quantity=quantity,
                added_by=STAFF,
            )
        )

    on_writer(facade._hub, _write)


def set_split(facade: HubFacade, tab_id: int, split: dict[str, Any]) -> None:
    def _write(db: Any) -> None:
        db.get(Tab, tab_id).split = split

    on_writer(facade._hub, _write)


def rows(facade: HubFacade) -> tuple[Any, ...]:
    """Everything a payment writes: to check that a refused one changed nothing."""
    with facade._hub.store.reader() as db:
        pays = [
            (p.id, p.amount_cents, p.tendered_cents, p.change_cents, p.receipt_no, p.request_id)
            for p in db.scalars(select(Payment).order_by(Payment.id))
        ]
        tabs = [(t.id, t.settled_at) for t in db.scalars(select(Tab).order_by(Tab.id))]
        audits = db.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.action.like("payment.%")))
        return pays, tabs, audits
