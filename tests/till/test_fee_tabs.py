"""A tab opened for one thing holds only that (broker.till.tabs, `Tab.holds`): a player's
tournament entry fee tab, whose payments are the prize pot, and a booking's deposit tab, whose
payment is the deposit kept or given back. A drink put on either, or a bar tab merged with one,
would be paid out as prize money or refunded as a deposit; the till refuses both, so no path
(an item, a merge either way, and then a split, a void or a reversal of what is on it) brings bar
money into the pot. The migration that marks the tabs made before, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import select

from broker.bookings.bookings import BookTable, NewCalendarFeed
from broker.core.errors import ServiceError
from broker.hall.facade import HubFacade
from broker.people.accounts import SetStaffActive
from broker.storage.engine import make_engine
from broker.storage.migrate import alembic_config
from broker.storage.models import Booking, CalendarFeed, Product, Tab
from broker.till.payments import PayTab
from broker.till.tabs import AddTabItem, MergeTabs, OpenWalkInTab, SplitTab
from broker.tournaments.setup import AddEntrant, CreateTournament
from tests.support.sqlite_template import CHEAP
from tests.support.till_days import FakeClock, day_hub, local
from tests.support.web import add_users

NOW = local(2026, 12, 6, 14)  # Sunday 6 December 2026, 14:00: the Lavosliga
# The till's rule is checked before the database: the same on both (the migration runs on both).
SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


@pytest.fixture
def hub(db_url: str) -> Iterator[Any]:
    with day_hub(db_url, FakeClock(NOW)) as (h, _facade):
        yield h


@contextmanager
def _connection(url: str) -> Iterator[sa.Connection]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            yield conn
            conn.commit()
    finally:
        engine.dispose()


def _beer(hub: Any) -> int:
    with hub.store.reader() as db:
        beer = db.scalar(select(Product.id).where(Product.category == "drinks").order_by(Product.id))
    assert beer is not None
    result: int = beer
    return result


@SQLITE_ONLY
def test_a_players_fee_tab_holds_entry_fees_only_so_the_pot_is_the_fees_paid(hub: Any) -> None:
    reads = HubFacade(hub).reads
    tid = hub.execute(CreateTournament(name="Lavosliga", starts_at=NOW, tables=("pool-01", "pool-02"), actor="boss"))
    for name in ("Kováč", "Horváth"):
        hub.execute(AddEntrant(tournament=tid, name=name, check_in=True, actor="jana"))
    kovac, horvath = (e.fee_tab_id for e in reads.tournaments.tournament(tid).entrants)
    assert kovac is not None and horvath is not None
    beer = _beer(hub)
    with pytest.raises(ServiceError, match="holds tournament entry fees only"):
        hub.execute(AddTabItem(tab=kovac, product=beer, actor="jana"))
    bar = hub.execute(OpenWalkInTab(label="Kováč pri bare", actor="jana"))
    hub.execute(AddTabItem(tab=bar, product=beer, quantity=2, actor="jana"))
    for into, from_tab in ((kovac, bar), (bar, kovac), (kovac, horvath)):
        with pytest.raises(ServiceError, match="is paid on its own: it is merged with no other tab"):
            hub.execute(MergeTabs(into=into, from_tab=from_tab, actor="jana"))
    # Split, the fee tab's parts are fee money; paid in full, the pot is the fees and nothing else.
    plan = hub.execute(SplitTab(tab=kovac, mode="equal", parts=2, actor="jana"))
    for part in plan["parts"]:
        cents = part["amount_cents"]
        hub.execute(PayTab(tab=kovac, part=part["n"], method="cash", amount_cents=cents, tendered_cents=cents, actor="jana"))
    hub.execute(PayTab(tab=horvath, method="card", amount_cents=reads.till.tab(horvath).owed_cents, actor="jana"))
    hub.execute(PayTab(tab=bar, method="card", amount_cents=reads.till.tab(bar).owed_cents, actor="jana"))
    v = reads.tournaments.tournament(tid)
    assert (v.fees_cents, v.pot_cents) == (1000, 1000)  # two non-members' 5 €; the beers are the bar's


@SQLITE_ONLY
def test_a_booking_deposit_tab_holds_the_deposit_only(hub: Any) -> None:
    booking = hub.execute(
        BookTable(
            table="pool-04",
            start=local(2026, 12, 6, 20),
            end=local(2026, 12, 6, 22),
            party_size=2,
            name="Opatrný",
            deposit_cents=1000,
            actor="jana",
        )
    )
    with hub.store.reader() as db:
        tab = db.scalar(select(Booking.deposit_tab_id).where(Booking.id == booking))
    assert tab is not None
    with pytest.raises(ServiceError, match="holds the booking deposit only"):
        hub.execute(AddTabItem(tab=tab, product=_beer(hub), actor="jana"))
    bar = hub.execute(OpenWalkInTab(label="Bar", actor="jana"))
    with pytest.raises(ServiceError, match="is paid on its own"):
        hub.execute(MergeTabs(into=tab, from_tab=bar, actor="jana"))


def test_migration_0014_marks_the_fee_and_deposit_tabs_made_before_and_ends_a_disabled_accounts_ical_link(db_url: str) -> None:
    """Rows made by a hub before `tabs.holds` (and before a disabled account's links ended with it):
    the upgrade marks the fee and deposit tabs from the rows that point at them, and ends the iCal
    link of an account that was disabled already."""
    with day_hub(db_url, FakeClock(NOW)) as (hub, facade):
        add_users(hub, {"jana": "staff", "eva": "staff", "boss": "manager"}, "Heslo-na-test", CHEAP)
        tid = hub.execute(CreateTournament(name="Lavosliga", starts_at=NOW, tables=("pool-01",), actor="boss"))
        hub.execute(AddEntrant(tournament=tid, name="Kováč", check_in=True, actor="jana"))
        fee = facade.reads.tournaments.tournament(tid).entrants[0].fee_tab_id
        booking = hub.execute(
            BookTable(
                table="pool-04",
                start=local(2026, 12, 6, 20),
                end=local(2026, 12, 6, 22),
                party_size=2,
                name="Hosť",
                deposit_cents=500,
                actor="jana",
            )
        )
        bar = hub.execute(OpenWalkInTab(label="Bar", actor="jana"))
        for user in ("jana", "eva"):
            hub.execute(NewCalendarFeed(username=user, actor=user))
        hub.execute(SetStaffActive(username="eva", active=False, actor="boss"))
    with _connection(db_url) as conn:
        cfg = alembic_config()
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0014_i29_bookings-1")  # as it was before: no column, eva's link alive
        conn.execute(sa.text("UPDATE calendar_feeds SET revoked_at = NULL"))
        command.upgrade(cfg, "head")
    with day_hub(db_url, FakeClock(NOW)) as (hub, _facade), hub.store.reader() as db:
        deposit = db.scalar(sa.select(Booking.deposit_tab_id).where(Booking.id == booking))
        assert {t.id: t.holds for t in db.scalars(sa.select(Tab))} == {fee: "tournament_entry", deposit: "deposit", bar: None}
        assert {f.username: f.revoked_at is not None for f in db.scalars(sa.select(CalendarFeed))} == {"jana": False, "eva": True}
