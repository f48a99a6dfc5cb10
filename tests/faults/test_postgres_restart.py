"""Issue 6: PostgreSQL restarted under the hub while the tables keep playing.

The hub gets its own cluster (not the session's shared one), so stopping it disturbs no other
test. While PostgreSQL is down the ingest loop cannot commit, so it acks nothing and Mosquitto
keeps every event; once PostgreSQL is back (pool_pre_ping replaces the dead connections) the
retried batch and everything behind it is applied, each event once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.floor.games import StartGame, StopGame
from broker.storage.engine import open_store
from broker.storage.models import Alert
from tests.broker.floor.test_service_e2e import drop_balls
from tests.faults.checks import assert_billed_by_central_clock, assert_each_once, stored_events
from tests.support.hub import light_of, link_of, outbox_of, running_node, running_service
from tests.support.postgres import PostgresCluster, find_bindir
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


TABLES = ["pool-01", "pool-02"]  # pool-01 has a session across the restart, pool-02 none
DOWN_S = 5


@pytest.fixture
def own_cluster() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster(find_bindir()).start()
    yield cluster
    cluster.stop()


class Players(threading.Thread):
    """Drops on every table, round after round, whatever the database is doing."""

    def __init__(self, nodes: Any) -> None:
        super().__init__(daemon=True)
        self.nodes = nodes
        self.driven = dict.fromkeys(nodes, 0)
        self.done = threading.Event()

    def run(self) -> None:
        i = 0
        while not self.done.is_set():
            for t, (node, factory) in self.nodes.items():
                drop_balls(factory, node, i % 6, 1)
                self.driven[t] += 1
            i += 1
            time.sleep(0.25)  # rounds on one pin closer than ~0.1 s would merge into one pulse

    def stop(self) -> dict[str, int]:
        self.done.set()
        self.join(10)
        return self.driven


@pytest.mark.slow
def test_postgres_restart_loses_and_doubles_nothing(mosquitto: Mosquitto, own_cluster: PostgresCluster, tmp_path: Path) -> None:
    url = own_cluster.create_database()
    open_store(url).close()  # schema at head, as `lavos server` does at start
    with (
        running_service(mosquitto, url) as svc,
        running_node(mosquitto, tmp_path, "pool-01") as n1,
        running_node(mosquitto, tmp_path, "pool-02") as n2,
    ):
        nodes = dict(zip(TABLES, (n1, n2)))
        wait_until(lambda: all(link_of(n).connected for n, _ in nodes.values()), timeout=20, what="nodes connected")
        sid = svc.execute(StartGame(table="pool-01", actor="anna"))
        wait_until(lambda: light_of(n1[0]).on, timeout=10, what="light on")

        players = Players(nodes)
        players.start()
        time.sleep(2)
        own_cluster.stop_server("fast")  # ends the hub's connections, as a restart does
        failures = svc.ingest.failures
        time.sleep(DOWN_S)
        assert svc.ingest.failures > failures, "the hub never noticed PostgreSQL was gone"
        own_cluster.start_server()
        time.sleep(2)
        driven = players.stop()

        try:
            wait_until(lambda: all(len(stored_events(svc.store, t)) == driven[t] for t in TABLES), timeout=60, what="every drop stored")
        except AssertionError:
            print({t: (len(stored_events(svc.store, t)), driven[t], outbox_of(nodes[t][0]).depth) for t in TABLES})
            raise
        for t in TABLES:
            rows = stored_events(svc.store, t)
            assert_each_once(rows)
            assert {r.boot for r in rows} == {nodes[t][0].boot}
            assert sorted(r.seq for r in rows) == list(range(rows[0].seq, rows[0].seq + driven[t])), "a gap: an event lost"
        assert svc.runtime["pool-01"].drops == driven["pool-01"], "a drop applied twice (or never)"
        assert light_of(n1[0]).on and not light_of(n2[0]).on, "the restart switched a light"

        # The session started before the restart stops after it, billed by the central clock.
        svc.execute(StopGame(game=sid, actor="anna"))
        total = assert_billed_by_central_clock(svc.store, sid)
        wait_until(lambda: not light_of(n1[0]).on, timeout=10, what="light off after stop")
        with svc.store.reader() as db:
            alerts = db.scalars(select(Alert).where(Alert.cause_key == "play_without_session:pool-02")).all()
        assert len(alerts) == 1 and alerts[0].closed_at is None, "play without a session: one open alert, not lost"
    print(f"postgres down {DOWN_S}s: driven {driven}, ingest retries {svc.ingest.failures}, bill {total} cents")
