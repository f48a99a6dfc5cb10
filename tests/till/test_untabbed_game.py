"""A game that was running when the till was installed (started under migration 0004, so it has no
tab) gets its tab when the hub starts, and is stopped and paid like any other; stopped games of
before stay without one (they were settled without the till). SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import delete, func, select

from broker.storage.models import AuditEntry, Tab
from tests.support.till_days import FakeClock, day_hub, local

STAFF = "jana"


def test_a_game_running_before_the_till_gets_a_tab_at_start_and_is_paid(db_url):
    clock = FakeClock(local(2026, 12, 1, 18, 0))
    with day_hub(db_url, clock) as (hub, facade):
        old = facade.start_session("pool-02", actor=STAFF)
        clock.advance(minutes=30)
        facade.stop_session(old, actor=STAFF)
        running = facade.start_session("pool-01", actor=STAFF)
        with hub.store.session() as db:  # the rows as a hub before the till left them: games, no tabs
            db.execute(delete(Tab))
    clock.advance(minutes=60)
    with day_hub(db_url, clock) as (hub, facade):
        tab = facade.reads.tab_of_session(running)
        assert tab is not None
        assert facade.reads.tab_of_session(old) is None
        with hub.store.reader() as db:
            assert db.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.target == f"tab:{tab}")) == 1
        facade.stop_session(running, actor=STAFF)
        owed = facade.reads.tab(tab).owed_cents
        assert owed == 600  # 60 min at 6,00 €/h
        facade.pay(tab, "card", owed, actor=STAFF, request_id="untabbed-1")
        assert facade.reads.tab(tab).owed_cents == 0
    with day_hub(db_url, clock) as (hub, _facade):  # a later start makes no second tab
        with hub.store.reader() as db:
            assert db.scalar(select(func.count()).select_from(Tab)) == 1
