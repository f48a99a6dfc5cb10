"""The shipped ACL, on a real Mosquitto: a node can write only its own table's topics."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING

from tests.support.mqtt import Collector

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto


def test_acl_confines_a_node_to_its_own_topics(mosquitto: Mosquitto) -> None:
    hub = Collector(mosquitto.port)
    intruder = Collector(mosquitto.port, username="pool-01", password="pw-pool-01", topics=("lavos/v1/table/pool-01/light/set",))
    for topic in ("lavos/v1/table/pool-02/telemetry", "lavos/v1/table/pool-02/event/pocket", "lavos/v1/table/pool-02/light/set"):
        # Mosquitto 2.0 drops the connection of a client that publishes where it must not,
        # so the outcome of these calls is not asserted; what reaches the hub is.
        info = intruder.client.publish(topic, json.dumps({"uptime_s": 1, "outbox": 0}), qos=0)
        with contextlib.suppress(RuntimeError, ValueError):
            info.wait_for_publish(2)  # on the wire before the honest pool-01 takes over the login
    intruder.close()  # one connection per login: the honest one below would replace it anyway
    honest = Collector(mosquitto.port, username="pool-01", password="pw-pool-01", topics=("lavos/v1/table/pool-01/light/set",))
    honest.publish("lavos/v1/table/pool-01/telemetry", json.dumps({"uptime_s": 2, "outbox": 0}))
    got = hub.wait_for(lambda m: m.topic.endswith("pool-01/telemetry"))
    assert json.loads(got.payload)["uptime_s"] == 2
    assert not hub.matching(lambda m: "pool-02" in m.topic)
    for c in (hub, honest):
        c.close()
