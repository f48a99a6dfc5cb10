"""Issue 9 item 2: one node's huge publishes must not cost other tables acknowledged events.

Real processes: Mosquitto from the shipped config (its own broker for this module: the old failure
leaves 270 MB queued), a real `lavos server`, mosquitto_pub as the flooding node. Before the fix
nothing bounded a packet, so three 90 MB publishes (queued for the stopped hub) passed
max_queued_bytes (256 MiB) and Mosquitto dropped the honest node's events it had PUBACKed.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from devices import contract
from sim.mosquitto import SHIPPED_CONF, Mosquitto
from tests.conftest import TABLES
from tests.support.hub import wait_stored
from tests.support.matching import found
from tests.support.mqtt import publish_events
from tests.support.server import LavosServer

if TYPE_CHECKING:
    from pathlib import Path


FLOODER, HONEST = "pool-01", "pool-02"
HUGE_BYTES = 90 * 1024 * 1024


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    b = Mosquitto(tmp_path_factory.mktemp("mosquitto-flood"), users={t: f"pw-{t}" for t in TABLES}).start()
    yield b
    b.stop()


def test_the_packet_limit_is_far_above_the_contracts_own_and_far_below_the_queue() -> None:
    conf = SHIPPED_CONF.read_text()
    limit = int(found(r"^max_packet_size (\d+)$", conf, re.M).group(1))
    queue = int(found(r"^max_queued_bytes (\d+)$", conf, re.M).group(1))
    assert limit >= 8 * contract.MAX_PAYLOAD_BYTES  # no honest message comes near it
    assert queue >= 1000 * limit  # one packet can never fill the hub's queue


def test_huge_publishes_while_the_hub_is_down_do_not_drop_an_honest_nodes_events(broker: Mosquitto, tmp_path: Path) -> None:
    server = LavosServer(tmp_path / "server", broker.port, users={}).start()  # makes the hub's persistent session
    server.stop()
    huge = tmp_path / "huge.bin"
    with huge.open("wb") as f:
        f.truncate(HUGE_BYTES)
    flood = [
        subprocess.run(
            [
                "mosquitto_pub",
                "-h",
                "127.0.0.1",
                "-p",
                str(broker.port),
                "-u",
                FLOODER,
                "-P",
                f"pw-{FLOODER}",
                "-t",
                contract.event_topic(FLOODER, "pocket"),
                "-q",
                "1",
                "-f",
                str(huge),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        for _ in range(3)
    ]
    huge.unlink()
    publish_events(broker.port, HONEST, "boot-flood", 10)  # all 10 PUBACKed by the broker
    server.start()
    try:
        assert wait_stored(server.db_url, HONEST, "boot-flood", 10) == (10, 10)
    finally:
        server.stop()
    assert all(done.returncode != 0 for done in flood), [d.returncode for d in flood]  # refused, not queued
    assert "Outgoing messages are being dropped" not in broker.log_text()
