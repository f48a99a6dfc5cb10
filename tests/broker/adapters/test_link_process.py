"""The hub's MQTT link in a child process (broker.adapters.link_process), as `lavos server` runs it.

1. Events go through it exactly once, and light commands come back out through it.
2. The child killed in the middle of a stream: it is started again, and every event is stored
   once (what was not acked is redelivered; what was is not lost).
3. The hub's process SIGKILLed: the child goes with it, so no orphan holds the hub's MQTT
   session (a standby taking over would otherwise be kicked off and back in: tests/faults/test_failover.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import select

from broker.floor.games import StartGame, StopGame
from broker.storage.models import Event
from sim.mosquitto import Mosquitto
from tests.support.hub import (
    VENUE,
    fresh_login,
    hub_link,
    hub_url,
    light_of,
    link_child,
    link_of,
    link_pid,
    process_link,
    running_node,
    started_hub,
)
from tests.support.mqtt import publish_events
from tests.support.waiting import wait_until

TABLE = "pool-04"
# The events these tests publish come from another table's login: the broker makes a login its
# client id (use_username_as_clientid), so a publisher logged in as TABLE would take over the
# running node's connection and the node's reconnect would then cut the publisher off mid-stream.
SENDER = "pool-05"


def _seqs(store: Any, boot: str) -> list[int]:
    with store.reader() as db:
        return sorted(db.scalars(select(Event.seq).where(Event.boot == boot)).all())


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # an orphan's zombie waits for init to reap it: it holds nothing


def test_events_in_and_light_commands_out_through_the_child(mosquitto: Mosquitto, db_url: str, tmp_path: Path) -> None:
    login = fresh_login()
    with started_hub(db_url, mosquitto=mosquitto, client_id=login, link_process=True) as hub:
        assert link_child(hub).is_alive() and link_pid(hub) != os.getpid()
        wait_until(lambda: hub.mqtt_connected, what="the child connected")
        with running_node(mosquitto, tmp_path, TABLE) as (node, _):
            wait_until(lambda: link_of(node).connected, what="the node connected")
            hub.execute(StartGame(table=TABLE, actor="staff"))
            wait_until(lambda: light_of(node).on, what="the light command through the child")
            publish_events(mosquitto.port, SENDER, "boot-lp", 50)
            wait_until(lambda: _seqs(hub.store, "boot-lp") == list(range(50)), what="50 events stored once")
            wait_until(lambda: hub_link(hub).stats.acked >= 50, what="acked after the commit")


def test_a_killed_child_is_restarted_and_no_event_is_lost_or_doubled(mosquitto: Mosquitto, db_url: str) -> None:
    login = fresh_login()
    n = 3000
    with started_hub(db_url, mosquitto=mosquitto, client_id=login, link_process=True) as hub:
        wait_until(lambda: hub.mqtt_connected, what="the child connected")
        hub.execute(StartGame(table=TABLE, actor="staff"))
        first = link_pid(hub)
        publisher = threading.Thread(target=publish_events, args=(mosquitto.port, TABLE, "boot-kill", n, 0.0005))
        publisher.start()
        wait_until(lambda: len(_seqs(hub.store, "boot-kill")) > 200, what="the stream under way")
        os.kill(first, signal.SIGKILL)
        publisher.join(60)
        wait_until(lambda: process_link(hub).restarts == 1 and hub.mqtt_connected, timeout=30, what="the child started again")
        wait_until(lambda: len(_seqs(hub.store, "boot-kill")) == n, timeout=60, what=f"all {n} events stored")
        assert _seqs(hub.store, "boot-kill") == list(range(n)), "an event lost or stored twice"
        assert hub.handlers.duplicates >= 0  # redeliveries are dropped by the key, whatever their number
        wait_until(lambda: hub.runtime[TABLE].drops == n, what="each drop counted once")
        assert link_pid(hub) != first


_HUB_SCRIPT = """
import sys, time
from broker.adapters.hub_link import MqttUrl
from broker.compose import build_hub, open_store
from broker.domain.venue import load_venue
hub = build_hub(load_venue(sys.argv[1]), open_store(sys.argv[2]), link_process=True,
                mqtt_url=MqttUrl("127.0.0.1", int(sys.argv[3]), sys.argv[4], sys.argv[5], False))
hub.start()
print(hub.link._proc.pid, flush=True)
time.sleep(600)
"""


def test_the_child_dies_with_a_killed_hub(mosquitto: Mosquitto, tmp_path: Path) -> None:
    login = fresh_login()
    url = hub_url(mosquitto, login)
    assert url.username is not None and url.password is not None
    proc = subprocess.Popen(
        [sys.executable, "-c", _HUB_SCRIPT, str(VENUE), f"sqlite:///{tmp_path / 'hub.db'}", str(url.port), url.username, url.password],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        wait_until(lambda: f"as {login} " in mosquitto.log_text(), what="the child connected")
        assert _alive(child)
        proc.kill()
        proc.wait(10)
        wait_until(lambda: not _alive(child), what="the child gone with its parent")
        wait_until(lambda: f"{login} closed its connection" in mosquitto.log_text(), what="the session let go")
    finally:
        proc.kill()


def test_a_broker_restart_reconnects_the_child_and_commands_still_reach_the_node(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "mq", users={t: f"pw-{t}" for t in (TABLE, SENDER)}).start()
    try:
        with (
            started_hub(tmp_path / "hub.db", mqtt_url=hub_url(broker), link_process=True) as hub,
            running_node(broker, tmp_path, TABLE) as (node, _),
        ):
            wait_until(lambda: hub.mqtt_connected and link_of(node).connected, what="hub and node connected")
            session = hub.execute(StartGame(table=TABLE, actor="staff"))
            wait_until(lambda: light_of(node).on, what="light on")
            broker.stop()
            wait_until(lambda: not hub.mqtt_connected, what="the hub sees the broker gone")
            assert light_of(node).on, "the outage switched the light"
            broker.start()
            wait_until(lambda: hub_link(hub).stats.connects == 2 and hub.mqtt_connected, timeout=30, what="the child reconnected")
            wait_until(lambda: link_of(node).connected, timeout=30, what="the node reconnected")
            publish_events(broker.port, SENDER, "boot-after", 20)
            wait_until(lambda: _seqs(hub.store, "boot-after") == list(range(20)), what="events after the restart stored")
            hub.execute(StopGame(game=session, actor="staff"))
            wait_until(lambda: not light_of(node).on, what="the stop's light command through the new connection")
            assert process_link(hub).restarts == 0  # the child itself lived through it
    finally:
        broker.stop()
