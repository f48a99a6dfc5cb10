"""Issue 6: a node's wall clock jumps by hours during a session (no RTC, NTP syncing late).

The jumping clock is injected into the node (EdgeNode's clock, the real WallClock with its wall
time source and its NTP flag file under the test's control); the hub, Mosquitto and
the node's MQTT and outbox are real. The hub bills by its own clock, so the bill must not
move; events carry the node's time and say honestly whether NTP had synced.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from broker.floor.games import StartGame, StopGame
from broker.storage.models import Game
from edge.clock import WallClock
from tests.broker.floor.test_service_e2e import drop_balls
from tests.faults.checks import assert_billed_by_central_clock, assert_each_once, stored_events
from tests.support.hub import light_of, link_of, running_node, running_service
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


TABLE = "pool-01"
DROPS = 5  # per phase


class JumpingWall:
    """The system time plus an offset the test moves, as settimeofday() would."""

    def __init__(self, offset: timedelta) -> None:
        self.offset = offset

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def test_hours_long_clock_jumps_on_a_node_move_no_bill(mosquitto: Mosquitto, tmp_path: Path) -> None:
    wall = JumpingWall(timedelta(hours=-3))  # booted with a stale saved time, NTP not reached yet
    flag = tmp_path / "timesync-synchronized"
    clock = WallClock(flag, wall=wall, recheck_s=0.0)
    phases = [  # (what happened, offset, NTP synced)
        ("boot, 3 h behind", timedelta(hours=-3), False),
        ("jumps 8 h forward", timedelta(hours=5), False),
        ("NTP syncs: 5 h back", timedelta(0), True),
    ]
    with (
        running_service(mosquitto, tmp_path / "hub.db") as svc,
        running_node(mosquitto, tmp_path, TABLE, clock=clock) as (node, factory),
    ):
        wait_until(lambda: link_of(node).connected, timeout=20, what="node connected")
        real_start = datetime.now(UTC)
        sid = svc.execute(StartGame(table=TABLE, actor="anna"))
        wait_until(lambda: light_of(node).on, timeout=10, what="light on")
        for i, (_, offset, synced) in enumerate(phases):
            wall.offset = offset
            if synced:
                flag.touch()
            for d in range(DROPS):
                drop_balls(factory, node, (i + d) % 6, 1)
                time.sleep(0.2)  # drops on one pin closer than ~0.1 s could merge
        wait_until(lambda: len(stored_events(svc.store, TABLE)) == DROPS * len(phases), timeout=30, what="every drop stored")
        svc.execute(StopGame(game=sid, actor="anna"))
        real_end = datetime.now(UTC)
        rows = stored_events(svc.store, TABLE)
        assert svc.runtime[TABLE].drops == DROPS * len(phases), "a drop applied twice or never"

    assert_each_once(rows)
    rows.sort(key=lambda r: r.seq)
    assert [r.seq for r in rows] == list(range(rows[0].seq, rows[0].seq + len(rows))), "seq follows the events, not the clock"
    for i, (what, offset, synced) in enumerate(phases):
        for r in rows[i * DROPS : (i + 1) * DROPS]:
            assert r.ts_synced is synced, (what, r.seq, r.ts_synced)
            # The node's stamp is its own wrong clock, marked as such; once synced it is right.
            skew = r.node_ts.replace(tzinfo=UTC) - r.received_at.replace(tzinfo=UTC)
            assert abs(skew - offset) < timedelta(seconds=30), (what, skew)
    total = assert_billed_by_central_clock(svc.store, sid)
    with svc.store.reader() as db:
        row = db.get(Game, sid)
        assert row is not None and row.stopped_at is not None and row.started_at is not None
        played = row.stopped_at.replace(tzinfo=UTC) - row.started_at.replace(tzinfo=UTC)
    assert timedelta(0) < played <= real_end - real_start, f"billed {played} for {real_end - real_start} of real play"
    print(f"clock jumps -3h/+8h/-5h: {len(rows)} drops stored once, ts_synced false/false/true, billed {played}, {total} cents")
