"""HubLink.ack_many: a committed batch's PUBACKs as one write, on a real Mosquitto.

What must hold: every message acked that way is settled at the broker (a reconnect of the hub's
persistent session gets none of them again), and a message not acked is redelivered (so the
first check can fail)."""

from __future__ import annotations

import queue
import time
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from broker.adapters.hub_link import HubLink, MqttUrl
from broker.adapters.inbox import Inbound
from devices import contract

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto


def _publish(mosquitto: Any, n: int, first_seq: int) -> None:
    pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="pool-01")
    pub.username_pw_set("pool-01", "pw-pool-01")
    pub.connect("127.0.0.1", mosquitto.port)
    pub.loop_start()
    ts = contract.utcnow()
    infos = [
        pub.publish(
            contract.event_topic("pool-01", "pocket"),
            contract.encode(
                contract.PocketEvent(
                    v=1,
                    table="pool-01",
                    type="pocket",
                    boot="ack",
                    seq=first_seq + i,
                    ts=ts,
                    ts_synced=True,
                    data=contract.PocketData(pocket=1, pulse_ms=20.0),
                )
            ),
            qos=1,
        )
        for i in range(n)
    ]
    for info in infos:
        info.wait_for_publish(10)
    pub.disconnect()
    pub.loop_stop()


def _receive(link_inbox: queue.Queue[Any], n: int, timeout: float = 10.0) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        try:
            item = link_inbox.get(timeout=0.1)
        except queue.Empty:
            continue
        if isinstance(item, Inbound):  # the link also says when it (re)connected (LinkUp)
            got.append(item)
    return got


def _events(got: Any) -> list[int]:
    return sorted(contract.decode(m.topic, m.payload).body.seq for m in got if "/event/" in m.topic)


def test_ack_many_settles_the_batch_and_unacked_messages_come_back(mosquitto: Mosquitto) -> None:
    user, password = mosquitto.hub_login("lavos-ack-test")
    url = MqttUrl("127.0.0.1", mosquitto.port, user, password, False)
    inbox: queue.Queue[Any] = queue.Queue()
    link = HubLink(url, inbox)
    link.start()
    deadline = time.monotonic() + 10
    while not link.stats.connected and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # subscribed
    _publish(mosquitto, 60, 0)
    got = _receive(inbox, 60)
    assert _events(got) == list(range(60))
    acked = [m for m in got if _events([m])[0] < 50]
    link.ack_many(acked)  # seq 10 of them (50..59) stay unacked
    time.sleep(0.3)
    link.close()

    inbox2: queue.Queue[Any] = queue.Queue()
    again = HubLink(url, inbox2)
    again.start()
    redelivered = _receive(inbox2, 10, timeout=5)
    time.sleep(0.5)
    redelivered += _receive(inbox2, 100, timeout=0.2)
    again.ack_many(redelivered)
    again.close()
    assert _events(redelivered) == list(range(50, 60))  # the unacked ones, and none of the acked
