"""Issue 9 item 1: no login may take over another's MQTT client id.

Real processes throughout: Mosquitto started from the shipped config and ACL (the `mosquitto`
fixture, sim/mosquitto.py), a real `lavos server` as the hub (client id lavos-hub,
persistent session), a real table node (EdgeNode) for pool-02, and paho/mosquitto_sub clients
holding pool-01's password. Before the fix, Mosquitto let any login use any client id, and a second
connection with an id in use kicks the first off.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from devices import contract
from sim.mosquitto import SHIPPED_ACL, SHIPPED_CONF
from tests.support import httpc
from tests.support.hub import REPO, link_of, running_node, wait_stored
from tests.support.mqtt import Collector, publish_events
from tests.support.server import LavosServer

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


HONEST, ATTACKER = "pool-02", "pool-01"


def impostor_connect(port: int, client_id: str, *, clean: bool = True, hold_s: float = 0.0) -> str:
    """One connect with pool-01's login under someone else's client id; returns the CONNACK."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean)
    c.username_pw_set(ATTACKER, f"pw-{ATTACKER}")
    result: list[str] = []
    done = threading.Event()

    def on_connect(cl: mqtt.Client, u: object, f: object, rc: ReasonCode, p: object = None) -> None:
        result.append(str(rc))
        done.set()

    c.on_connect = on_connect
    c.connect("127.0.0.1", port, keepalive=5)
    c.loop_start()
    try:
        done.wait(5)
        time.sleep(hold_s)
    finally:
        c.disconnect()
        c.loop_stop()
    return result[0] if result else "no answer"


@pytest.fixture
def server(mosquitto: Mosquitto, tmp_path: Path) -> Iterator[LavosServer]:
    srv = LavosServer(tmp_path / "server", mosquitto.port, users={}).start()
    yield srv
    srv.stop()


def takeovers(mosquitto: Any, client_id: str) -> int:
    result: int = mosquitto.log_text().count(f"Client {client_id} already connected, closing old connection")
    return result


def test_what_clubs_install_is_the_file_the_tests_run() -> None:
    """deploy/mosquitto/ holds links to the packaged files sim/mosquitto.py starts from: one copy."""
    for deployed, packaged in (("lavos.conf", SHIPPED_CONF), ("acl", SHIPPED_ACL)):
        path = REPO / "deploy" / "mosquitto" / deployed
        assert path.is_symlink() and path.resolve() == packaged.resolve(), path


def test_every_listener_of_the_shipped_config_ties_the_client_id_to_the_login() -> None:
    """use_username_as_clientid is per listener on Mosquitto 2.0: one above the first listener
    applies to none. So it must follow each listener line, the commented TLS one too."""
    lines = [ln.lstrip("#").strip() for ln in SHIPPED_CONF.read_text().splitlines() if not ln.startswith("# ")]
    listeners = [i for i, ln in enumerate(lines) if ln.startswith("listener ")]
    assert len(listeners) == 2  # plain 1883 and the TLS block
    for i in listeners:
        block = lines[i + 1 : next((j for j in listeners if j > i), len(lines))]
        assert "use_username_as_clientid true" in block, lines[i]


def test_a_node_login_looping_as_lavos_hub_neither_kicks_the_hub_nor_loses_events(mosquitto: Mosquitto, server: LavosServer) -> None:
    """(a) pool-01's password used as client id lavos-hub, again and again with a clean session,
    while the honest pool-02 publishes 100 events: all 100 stored exactly once, hub never kicked."""
    before = takeovers(mosquitto, "lavos-hub")
    stop = threading.Event()
    answers: list[str] = []

    def attack() -> None:
        while not stop.is_set():
            answers.append(impostor_connect(mosquitto.port, "lavos-hub", clean=True))
            time.sleep(0.03)

    attacker = threading.Thread(target=attack, daemon=True)
    attacker.start()
    try:
        publish_events(mosquitto.port, HONEST, "boot-a", 100, gap_s=0.02)
    finally:
        stop.set()
        attacker.join(10)
    assert len(answers) >= 10, answers  # the attack really ran alongside the honest node
    assert wait_stored(server.db_url, HONEST, "boot-a", 100) == (100, 100)
    assert takeovers(mosquitto, "lavos-hub") == before
    assert httpc.get(server.base_url + "/api/health", timeout=5).json()["mqtt"] is True


def test_a_clean_connect_as_lavos_hub_does_not_wipe_the_stopped_hubs_session(mosquitto: Mosquitto, server: LavosServer) -> None:
    """(b) Hub stopped, 10 events queued in its persistent session; then another login connects
    with client id lavos-hub and a clean session. All 10 are applied after the hub restarts."""
    server.stop()
    publish_events(mosquitto.port, HONEST, "boot-b", 10)
    assert impostor_connect(mosquitto.port, "lavos-hub", clean=True, hold_s=0.2) == "Success"  # it may log in, as itself
    server.start()
    assert wait_stored(server.db_url, HONEST, "boot-b", 10) == (10, 10)


def test_a_node_login_using_another_tables_id_neither_kicks_it_nor_fires_its_will(mosquitto: Mosquitto, tmp_path: Path) -> None:
    """(c) `mosquitto_sub -u pool-01 -i pool-02`: the real pool-02 stays connected and no
    "offline" (its will) is published for it."""
    watcher = Collector(mosquitto.port, topics=(contract.status_topic(HONEST),))
    try:
        with running_node(mosquitto, tmp_path, HONEST) as (node, _factory):
            assert link_of(node).wait_connected(10)
            watcher.wait_for(lambda m: json.loads(m.payload).get("state") == "online", 10)
            connects, before = link_of(node).connects, takeovers(mosquitto, HONEST)
            done = subprocess.run(
                [
                    "mosquitto_sub",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(mosquitto.port),
                    "-u",
                    ATTACKER,
                    "-P",
                    f"pw-{ATTACKER}",
                    "-i",
                    HONEST,
                    "-t",
                    "lavos/v1/table/pool-01/light/set",
                    "-W",
                    "1",
                ],
                capture_output=True,
                text=True,
                timeout=10,
            )
            assert "refused" not in (done.stderr + done.stdout).lower()  # pool-01 got in (as itself), the point is what it did not do
            time.sleep(1.0)  # a kicked node's will is published at once; give it time to show
            assert link_of(node).connected and link_of(node).connects == connects, "the real pool-02 was kicked off"
            assert takeovers(mosquitto, HONEST) == before
            assert not watcher.matching(lambda m: json.loads(m.payload).get("state") == "offline"), "pool-02's will fired"
    finally:
        watcher.close()
