"""Issue 3, must show 3: the hub killed with SIGKILL mid-session and restarted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from broker.domain.billing import billed_seconds, time_amount_cents
from broker.storage.engine import open_store
from broker.storage.models import Event
from tests.broker.floor.test_service_e2e import drop_balls
from tests.support.driven import ask, start_driven
from tests.support.hub import VENUE, light_of, link_of, running_node
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


def start_hub(db_url: str, port: int) -> subprocess.Popen[str]:
    return start_driven("tests.broker.floor.hub_proc", str(VENUE), db_url, str(port))


def test_sigkill_mid_session_loses_nothing_and_bills_the_same(mosquitto: Mosquitto, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hub.db'}"
    store = open_store(db_url)

    def stored_drops() -> int:
        with store.reader() as db:
            return db.scalars(select(func.count()).select_from(Event).where(Event.table_id == "pool-05")).one()

    hub = start_hub(db_url, mosquitto.port)
    try:
        with running_node(mosquitto, tmp_path, "pool-05") as (node, factory):
            wait_until(lambda: link_of(node).connected)
            sid = int(ask(hub, "start pool-05"))
            wait_until(lambda: light_of(node).on, what="light on")
            drop_balls(factory, node, 0, 20)
            wait_until(lambda: stored_drops() == 20, timeout=20, what="20 drops stored")

            drop_balls(factory, node, 1, 30)
            os.kill(hub.pid, signal.SIGKILL)  # mid-ingest
            hub.wait()
            drop_balls(factory, node, 2, 10)  # while the hub is dead: Mosquitto keeps them
            assert light_of(node).on, "a dead hub must not switch the light"

            hub = start_hub(db_url, mosquitto.port)
            wait_until(lambda: stored_drops() == 60, timeout=30, what="all 60 drops stored after the restart")
            with store.reader() as db:
                rows = db.execute(select(Event.boot, Event.seq).where(Event.table_id == "pool-05")).all()
            assert len(set(rows)) == 60  # each drop once
            assert light_of(node).on
            bill = json.loads(ask(hub, f"stop {sid}"))
            wait_until(lambda: not light_of(node).on, what="light off after stop")
    finally:
        hub.kill()
        hub.wait()
        store.close()
    played = datetime.fromisoformat(bill["stopped_at"]) - datetime.fromisoformat(bill["started_at"])
    # an uninterrupted run of the same length at the standard rate (pool-05 is a card table, no card shown)
    assert bill["total_cents"] == time_amount_cents(600, billed_seconds(played, 60))
