"""The hub's MQTT connection.

Exactly-once starts here: the hub subscribes at QoS 1 with a persistent session and acks a
message only after its effects are committed to the database (paho's ``manual_ack``). If the
service dies between receipt and commit, Mosquitto redelivers the message on reconnect, and the
(table, boot, seq) key in the database drops the copy. Callbacks only enqueue: an exception in a
paho callback kills its network thread, so every callback is guarded.

No I/O and no hall state in paho's thread: a message becomes an Inbound, a (re)connect a LinkUp,
both put into the writer's bounded inbox (broker.adapters.inbox says why a full inbox blocks here).
"""

from __future__ import annotations

import logging
import queue
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, ParamSpec
from urllib.parse import parse_qs, unquote, urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.client import ConnectFlags, DisconnectFlags
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from broker.adapters.inbox import HomeAssistantOnline, Inbound, InboxItem, LinkUp, put_waiting
from broker.domain.floor.home_assistant import HA_ONLINE, HA_STATUS_TOPIC
from devices import contract
from devices.mqtt_plumbing import guarded, make_client, say_goodbye
from devices.version import software_version

log = logging.getLogger("lavos.hub.mqtt")

HUB_CLIENT_ID = "lavos-hub"
_PUBACK = struct.Struct("!BBH")  # fixed header, remaining length 2, packet id
_PUBACK_HEADER = 0x40  # paho.mqtt.client.PUBACK
_P = ParamSpec("_P")


@dataclass(frozen=True)
class MqttUrl:
    host: str
    port: int
    username: str | None
    password: str | None
    tls: bool
    # A private CA (deploy/mosquitto/make-certs.sh) is in no system trust store, and `lavos
    # server` has only the URL to say which CA signed the broker's certificate.
    ca_file: Path | None = None

    @classmethod
    def parse(cls, url: str, password_file: Path | None = None) -> MqttUrl:
        """mqtt://user:password@host:1883 or mqtts://user@host:8883?cafile=/etc/lavos/ca.crt (password from a file)."""
        parts = urlsplit(url)
        if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
            raise ValueError(f"MQTT URL {url!r} must look like mqtt://user:password@host:1883 (or mqtts:// for TLS)")
        query = parse_qs(parts.query, keep_blank_values=True)
        if set(query) - {"cafile"} or len(query.get("cafile", [])) > 1 or query.get("cafile") == [""]:
            raise ValueError(f"MQTT URL {url!r}: the only query parameter is one ?cafile=/path/ca.crt (for mqtts://)")
        ca_file = Path(query["cafile"][0]) if "cafile" in query else None
        if ca_file is not None and parts.scheme != "mqtts":
            raise ValueError(f"MQTT URL {url!r}: ?cafile= needs TLS, use mqtts://")
        if ca_file is not None and not ca_file.is_file():
            raise ValueError(f"MQTT URL {url!r}: the CA file {ca_file} does not exist (see deploy/mosquitto/make-certs.sh)")
        try:
            port = parts.port or (8883 if parts.scheme == "mqtts" else 1883)
        except ValueError:
            raise ValueError(f"MQTT URL {url!r} has an invalid port") from None
        password = unquote(parts.password) if parts.password else None
        if password_file is not None:
            try:
                password = password_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ValueError(f"cannot read the MQTT password file {password_file}: {exc.strerror}") from None
            if not password:  # else the broker's refusal would blame the user name or the password, not the file
                raise ValueError(f"the MQTT password file {password_file} is empty; put the hub's password on its first line")
        return cls(parts.hostname, port, unquote(parts.username) if parts.username else None, password, parts.scheme == "mqtts", ca_file)


__all__ = ["HUB_CLIENT_ID", "HubLink", "Inbound", "LinkStats", "MqttUrl"]  # Inbound: re-exported for old imports


@dataclass
class LinkStats:
    connects: int = 0
    disconnects: int = 0
    received: int = 0
    # time.monotonic() of the first message received (one clock for every process on the machine):
    # where a drain's clock starts, however late a reader polls `received`.
    first_received_at: float | None = None
    published: int = 0
    acked: int = 0
    inbox_full_waits: int = 0  # times paho's thread waited for room in the inbox (back-pressure)
    callback_errors: int = 0
    connected: bool = False
    last_error: str | None = field(default=None)


class HubCommands:
    """The hub's two commands as MQTT messages, for any link that can `publish` (HubLink, ProcessLink)."""

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        raise NotImplementedError

    def send_light(self, table: str, command: contract.LightSet) -> None:
        self.publish(contract.light_set_topic(table), contract.encode(command), retain=False)

    def send_summary(self, table: str, summary: contract.SessionSummary | None) -> None:
        # Retained: a node that boots (or reconnects) learns its table's game at once.
        self.publish(contract.session_topic(table), contract.encode(summary), retain=True)


class HubLink(HubCommands):
    """Subscribe to what the nodes say; publish commands (never retained) and game summaries."""

    def __init__(
        self,
        url: MqttUrl,
        inbox: queue.Queue[InboxItem],
        *,
        client_id: str = HUB_CLIENT_ID,
        share_group: str | None = None,
        ca_file: Path | None = None,
        protocol: int = mqtt.MQTTv311,
        keepalive: int = 15,
        home_assistant: bool = False,
    ) -> None:
        self.url = url
        self.inbox = inbox
        self.stats = LinkStats()
        self._share_group = share_group
        self._home_assistant = home_assistant
        self._closing = threading.Event()
        # The shipped broker config (use_username_as_clientid) makes a connection's client id its
        # login, so the persistent session belongs to the login: ask for that id, so logs and
        # brokers without the setting agree. `client_id` counts only for a login-less URL.
        self.client_id = url.username or client_id
        self.client = make_client(
            self.client_id,
            v5=protocol == mqtt.MQTTv5,
            persistent=True,
            username=url.username,
            password=url.password,
            tls=url.tls,
            ca_file=ca_file or url.ca_file,
            will=(contract.HUB_STATUS_TOPIC, self._status("offline")),
            reconnect_s=(0.2, 10),
            max_inflight=1000,
            manual_ack=True,
        )
        self.client.max_queued_messages_set(0)
        self.client.on_connect = self._guard(self._handle_connect)
        self.client.on_disconnect = self._guard(self._handle_disconnect)
        self.client.on_message = self._guard(self._handle_message)
        self._keepalive = keepalive
        self._protocol = protocol

    # -- lifecycle -----------------------------------------------------------------

    def start(self, wait_s: float = 10.0) -> None:
        props = None
        if self._protocol == mqtt.MQTTv5:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 24 * 3600
        deadline = time.monotonic() + wait_s
        while True:
            try:
                if props is not None:
                    self.client.connect(self.url.host, self.url.port, keepalive=self._keepalive, clean_start=False, properties=props)
                else:
                    self.client.connect(self.url.host, self.url.port, keepalive=self._keepalive)
                break
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise ConnectionError(
                        f"cannot reach the MQTT broker at {self.url.host}:{self.url.port} ({exc}); is Mosquitto running?"
                    ) from None
                time.sleep(0.2)
        self.client.loop_start()

    def close(self) -> None:
        self._closing.set()
        say_goodbye(self.client, (contract.HUB_STATUS_TOPIC, self._status("offline")), connected=self.stats.connected)

    # -- outgoing ------------------------------------------------------------------

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        # paho queues while disconnected and sends after reconnect; commands are idempotent
        # (desired state), so a late command is still right.
        self.client.publish(topic, payload, qos=qos, retain=retain)
        self.stats.published += 1

    def ack(self, mid: int, qos: int) -> None:
        if qos > 0:
            self.client.ack(mid, qos)
            self.stats.acked += 1

    def ack_many(self, messages: list[Inbound]) -> None:
        """Ack a committed batch: its QoS 1 PUBACKs as one write.

        paho's ack() queues one 4-byte packet per message and wakes its network thread through a
        socket pair each time: per message, a system call on the ingest thread and a loop turn on
        paho's, both under the interpreter lock, a tenth of the hub's cost per event in a backlog
        drain (bench/hub_ingest.py). The same bytes (PUBACK, length 2, mid; valid in MQTT 3.1.1
        and 5) go out as one queued packet. It uses paho's internal _packet_queue (checked
        against paho-mqtt 2.1/2.2); without it, one ack() each, as before. Same guarantees: this
        is called only after the batch's commit, exactly as the per-message acks were.
        """
        queue_packet = getattr(self.client, "_packet_queue", None)
        if queue_packet is None or self._protocol not in (mqtt.MQTTv311, mqtt.MQTTv5):
            for m in messages:
                self.ack(m.mid, m.qos)
            return
        blob = b"".join([_PUBACK.pack(_PUBACK_HEADER, 2, m.mid) for m in messages if m.qos == 1])
        for m in messages:
            if m.qos == 2:  # the hub subscribes at QoS 1; kept right for a QoS 2 message anyway
                self.client.ack(m.mid, m.qos)
        if blob:
            queue_packet(mqtt.PUBACK, blob, 0, 0)
            self.stats.acked += len(blob) // _PUBACK.size

    # -- callbacks (paho thread) ---------------------------------------------------

    def _guard(self, fn: Callable[_P, None]) -> Callable[_P, None]:
        def counted() -> None:
            self.stats.callback_errors += 1

        return guarded(fn, on_error=counted, logger=log)

    def _handle_connect(
        self, client: mqtt.Client, userdata: object, flags: ConnectFlags, reason_code: ReasonCode, properties: Properties | None = None
    ) -> None:
        if reason_code.is_failure:
            self.stats.last_error = str(reason_code)
            log.error("MQTT broker refused the connection: %s (check the hub's username/password)", reason_code)
            return
        self.stats.connects += 1
        self.stats.connected = True
        prefix = f"$share/{self._share_group}/" if self._share_group else ""
        client.subscribe([(prefix + f, 1) for f in contract.NODE_OUTPUT_FILTERS])
        if self._home_assistant:
            # QoS 0 (HA's birth is QoS 0 anyway): nothing to ack, nothing to redeliver; not shared,
            # so with several hub processes each republishes (the configs are the same, retained).
            client.subscribe(HA_STATUS_TOPIC, 0)
        client.publish(contract.HUB_STATUS_TOPIC, self._status("online"), qos=1, retain=True)
        log.info("connected to MQTT broker %s:%s", self.url.host, self.url.port)
        # The resend of desired state is the writer's job (it reads hall state, and must be
        # ordered with staff commands): hand it over, do no I/O here.
        self._put(LinkUp(self.stats.connects))

    def _handle_disconnect(
        self, client: mqtt.Client, userdata: object, flags: DisconnectFlags, reason_code: ReasonCode, properties: Properties | None = None
    ) -> None:
        self.stats.connected = False
        self.stats.disconnects += 1
        if not self._closing.is_set():
            log.warning("lost the MQTT broker (%s); reconnecting", reason_code)

    def _handle_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        self.stats.received += 1
        if self.stats.first_received_at is None:
            self.stats.first_received_at = time.monotonic()
        if msg.topic == HA_STATUS_TOPIC:
            if msg.qos:  # not a node's event: nothing to commit first
                client.ack(msg.mid, msg.qos)
            if bytes(msg.payload).strip() == HA_ONLINE:
                self._put(HomeAssistantOnline())
            return
        self._put(Inbound(msg.topic, bytes(msg.payload), msg.mid, msg.qos, time.monotonic()))

    def _put(self, item: InboxItem) -> None:
        """Wait for room in the bounded inbox (broker.adapters.inbox.put_waiting says why)."""
        put_waiting(self.inbox, item, self._closing, self._count_full_wait)

    def _count_full_wait(self) -> None:
        self.stats.inbox_full_waits += 1

    @staticmethod
    def _status(state: Literal["online", "offline"]) -> bytes:
        return contract.encode(contract.HubStatus(state=state, ts=contract.utcnow(), version=software_version(), contract=contract.VERSION))
