"""A plain paho subscriber that collects what it receives, for asserting on the wire."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from devices import contract
from sim.mosquitto import Mosquitto
from tests.support.waiting import HANG_S


class Collector:
    """Without a username: a login of its own with the hub's rights (the broker makes
    the client id the login, so two collectors sharing one would keep kicking each other off)."""

    def __init__(
        self,
        port: int,
        username: str | None = None,
        password: str | None = None,
        topics: Iterable[str] = ("lavos/v1/#",),
        qos: int = 1,
        protocol: MQTTProtocolVersion = mqtt.MQTTv311,
    ) -> None:
        self._broker: Mosquitto | None = None
        if username is None:
            self._broker = Mosquitto.running[port]
            username, password = self._broker.probe_login()
        self.username = username
        self.messages: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self.all: list[mqtt.MQTTMessage] = []
        self._lock = threading.Lock()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=username, protocol=protocol)
        self.client.username_pw_set(username, password)
        self.client.on_message = self._on_message
        self.client.on_connect = lambda c, u, f, rc, p=None: c.subscribe([(t, qos) for t in topics])
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        if not self._subscribed.wait(5):
            raise TimeoutError("collector did not subscribe")

    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        with self._lock:
            self.all.append(msg)
        self.messages.put(msg)

    def wait_for(self, predicate: Callable[[mqtt.MQTTMessage], object], timeout: float = HANG_S) -> mqtt.MQTTMessage:
        """Return the first received message (past or future) matching predicate (the deadline only catches a hang)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                for m in self.all:
                    if predicate(m):
                        return m
            if time.monotonic() > deadline:
                raise TimeoutError("no matching message")
            time.sleep(0.005)

    def matching(self, predicate: Callable[[mqtt.MQTTMessage], object]) -> list[mqtt.MQTTMessage]:
        with self._lock:
            return [m for m in self.all if predicate(m)]

    def publish(self, topic: str, payload: str | bytes, qos: int = 1, retain: bool = False) -> mqtt.MQTTMessageInfo:
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(5)
        return info

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
        if self._broker is not None:
            self._broker.release_login(self.username)


def clear_session(port: int, username: str, password: str) -> None:
    """End a login's persistent session (what docs/scaling.md says to do for a retired hub slot):
    one clean-session connect with that login, which is also its client id."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=username, clean_session=True)
    c.username_pw_set(username, password)
    done = threading.Event()
    c.on_connect = lambda *a: done.set()
    c.connect("127.0.0.1", port, keepalive=5)
    c.loop_start()
    try:
        if not done.wait(5):
            raise TimeoutError(f"{username} did not connect to clear its session")
    finally:
        c.disconnect()
        c.loop_stop()


def pocket_event(table: str, seq: int, boot: str) -> bytes:
    ev = contract.PocketEvent(
        v=1,
        table=table,
        type="pocket",
        boot=boot,
        seq=seq,
        ts=datetime.now(UTC),
        ts_synced=True,
        data=contract.PocketData(pocket=seq % 6, pulse_ms=20.0),
    )
    return contract.encode(ev)


def publish_events(port: int, table: str, boot: str, n: int, gap_s: float = 0.0) -> None:
    """`n` QoS 1 pocket events as table `table`'s node (password "pw-<table>") sends them;
    returns once the broker PUBACKed every one."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=table)
    c.username_pw_set(table, f"pw-{table}")
    connected = threading.Event()
    c.on_connect = lambda client, userdata, flags, reason, properties: connected.set()
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        # A publish before the CONNACK fails at once ("not currently connected") on a busy machine.
        assert connected.wait(HANG_S), f"{table}: no CONNACK"
        infos = []
        for seq in range(n):
            infos.append(c.publish(contract.event_topic(table, "pocket"), pocket_event(table, seq, boot), qos=1))
            time.sleep(gap_s)
        for info in infos:
            info.wait_for_publish(10)
            assert info.is_published()
    finally:
        c.disconnect()
        c.loop_stop()
