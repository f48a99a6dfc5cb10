"""The node's MQTT connection: paho-mqtt 2.x, guarded callbacks, birth/will, reconnect with backoff.

Clean sessions on MQTT 3.1.1 and 5 alike (correctness must not rest on a v5 feature or on the
broker keeping our session): subscriptions are made again on every connect, and the outbox, not
paho's memory, is the record of what is unacknowledged, so paho's own resend queue is dropped on
every connect and the pump replays from the outbox in seq order.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable

import paho.mqtt.client as mqtt
from paho.mqtt.client import ConnectFlags, DisconnectFlags
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from devices.mqtt_plumbing import guarded as _guarded
from devices.mqtt_plumbing import make_client, say_goodbye
from devices.nodeconfig import MqttSettings

log = logging.getLogger(__name__)

OnAck = Callable[[int, int, bool], None]  # (connection generation, mid, accepted)
OnMessage = Callable[[str, bytes, bool], None]  # (topic, payload, retained)


guarded = functools.partial(_guarded, logger=log)  # the node logs under its own name


def read_password(settings: MqttSettings) -> str | None:
    if settings.password_file is None:
        return None
    return settings.password_file.read_text(encoding="utf-8").strip()


class MqttLink:
    def __init__(
        self,
        settings: MqttSettings,
        client_id: str,
        *,
        will: tuple[str, bytes],
        subscriptions: list[str],
        on_connected: Callable[[], None],
        on_message: OnMessage,
        on_ack: OnAck,
    ) -> None:
        self.settings = settings
        self._subscriptions = subscriptions
        self._on_connected = on_connected
        self._on_message_cb = on_message
        self._on_ack = on_ack
        self._connected = threading.Event()
        self._subscribed = threading.Event()  # commands can reach us only from here on
        self.generation = 0  # +1 per successful connect; acks of an older connection mean nothing
        self.connects = 0
        self._closing = False
        v5 = settings.protocol == "5"
        self._v5 = v5
        self.client = make_client(
            client_id,
            v5=v5,
            persistent=False,
            username=client_id,
            password=read_password(settings),
            tls=settings.tls,
            ca_file=settings.ca_file,
            will=will,
            reconnect_s=(settings.reconnect_min_s, settings.reconnect_max_s),
            max_inflight=100,
        )
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self.client.on_subscribe = self._on_subscribe

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def reconnects(self) -> int:
        return max(0, self.connects - 1)

    def wait_connected(self, timeout: float) -> bool:
        """Wait until connected and subscribed to commands."""
        return self._subscribed.wait(timeout)

    def start(self) -> None:
        s = self.settings
        if self._v5:
            self.client.connect_async(s.host, s.port, keepalive=s.keepalive_s, clean_start=True)
        else:
            self.client.connect_async(s.host, s.port, keepalive=s.keepalive_s)
        self.client.loop_start()

    def publish(self, topic: str, payload: bytes, *, qos: int, retain: bool = False) -> tuple[int, int] | None:
        """Hand a message to paho; returns (generation, mid), or None when not connected."""
        if not self.connected:
            return None
        generation = self.generation
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            return None
        return generation, info.mid

    def close(self, last_words: tuple[str, bytes] | None = None) -> None:
        """Say goodbye (a clean disconnect does not fire the will), then stop paho's thread."""
        self._closing = True
        say_goodbye(self.client, last_words if self.connected else None, connected=self.connected)
        self._connected.clear()

    # ------------------------------------------------------------------ paho callbacks

    @guarded
    def _on_connect(
        self, client: mqtt.Client, userdata: object, flags: ConnectFlags, reason_code: ReasonCode, properties: Properties | None = None
    ) -> None:
        if reason_code.is_failure:
            log.error("broker %s:%s refused the connection: %s", self.settings.host, self.settings.port, reason_code)
            return
        self.generation += 1
        self.connects += 1
        client.drop_out_messages()
        self._subscribed.clear()
        if self._subscriptions:
            client.subscribe([(t, 1) for t in self._subscriptions])
        else:
            self._subscribed.set()
        self._connected.set()
        log.info("connected to %s:%s (connection #%d)", self.settings.host, self.settings.port, self.connects)
        self._on_connected()

    @guarded
    def _on_disconnect(
        self, client: mqtt.Client, userdata: object, flags: DisconnectFlags, reason_code: ReasonCode, properties: Properties | None = None
    ) -> None:
        was = self._connected.is_set()
        self._connected.clear()
        self._subscribed.clear()
        if was and not self._closing:
            log.warning("disconnected from %s:%s (%s); reconnecting with backoff", self.settings.host, self.settings.port, reason_code)

    @guarded
    def _on_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        self._on_message_cb(msg.topic, bytes(msg.payload), bool(msg.retain))

    @guarded
    def _on_subscribe(
        self, client: mqtt.Client, userdata: object, mid: int, reason_codes: list[ReasonCode], properties: Properties | None = None
    ) -> None:
        refused = [rc for rc in reason_codes if rc.is_failure]
        if refused:
            log.error("broker refused the command subscription: %s", refused)
        self._subscribed.set()

    @guarded
    def _on_publish(
        self, client: mqtt.Client, userdata: object, mid: int, reason_code: ReasonCode, properties: Properties | None = None
    ) -> None:
        self._on_ack(self.generation, mid, not reason_code.is_failure)
