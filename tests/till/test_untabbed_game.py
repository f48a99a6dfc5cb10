"""A game that was running when the till was installed (started under migration 0004, so it has no
tab) gets its tab when the hub starts, and is stopped and paid like any other; stopped games of
before stay without one (they were settled without the till). SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import delete, func, select

from broker.floor.games import StartGame, StopGame
from broker.storage.models import AuditEntry, Tab
from broker.till.payments import PayTab
from tests.support.hub import on_writer
from tests.support.till_days import FakeClock, day_hub, local

STAFF = "jana"


def test_a_game_running_before_the_till_gets_a_tab_at_start_and_is_paid(db_url: str) -> None:
    clock = FakeClock(local(2026, 12, 1, 18, 0))
    with day_hub(db_url, clock) as (hub, facade):
        old = facade.execute(StartGame(table="pool-02", actor=STAFF))
        clock.advance(minutes=30)
        facade.execute(StopGame(game=old, actor=STAFF))
        running = facade.execute(StartGame(table="pool-01", actor=STAFF))
        on_writer(hub, lambda db: db.execute(delete(Tab)))  # the rows as a hub before the till left them: games, no tabs
    clock.advance(minutes=60)
    with day_hub(db_url, clock) as (hub, facade):
        tab = facade.reads.till.tab_of_game(running)
        assert tab is not None
        assert facade.reads.till.tab_of_game(old) is None
        with hub.store.reader() as db:
            assert db.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.target == f"tab:{tab}")) == 1
        facade.execute(StopGame(game=running, actor=STAFF))
        owed = facade.reads.till.tab(tab).owed_cents
        assert owed == 600  # 60 min at 6,00 €/h
        facade.execute(PayTab(tab=tab, method="card", amount_cents=owed, request_id="untabbed-1", actor=STAFF))
        assert facade.reads.till.tab(tab).owed_cents == 0
    with day_hub(db_url, clock) as (hub, _facade), hub.store.reader() as db:  # a later start makes no second tab
        assert db.scalar(select(func.count()).select_from(Tab)) == 1
