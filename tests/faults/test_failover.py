"""Issue 10: two `lavos server` processes on one PostgreSQL, one the hub and one the standby.

The PostgreSQL advisory lock (broker/adapters/leadership.py) decides which one is the hub. The
standby keeps no MQTT session; when the hub is SIGKILLed while 14 tables play, the standby gets the
lock, loads the hall from the database alone and resumes the hub's persistent session (same login,
so Mosquitto delivers what it queued meanwhile). Real processes throughout: Mosquitto from the
shipped config, PostgreSQL, two servers, 14 table nodes.

What must be true is asserted here: the standby leads, nothing is lost or doubled, no light
switches, Mosquitto never sees two hubs. How soon a standby leads, and how soon a hub that lost
its lock exits, are bench/failover.py's figures (issue 29, item 41: a 10 s deadline here failed on
a loaded machine where the standby led all the same); the waits here only catch a hang.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from broker.accounts.users import create_user, issue_token, new_password
from broker.compose import open_store
from sim.mosquitto import free_port as _free_port
from tests.broker.floor.test_service_e2e import drop_balls, score
from tests.faults.checks import (
    assert_billed_by_central_clock,
    assert_each_once,
    stored_events,
)
from tests.support import httpc
from tests.support.hub import REPO, VENUE, light_of, link_of, running_node
from tests.support.server import server_argv, wait_serving
from tests.support.sqlite_template import CHEAP
from tests.support.waiting import HANG_S, wait_until

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto
    from tests.support.postgres import PostgresCluster


POOL = [f"pool-{i:02d}" for i in range(1, 11)]
BILLIARD = [*POOL, "carom-01"]  # a session each, lights on throughout
FOOS = ["foos-01", "foos-02"]  # goals, no session
TABLES = [*BILLIARD, *FOOS, "darts-01"]  # every table of the shipped venue: 14 nodes
POLL = ("--standby-poll", "0.5")
# Mosquitto's words for a client id connecting while that id is still connected: two processes
# acting as the hub at once.
TAKEN_OVER = "already connected, closing old connection"


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    base: str
    log: Path

    def health(self) -> httpx.Response | None:
        try:
            return httpc.get(f"{self.base}/api/health", timeout=2)
        except httpx.TransportError:
            return None

    def is_hub(self) -> bool:
        r = self.health()
        return r is not None and r.status_code == 200

    def is_standby(self) -> bool:
        r = self.health()
        return r is not None and r.status_code == 503 and r.json().get("role") == "standby"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def pg_url(postgres_cluster: PostgresCluster, postgres_template: str) -> Iterator[Any]:
    url = postgres_cluster.create_database(template=postgres_template)
    yield url
    postgres_cluster.drop_database(url)


def without_closing_warning(tmp_path: Path) -> Path:
    """The shipped venue with no closing-time warning. The warning blinks every lit table for ten
    seconds from ten minutes before closing, by the wall clock: a run at 23:50-24:00 local saw the
    first hub's blink still switching the relays after the test counted them (that a hub taking
    over does not blink a warning again is tests/broker/floor/test_watchdog.py's, on a fake clock)."""
    text = VENUE.read_text(encoding="utf-8")
    quiet = re.sub(r"(?m)^closing_warning_min = \d+$", "closing_warning_min = 0", text)
    assert quiet != text, "the shipped venue sets closing_warning_min no more"
    path = tmp_path / "venue.toml"
    path.write_text(quiet, encoding="utf-8")
    return path


@pytest.fixture
def servers(mosquitto: Mosquitto, pg_url: Any, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """start(name) → a `lavos server` on the test database (same argv, own port and data dir)."""
    started: list[Server] = []
    venue = without_closing_warning(tmp_path)

    def start(name: str, port: int | None = None) -> Server:
        port = port or _free_port()
        log = tmp_path / f"server-{name}-{len(started)}.log"
        env = {**os.environ, "LAVOS_DATA_DIR": str(tmp_path / name)}
        env.pop("LAVOS_DB", None)
        with open(log, "w") as out:
            proc = subprocess.Popen(
                server_argv(mosquitto.port, pg_url, port, tmp_path / name, *POLL, venue=venue),
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        server = Server(proc, f"http://127.0.0.1:{port}", log)
        started.append(server)
        wait_serving(proc, server.base, log)
        return server

    yield start
    for s in started:
        if s.proc.poll() is None:
            s.proc.send_signal(signal.SIGTERM)
            try:
                s.proc.wait(20)
            except subprocess.TimeoutExpired:
                s.proc.kill()
                s.proc.wait()


def manager_token(pg_url: str) -> dict[str, str]:
    store = open_store(pg_url)
    try:
        with store.session() as db:
            create_user(db, "boss", new_password("Manažér-tajné-heslo-7", CHEAP), "manager", actor="test")
            token = issue_token(db, "boss", "failover-test", actor="test")
    finally:
        store.close()
    return {"Authorization": f"Bearer {token}"}


def hub_connections(mosquitto: Any) -> int:
    """How many times the hub's login has connected to the broker so far."""
    return len(re.findall(r"New client connected from \S+ as lavos-hub ", mosquitto.log_text()))


class Players(threading.Thread):
    """Round after round: a drop on every pool table, a goal on every foosball table."""

    def __init__(self, nodes: Any) -> None:
        super().__init__(daemon=True)
        self.nodes, self.done = nodes, threading.Event()
        self.driven = dict.fromkeys(POOL + FOOS, 0)
        self.rounds = 0

    def run(self) -> None:
        i = 0
        while not self.done.is_set():
            for t in POOL:
                node, factory = self.nodes[t]
                drop_balls(factory, node, i % 6, 1)
                self.driven[t] += 1
            for t in FOOS:
                node, factory = self.nodes[t]
                score(factory, node, "home")
                self.driven[t] += 1
            i += 1
            self.rounds = i
            # Rounds on one pin closer than ~0.1 s would merge into one pulse; 0.5 s apart, not 0.25: a
            # clean-clone run once timed out waiting for every drop and goal (each node had sent all it
            # counted), the goals on one pin every round the likeliest to run together on a busy machine.
            time.sleep(0.5)

    def stop(self) -> dict[str, int]:
        self.done.set()
        self.join(10)
        return self.driven


def light_switches(nodes: Any) -> dict[str, int]:
    """Per table, how often its light pin has changed state since the node started."""
    return {t: len(factory.pin(node.config.pins.light).states) for t, (node, factory) in nodes.items()}


@pytest.mark.slow
def test_standby_takes_over_a_killed_hub_and_nothing_is_lost(
    mosquitto: Mosquitto, servers: Callable[..., Any], pg_url: Any, tmp_path: Path
) -> None:
    auth = manager_token(pg_url)
    active = servers("a")
    wait_until(active.is_hub, what="the first server is the hub")
    standby = servers("b")
    assert standby.is_standby(), standby.health()
    page = httpc.get(f"{standby.base}/", timeout=2)
    assert page.status_code == 503 and "záložný hub" in page.text.lower()  # Slovak first
    page = httpc.get(f"{standby.base}/", cookies={"lavos_lang": "en"}, timeout=2)
    assert "This is the standby hub" in page.text
    connections = hub_connections(mosquitto)
    assert connections >= 1  # the log does show the hub's connections
    with contextlib.ExitStack() as stack:
        nodes = {t: stack.enter_context(running_node(mosquitto, tmp_path, t)) for t in TABLES}
        wait_until(lambda: all(link_of(n).connected for n, _ in nodes.values()), what="14 nodes connected")
        sessions = {}
        for t in BILLIARD:
            r = httpc.post(f"{active.base}/api/sessions", json={"table": t}, headers=auth, timeout=5)
            assert r.status_code == 201, r.text
            sessions[t] = r.json()["id"]
        wait_until(lambda: all(light_of(nodes[t][0]).on for t in BILLIARD), what="every session's light on")
        time.sleep(1.0)  # the hub's retained commands have all arrived
        switches = light_switches(nodes)
        assert all(switches[t] > switches["darts-01"] for t in BILLIARD), switches  # the pins do record switching
        assert hub_connections(mosquitto) == connections, "the standby connected to the broker"

        players = Players(nodes)
        players.start()
        wait_until(lambda: players.rounds >= 4, what="play under way on the first hub")
        os.kill(active.proc.pid, signal.SIGKILL)
        active.proc.wait()
        wait_until(standby.is_hub, what="the standby leads")
        led_at = players.rounds
        wait_until(lambda: players.rounds >= led_at + 4, what="play on the new hub")  # tables keep playing on it
        driven = players.stop()

        store = open_store(pg_url)
        stack.callback(store.close)

        def all_stored() -> bool:
            return all(len(stored_events(store, t, "pocket" if t in POOL else "goal")) == n for t, n in driven.items())

        wait_until(all_stored, what="every drop and goal stored")
        time.sleep(0.5)  # nothing more arrives: a copy would show now
        for t, n in driven.items():
            rows = stored_events(store, t, "pocket" if t in POOL else "goal")
            assert len(rows) == n, (t, len(rows), n)
            assert_each_once(rows)
        assert light_switches(nodes) == switches, "the failover switched a light"
        assert all(light_of(nodes[t][0]).on for t in BILLIARD) and not light_of(nodes["darts-01"][0]).on

        # the API answers on the new hub: every bill by the hub's clock, and a new session works
        for sid in sessions.values():
            r = httpc.post(f"{standby.base}/api/sessions/{sid}/stop", headers=auth, timeout=5)
            assert r.status_code == 200, r.text
            assert_billed_by_central_clock(store, sid)
        wait_until(lambda: not any(light_of(nodes[t][0]).on for t in BILLIARD), what="lights off after the stops")
        r = httpc.post(f"{standby.base}/api/sessions", json={"table": "pool-03"}, headers=auth, timeout=5)
        assert r.status_code == 201, r.text
        wait_until(lambda: light_of(nodes["pool-03"][0]).on, what="the new hub drives the light")
        assert httpc.post(f"{standby.base}/api/sessions/{r.json()['id']}/stop", headers=auth, timeout=5).status_code == 200
        assert_billed_by_central_clock(store, r.json()["id"])
    assert TAKEN_OVER not in mosquitto.log_text(), "two processes held the hub's MQTT session at once"
    assert hub_connections(mosquitto) == connections + 1, "\n".join(x for x in mosquitto.log_text().splitlines() if "lavos-hub" in x)


@pytest.mark.slow
def test_the_old_hub_comes_back_as_the_standby(mosquitto: Mosquitto, servers: Callable[..., Any], pg_url: Any, tmp_path: Path) -> None:
    auth = manager_token(pg_url)
    first = servers("a")
    wait_until(first.is_hub, what="the first server is the hub")
    port_a = int(first.base.rsplit(":", 1)[1])
    second = servers("b")
    assert second.is_standby()
    with running_node(mosquitto, tmp_path, "pool-07") as (node, factory):
        wait_until(lambda: link_of(node).connected, what="node connected")
        sid = httpc.post(f"{first.base}/api/sessions", json={"table": "pool-07"}, headers=auth, timeout=5).json()["id"]
        wait_until(lambda: light_of(node).on, what="light on")

        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait()
        wait_until(second.is_hub, what="the standby leads")
        connections = hub_connections(mosquitto)
        back = servers("a", port_a)  # systemd's restart: same box, same command line
        assert back.is_standby(), back.health()
        drop_balls(factory, node, 1, 3)  # the hub keeps working while the old one waits
        time.sleep(3)  # several of the standby's polls
        assert back.is_standby() and second.is_hub()
        assert hub_connections(mosquitto) == connections, "the returning server connected to the broker while the other led"
        assert "took over" not in back.log_text()
        store = open_store(pg_url)
        try:
            wait_until(lambda: len(stored_events(store, "pool-07")) == 3, what="drops stored by the hub")
            assert light_of(node).on

            # and when the hub stops, the one that came back takes over in its turn
            second.proc.send_signal(signal.SIGTERM)
            assert second.proc.wait(20) == 0
            wait_until(back.is_hub, what="the returned server leads once the lock is free")
            r = httpc.post(f"{back.base}/api/sessions/{sid}/stop", headers=auth, timeout=5)
            assert r.status_code == 200, r.text
            assert_billed_by_central_clock(store, sid)
            wait_until(lambda: not light_of(node).on, what="light off after the stop")
        finally:
            store.close()
    assert TAKEN_OVER not in mosquitto.log_text(), "two processes held the hub's MQTT session at once"


@pytest.mark.slow
def test_a_hub_that_loses_its_lock_exits_and_the_standby_leads(
    mosquitto: Mosquitto, servers: Callable[..., Any], postgres_cluster: PostgresCluster, pg_url: Any
) -> None:
    """Fencing: the hub's lock session ended under it (here by PostgreSQL, as a network cut or an
    administrator would) makes it exit non-zero before the standby's MQTT connect: Mosquitto never
    sees the two at once."""
    hub = servers("a")
    wait_until(hub.is_hub, what="the first server is the hub")
    standby = servers("b")
    assert standby.is_standby()
    database = pg_url.rsplit("/", 1)[1]
    postgres_cluster.execute(
        "SELECT pg_terminate_backend(l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        f"WHERE l.locktype = 'advisory' AND l.granted AND a.datname = '{database}'"
    )
    assert hub.proc.wait(HANG_S) == 3, hub.log_text()
    assert "lost the hub lock" in hub.log_text()
    wait_until(standby.is_hub, what="the standby leads")
    assert TAKEN_OVER not in mosquitto.log_text()
