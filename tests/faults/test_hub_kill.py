"""Issue 6: the hub killed with SIGKILL mid-evening and restarted.

Sessions, alerts and check-ins continue; every bill equals an uninterrupted run's; no event is
applied twice. (tests/broker/floor/test_hub_restart.py covers the single-session case.)
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from broker.domain.billing import billed_seconds, time_amount_cents
from broker.storage.engine import open_store
from broker.storage.members import add_member
from broker.storage.models import Alert, Event, FoosballCheckin
from tests.broker.floor.test_hub_restart import start_hub
from tests.broker.floor.test_service_e2e import drop_balls, score
from tests.support.driven import ask
from tests.support.hub import light_of, link_of, running_node
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


def test_sigkill_mid_evening_keeps_sessions_alerts_and_checkins(mosquitto: Mosquitto, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hub.db'}"
    store = open_store(db_url)
    with store.session() as db:
        member_id = add_member(db, "Ambra Tomáš", actor="test").id

    def count(model: Any, *where: Any) -> int | None:
        with store.reader() as db:
            return db.scalar(select(func.count()).select_from(model).where(*where))

    def goals() -> int:
        with store.reader() as db:
            return db.scalar(select(func.sum(FoosballCheckin.goals)).where(FoosballCheckin.member_id == member_id)) or 0

    hub = start_hub(db_url, mosquitto.port)
    try:
        with contextlib.ExitStack() as stack:
            nodes = {t: stack.enter_context(running_node(mosquitto, tmp_path, t)) for t in ("pool-04", "pool-02", "foos-01")}
            wait_until(lambda: all(link_of(n).connected for n, _ in nodes.values()), timeout=15)
            sids = {t: int(ask(hub, f"start {t}")) for t in ("pool-04", "carom-01")}
            assert ask(hub, f"checkin foos-01 {member_id}") == "ok"
            drop_balls(nodes["pool-02"][1], nodes["pool-02"][0], 0, 2)  # nobody paid for pool-02
            wait_until(lambda: count(Alert, Alert.kind == "play_without_session", Alert.closed_at.is_(None)) == 1, what="alert")
            score(nodes["foos-01"][1], nodes["foos-01"][0], "home", 2)
            wait_until(lambda: goals() == 2, what="2 goals for the member")
            drop_balls(nodes["pool-04"][1], nodes["pool-04"][0], 1, 10)

            os.kill(hub.pid, signal.SIGKILL)
            hub.wait()
            time.sleep(0.3)
            drop_balls(nodes["pool-04"][1], nodes["pool-04"][0], 2, 5)
            time.sleep(0.3)
            hub = start_hub(db_url, mosquitto.port)

            wait_until(lambda: count(Event, Event.table_id == "pool-04") == 15, timeout=30, what="15 drops, once each")
            # the check-in survived: goals after the restart are the member's, and raise nothing
            score(nodes["foos-01"][1], nodes["foos-01"][0], "away", 1)
            wait_until(lambda: goals() == 3, what="the goal after the restart counted for the member")
            assert count(Alert, Alert.kind == "foosball_no_member") == 0
            # the alert is still open, and more drops do not open a second one
            drop_balls(nodes["pool-02"][1], nodes["pool-02"][0], 1, 1)
            wait_until(lambda: count(Event, Event.table_id == "pool-02") == 3)
            assert count(Alert, Alert.kind == "play_without_session") == 1
            assert light_of(nodes["pool-04"][0]).on
            bills = {t: json.loads(ask(hub, f"stop {sid}")) for t, sid in sids.items()}
            wait_until(lambda: not light_of(nodes["pool-04"][0]).on, what="light off after stop")
    finally:
        hub.kill()
        hub.wait()
        store.close()
    for t, bill in bills.items():
        played = datetime.fromisoformat(bill["stopped_at"]) - datetime.fromisoformat(bill["started_at"])
        assert bill["total_cents"] == time_amount_cents(600, billed_seconds(played, 60)), t
