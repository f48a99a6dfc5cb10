"""Issue 6: a node killed with SIGKILL while it publishes, its SQLite outbox mid-write.

The agent is a real process (tests/edge/agent_proc.py) on mock pins, driving a long stream of ball
drops into its outbox while the pump publishes them through Mosquitto to a real hub
with a session open on the table; Mosquitto is frozen for 1.5 s so acknowledgements lag and the
outbox holds a backlog; then kill -9.

"Accepted" means committed to the outbox: an event is the node's responsibility from the moment
Outbox.add() commits it. After the kill that is exactly (what the hub stored from the old
boot) ∪ (what the outbox file still holds). Those must form one gapless seq range, and after the
restart all of them must be stored, each once. What is NOT accepted and may be gone: a pulse the
mock pin had driven whose beam timer had not yet filtered and emitted it (a few tens of ms of
drops), since it never reached the outbox; nothing on disk records it.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from broker.floor.games import StartGame, StopGame
from devices.nodeconfig import dump_node_config
from tests.edge.nodes import node_config
from tests.faults.checks import assert_billed_by_central_clock, assert_each_once, stored_events
from tests.support.driven import AgentProcess
from tests.support.hub import running_service
from tests.support.matching import some
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


TABLE = "pool-01"


def outbox_seqs(path: Any) -> set[int]:
    # Read-only: the killed agent's WAL is what a restarted agent would find, and we must not change it.
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return {seq for (seq,) in db.execute("SELECT seq FROM events")}


def test_kill_9_mid_write_loses_no_accepted_event_and_the_light_comes_back(mosquitto: Mosquitto, tmp_path: Path) -> None:
    cfg = node_config(tmp_path, mosquitto.port, table=TABLE)
    config_file = tmp_path / "node.toml"
    config_file.write_text(dump_node_config(cfg))
    with running_service(mosquitto, tmp_path / "hub.db") as svc:
        agent = AgentProcess(config_file)
        try:
            sid = svc.execute(StartGame(table=TABLE, actor="anna"))
            wait_until(lambda: agent.ask("light") == "on command", timeout=15, what="light on")
            assert agent.proc.stdin is not None
            agent.proc.stdin.write("pulses 0 5000\n")  # minutes of drops at test speed: still driving at the kill
            agent.proc.stdin.flush()
            wait_until(lambda: len(stored_events(svc.store, TABLE)) >= 50, timeout=30, what="drops flowing")
            # A frozen broker (SIGSTOP) holds back the PUBACKs, so the kill finds events published
            # but not yet acknowledged in the outbox as well as new ones being inserted.
            some(mosquitto.proc).send_signal(signal.SIGSTOP)
            time.sleep(1.5)
        finally:
            agent.kill9()
            some(mosquitto.proc).send_signal(signal.SIGCONT)
        old_boot = stored_events(svc.store, TABLE)[0].boot
        held = outbox_seqs(cfg.outbox.path)
        assert svc.ingest.wait_idle(30)
        time.sleep(1)  # anything Mosquitto still had in flight to us
        assert svc.ingest.wait_idle(30)
        delivered = {r.seq for r in stored_events(svc.store, TABLE)}
        accepted = delivered | held
        assert accepted == set(range(min(accepted), max(accepted) + 1)), "a hole in what the outbox accepted"

        agent = AgentProcess(config_file)
        try:
            # The new boot's birth makes the hub re-send the desired state: the session is open.
            wait_until(lambda: agent.ask("light") == "on command", timeout=20, what="light back on after the restart")
            wait_until(lambda: agent.ask("depth") == "0", timeout=60, what="the outbox drained")
            assert agent.ask("pulses 3 10") == "driven"
            wait_until(lambda: len(stored_events(svc.store, TABLE)) == len(accepted) + 10, timeout=30, what="all stored")
        finally:
            agent.quit()
        rows = stored_events(svc.store, TABLE)
        assert svc.runtime[TABLE].drops == len(rows), "a drop applied twice or never"
        svc.execute(StopGame(game=sid, actor="anna"))
        total = assert_billed_by_central_clock(svc.store, sid)
        duplicates = svc.handlers.duplicates

    assert_each_once(rows)
    old = sorted(r.seq for r in rows if r.boot == old_boot)
    new = [r.seq for r in sorted((r for r in rows if r.boot != old_boot), key=lambda r: r.node_ts)]
    assert set(old) == accepted, "an accepted event never arrived"
    assert len(new) == 10 and new == sorted(set(new)), "within the new boot, seq strictly increases"
    assert min(new) > max(old), "the new boot reused a seq"
    print(
        f"node kill -9: {len(accepted)} accepted ({len(held)} still in the outbox at the kill), all stored once ({duplicates} redelivered copies dropped); "
        f"new boot's seq from {min(new)} (old ended {max(old)}); light back on; bill {total} cents"
    )
