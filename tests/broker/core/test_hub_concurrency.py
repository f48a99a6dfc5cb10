"""The hub's concurrency rules, through a real Mosquitto (docs/concurrency.md).

1. A staff stop racing the resend after a reconnect cannot leave the light on or a retained
   "running" session behind: the resend runs on the hub's writer, ordered with the stop (it
   used to run in paho's thread, reading the open sessions while a stop changed them).
2. The inbox is bounded and full means back-pressure, not loss: with the writer held, paho stops
   taking messages, none is acked, and once the writer goes on every one is stored once.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.adapters import link_process
from broker.floor.games import PauseGame, ResumeGame, StartGame, StopGame
from broker.storage.engine import open_store
from broker.storage.models import Event
from devices import contract
from tests.support.hub import fresh_login, hub_link, new_hub, running_service
from tests.support.mqtt import Collector, clear_session, publish_events
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


TABLE = "pool-04"
RACE_WINDOW_S = 1.0  # how long the resend is held between reading the hall and publishing


def _hold_first_read(lights: Any, method: str, read: threading.Event, armed: threading.Event) -> None:
    """Hold the hub's lights' next read of TABLE by `method` (from any thread but this one) for RACE_WINDOW_S
    after it has read: the resend has seen the session running, and publishes only later."""
    real = getattr(lights, method)
    test_thread = threading.current_thread()

    def held(table: Any, *args: Any, **kwargs: Any) -> Any:
        value = real(table, *args, **kwargs)
        if table == TABLE and armed.is_set() and threading.current_thread() is not test_thread:
            armed.clear()
            read.set()
            time.sleep(RACE_WINDOW_S)
        return value

    setattr(lights, method, held)  # on the instance: the hub's own calls go through it


@pytest.mark.parametrize("held_read", ["desired", "summary"])
def test_a_stop_racing_the_reconnect_resend_leaves_the_light_off(mosquitto: Mosquitto, db_url: str, held_read: Any) -> None:
    login = fresh_login()
    with running_service(mosquitto, db_url, client_id=login) as svc:
        svc.watchdog.stop()
        wait_until(lambda: svc.mqtt_connected, what="the hub connected")
        sid = svc.execute(StartGame(table=TABLE, actor="staff"))
        assert svc.ingest.wait_idle(10)
        wire = Collector(mosquitto.port, topics=(contract.light_set_topic(TABLE), contract.session_topic(TABLE)))
        try:
            read, armed = threading.Event(), threading.Event()
            _hold_first_read(svc.lights, held_read, read, armed)
            connects = hub_link(svc).stats.connects
            armed.set()
            # The broker drops the hub (its login connects elsewhere); the hub reconnects and resends.
            user, password = mosquitto.hub_login(login)
            clear_session(mosquitto.port, user, password)
            assert read.wait(15), "the hub never resent the table after its reconnect"
            svc.execute(StopGame(game=sid, actor="staff"))  # staff press stop while the resend is under way
            wait_until(lambda: hub_link(svc).stats.connects > connects, what="the reconnect counted")
            assert svc.ingest.wait_idle(10)
            time.sleep(RACE_WINDOW_S + 0.5)  # anything the resend still had to say has been said
            lights = wire.matching(lambda m: m.topic == contract.light_set_topic(TABLE))
            assert lights, "no light command seen"
            assert json.loads(lights[-1].payload)["on"] is False, "the light was left on after the stop"
        finally:
            wire.close()
        retained = Collector(mosquitto.port, topics=(contract.session_topic(TABLE),))
        try:
            last = retained.wait_for(lambda m: m.topic == contract.session_topic(TABLE))
            assert last.retain and json.loads(last.payload) is None, f"a retained session after the stop: {last.payload!r}"
        finally:
            retained.close()


# The in-process link holds at most the bound plus the message paho is handing over. The link in
# a child process (what `lavos server` runs) also holds what is in the pipe and its own queue, so
# that test publishes more than all of that can hold: paho in the child must stop reading too.
_IN_CHILD = link_process._CHILD_BOUND + 2 * link_process._FORWARD_BATCH + 2


@pytest.mark.parametrize("in_child", [False, True], ids=["link-thread", "link-process"])
def test_a_full_inbox_holds_messages_back_unacked_and_loses_none(mosquitto: Mosquitto, db_url: str, tmp_path: Path, in_child: Any) -> None:
    bound = 5
    n = _IN_CHILD + 1000 if in_child else 60
    login = fresh_login()
    store = open_store(db_url)
    svc = new_hub(store, mosquitto=mosquitto, client_id=login, inbox_bound=bound, link_process=in_child)
    svc.start()
    try:
        svc.watchdog.stop()
        wait_until(lambda: svc.mqtt_connected, what="the hub connected")
        assert svc.ingest.wait_idle(10)
        # Hold the writer the way a slow live view would: a listener that blocks.
        gate, held = threading.Event(), threading.Event()

        def slow_view(topic: Any, data: Any) -> None:
            if topic == "session":
                held.set()
                gate.wait(60)

        svc.subscribe(slow_view)
        starter = threading.Thread(target=lambda: svc.execute(StartGame(table=TABLE, actor="staff")))
        starter.start()
        assert held.wait(10)
        acked, received = hub_link(svc).stats.acked, hub_link(svc).stats.received

        publish_events(mosquitto.port, TABLE, "boot-bp", n)  # the broker has them all (PUBACKed)
        wait_until(lambda: svc.inbox.full() and hub_link(svc).stats.inbox_full_waits > 0, what="the inbox full")
        time.sleep(1.0 if in_child else 0.5)
        # paho waits for room instead of reading on: at most the bound plus the one it holds
        # (and, in a child process, what the pipe and the child's queue hold).
        assert hub_link(svc).stats.received - received <= bound + 1 + (_IN_CHILD if in_child else 0) < n
        assert hub_link(svc).stats.acked == acked, "a message was acked before the writer stored it"
        with store.reader() as db:
            assert db.scalar(select(func.count()).select_from(Event).where(Event.boot == "boot-bp")) == 0

        gate.set()
        starter.join(10)
        svc.unsubscribe(slow_view)

        def stored() -> int:
            with store.reader() as db:
                return db.scalars(select(func.count()).select_from(Event).where(Event.boot == "boot-bp")).one()

        wait_until(lambda: stored() == n, timeout=30, what=f"all {n} events stored")
        assert svc.ingest.wait_idle(10)
        with store.reader() as db:
            seqs = db.scalars(select(Event.seq).where(Event.boot == "boot-bp")).all()
        assert sorted(seqs) == list(range(n)), "an event lost or stored twice"
        assert svc.runtime[TABLE].drops == n
        wait_until(lambda: hub_link(svc).stats.acked - acked >= n, what="every message acked after its commit")
    finally:
        svc.close()
        store.close()


def test_a_staff_command_does_not_wait_behind_a_backlog(mosquitto: Mosquitto, db_url: str) -> None:
    """The writer serves commands before inbox batches: a click lands while ball drops queue up."""
    n = 3000
    login = fresh_login()
    with running_service(mosquitto, db_url, client_id=login) as svc:
        svc.watchdog.stop()
        wait_until(lambda: svc.mqtt_connected, what="the hub connected")
        sid = svc.execute(StartGame(table="pool-05", actor="staff"))
        assert svc.ingest.wait_idle(10)
        gate, held = threading.Event(), threading.Event()

        def slow_view(topic: Any, data: Any) -> None:
            if topic == "session" and data.get("action") == "pause":
                held.set()
                gate.wait(60)

        svc.subscribe(slow_view)
        pauser = threading.Thread(target=lambda: svc.execute(PauseGame(game=sid, actor="staff")))
        pauser.start()
        assert held.wait(10)
        applied, received = svc.handlers.applied, hub_link(svc).stats.received
        # Queued at the broker; the inbox gets as many as the broker's in-flight window (100 in
        # the shipped config) lets through unacked.
        publish_events(mosquitto.port, TABLE, "boot-backlog", n)
        wait_until(lambda: hub_link(svc).stats.received - received >= 50, what="a backlog in the inbox")
        done: list[int] = []

        def resume() -> None:
            svc.execute(ResumeGame(game=sid, actor="staff"))
            done.append(svc.handlers.applied)

        stopper = threading.Thread(target=resume)
        stopper.start()
        time.sleep(0.2)  # the resume is queued behind the held pause
        gate.set()
        stopper.join(30)
        pauser.join(10)
        svc.unsubscribe(slow_view)
        assert done, "the staff command never finished"
        # At most one batch (1000 messages) may have gone before it, never the whole backlog.
        assert done[0] - applied <= 1000, f"the command waited for {done[0] - applied} messages"
        wait_until(lambda: svc.handlers.applied - applied == n, timeout=60, what="the backlog applied")
