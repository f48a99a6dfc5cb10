"""A database that refuses a statement for a moment (a lock held elsewhere, a deadlock with another
hub process) must delay events, never drop them.

Found when two hub processes shared one PostgreSQL (tests/deploy/test_shared_subscriptions.py):
both upserted the same alerts in different orders, PostgreSQL broke the deadlock by failing one
statement, and the message-by-message retry of the batch counted that event as a bad message
("handler_error") and acked it: an event the node had delivered was gone. Here the same failure
is made on purpose with a real PostgreSQL: another connection holds the open alert's row lock,
and the hub's database has a 300 ms lock_timeout, so every upsert of that alert fails with an
OperationalError until the lock is released.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sqlalchemy import create_engine, text

from broker.storage.engine import open_store
from broker.storage.rejects import node_rejects
from tests.support.hub import running_service, stored_events
from tests.support.mqtt import publish_events
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto
    from tests.support.postgres import PostgresCluster


TABLE = "pool-04"  # no session: every drop there touches its "play without session" alert


def test_a_statement_the_database_refuses_for_a_while_delays_events_and_drops_none(
    mosquitto: Mosquitto, postgres_cluster: PostgresCluster, postgres_template: str
) -> None:
    url = postgres_cluster.create_database(template=postgres_template)
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as c:
            c.execute(text(f"ALTER DATABASE \"{url.rsplit('/', 1)[1]}\" SET lock_timeout = '300ms'"))
        with running_service(mosquitto, url, client_id="lavos-hub-contention") as svc:
            # Until the hub has subscribed (a new login has no session yet to queue for): the
            # same event again is a copy the hub drops.
            def publish_and_look() -> bool:
                publish_events(mosquitto.port, TABLE, "first", 1)
                return stored_events(url, TABLE, "first") == (1, 1)

            wait_until(publish_and_look, 30, "the first drop stored")
            holder = admin.connect().execution_options(isolation_level="READ COMMITTED")
            tx = holder.begin()
            locked = holder.execute(
                text("SELECT id FROM alerts WHERE cause_key = :k AND closed_at IS NULL FOR UPDATE"), {"k": f"play_without_session:{TABLE}"}
            ).all()
            assert len(locked) == 1  # the alert the next drops must touch
            try:
                publish_events(mosquitto.port, TABLE, "held", 5)
                time.sleep(2.0)  # several lock timeouts and batch retries
                assert stored_events(url, TABLE, "held") == (0, 0)  # waiting, not applied around the lock
            finally:
                tx.rollback()
                holder.close()
            wait_until(lambda: stored_events(url, TABLE, "held") == (5, 5), 30, "all five drops stored once the lock is gone")
            assert svc.ingest.wait_idle(10)
        store = open_store(url)
        try:
            with store.reader() as db:
                refused = node_rejects(db).get(TABLE)
        finally:
            store.close()
        assert refused is None or refused.dropped == 0, refused
    finally:
        admin.dispose()
        postgres_cluster.drop_database(url)
