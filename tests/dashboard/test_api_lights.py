"""Issue 3, must-show 2: the API drives a real node (EdgeNode on mock pins) through a real Mosquitto."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.storage.models import GameOp, Node
from tests.support.hub import link_of, running_node
from tests.support.matching import some
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from edge.agent import EdgeNode
    from sim.mosquitto import Mosquitto
    from tests.dashboard.conftest import Api


TABLE = "pool-01"  # a node with broker credentials in the mosquitto fixture, standard rate only


def _node_online(service: Any) -> bool:
    with service.store.reader() as db:
        node = db.get(Node, TABLE)
        return bool(node and node.online)


@pytest.fixture
def node(api: Api, mosquitto: Mosquitto, tmp_path: Path) -> Iterator[EdgeNode]:
    with running_node(mosquitto, tmp_path, TABLE) as (edge_node, _factory):
        # The node's birth makes the hub re-send the desired light; wait for that round trip
        # so it cannot cross the command under test.
        wait_until(lambda: link_of(edge_node).connected and _node_online(api.service), what="node online at the hub")
        wait_until(lambda: api.ok("GET", f"/api/tables/{TABLE}")["light"] is not None, what="light state known")
        yield edge_node


def test_start_lights_the_table_and_stop_bills_and_darkens_it(api: Api, node: EdgeNode) -> None:
    assert not some(node.light).on
    # How soon the relay follows: bench/edge_latency.py (light/set → relay) and bench/staff_action.py.
    sid = api.ok("POST", "/api/sessions", 201, json={"table": TABLE})["id"]
    wait_until(lambda: some(node.light).on, what="relay on")
    wait_until(lambda: api.ok("GET", f"/api/tables/{TABLE}")["light"]["on"], what="light state reported back")
    table = api.ok("GET", f"/api/tables/{TABLE}")
    assert table["node"]["online"] and table["session"]["id"] == sid
    assert table["light"] == {
        "on": True,
        "blink": False,
        "cause": "command",
    }  # staff read the light with the table (/api/nodes is the manager's)

    api.clock.advance(minutes=90)
    bill = api.ok("POST", f"/api/sessions/{sid}/stop")["bill"]
    wait_until(lambda: not some(node.light).on, what="relay off")
    assert (bill["total_cents"], bill["total"], len(bill["lines"])) == (900, "9,00 €", 1)


def test_prepaid_time_blinks_a_warning_then_stops_the_session(api: Api, node: EdgeNode) -> None:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": TABLE, "prepaid_minutes": 10})["id"]
    wait_until(lambda: some(node.light).on, what="relay on")
    api.clock.advance(minutes=4)
    api.service.watchdog.tick()
    time.sleep(0.1)
    assert not some(node.light).blinking  # 6 minutes left: no warning yet (it comes 5 minutes before)
    api.clock.advance(minutes=2)
    api.service.watchdog.tick()
    wait_until(lambda: some(node.light).blinking, what="warning blink")
    assert api.ok("GET", f"/api/sessions/{sid}")["prepaid_left_s"] == 4 * 60

    api.clock.advance(minutes=4)
    api.service.watchdog.tick()
    wait_until(lambda: not some(node.light).on and not some(node.light).blinking, what="relay off after expiry")
    done = api.ok("GET", f"/api/sessions/{sid}")
    assert (done["state"], done["amount_cents"], done["prepaid_left_s"]) == ("stopped", 100, 0)
    assert api.ok("GET", f"/api/tables/{TABLE}")["session"] is None
    with api.service.store.reader() as db:
        last = db.scalars(select(GameOp).where(GameOp.session_id == sid).order_by(GameOp.seq.desc())).first()
        assert last is not None
        assert (last.kind, last.actor, last.reason) == ("stop", "system", "prepaid time used up")
