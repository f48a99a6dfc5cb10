"""Fencing is checked in every write transaction, not by timing alone (issue 18, item 10).

A leading hub's store checks, in each write transaction just before its COMMIT, that the lock's
PostgreSQL session still holds the hub lock (broker.adapters.leadership.Leadership.check_in).
Here the lock's session is ended from outside (as a cut connection or a killed backend would end
it) while the timed checks are switched off: the very next change is rolled back, and the hub is
told it lost the lead, before any timer could have noticed. Real PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from sqlalchemy import func, select

from broker.adapters.leadership import Leadership, LeadershipLost
from broker.compose import open_store
from broker.people.members import AddMember
from broker.storage.models import Member
from tests.support.hub import new_hub

if TYPE_CHECKING:
    from tests.support.postgres import PostgresCluster


NEVER = 3600.0  # the watcher's own checks never run within the test: only the transactions check


@pytest.fixture
def pg_url(postgres_cluster: PostgresCluster, postgres_template: str) -> Iterator[Any]:
    url = postgres_cluster.create_database(template=postgres_template)
    yield url
    postgres_cluster.drop_database(url)


def _members(store: Any) -> int:
    with store.reader() as db:
        return db.scalar(select(func.count()).select_from(Member)) or 0


def test_a_change_after_the_lock_is_gone_is_rolled_back_and_the_hub_stops_leading(pg_url: Any) -> None:
    lost: list[str] = []
    lead = Leadership(pg_url, check_s=NEVER, lost_after_s=NEVER)
    store = open_store(pg_url)
    hub = None
    try:
        assert lead.try_acquire()
        lead.watch(lost.append)
        store.before_commit = lead.check_in
        hub = new_hub(store)
        hub.execute(AddMember(name="Eva Nová", actor="boss"))  # the lock is held: committed
        assert _members(store) == 1
        pid = lead._lock_pid
        with psycopg.connect(lead._conninfo, autocommit=True) as admin:  # the lock's session ends
            row = admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()
            assert row is not None and row[0]
        with pytest.raises(LeadershipLost, match="rolled back"):
            hub.execute(AddMember(name="Petra Malá", actor="boss"))
        assert _members(store) == 1  # nothing of the refused change is in the database
        assert len(lost) == 1 and "no longer held" in lost[0]
        with pytest.raises(LeadershipLost):  # and no later change either, even one the lock allowed
            hub.execute(AddMember(name="Ivan Veľký", actor="boss"))
        assert _members(store) == 1 and len(lost) == 1  # told once
    finally:
        if hub is not None:
            hub.close()
        store.close()
        lead.close()


def test_a_second_process_holding_the_lock_makes_the_first_ones_writes_fail(pg_url: Any) -> None:
    """The old leader's lock session ended and a standby took the lock: the old leader's write is refused."""
    old, new = Leadership(pg_url, check_s=NEVER, lost_after_s=NEVER), Leadership(pg_url, check_s=NEVER, lost_after_s=NEVER)
    store = open_store(pg_url)
    hub = None
    try:
        assert old.try_acquire()
        old.watch(lambda reason: None)
        store.before_commit = old.check_in
        hub = new_hub(store)
        with psycopg.connect(old._conninfo, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (old._lock_pid,))
        assert new.try_acquire()  # PostgreSQL freed it: the standby leads now
        with pytest.raises(LeadershipLost):
            hub.execute(AddMember(name="Eva Nová", actor="boss"))
        assert _members(store) == 0
    finally:
        if hub is not None:
            hub.close()
        store.close()
        old.close()
        new.close()
