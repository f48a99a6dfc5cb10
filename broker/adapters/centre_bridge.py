"""The hall's bridge to the centre: its live, name-free state forwarded over the internet, in a process
of its own (`lavos central bridge`, deploy/systemd/lavos-bridge.service), never inside the hall's broker.

Why not a Mosquitto bridge (what the hall ran before, issue 29 item 11): a bridge runs in the main
loop of the hall's own broker, the one every table's light goes through. When the path to the centre
accepted the bridge's TCP connection and hung up at once (TLS "unexpected eof"), Debian 12's
Mosquitto 2.0.11 went into a busy loop (~80 % of a core), stopped serving the hall's hub and nodes
(14 of 40 light switches were lost, the hub lost its broker 8 times) and never linked up again after
the path healed, until it was restarted by hand (bench/wan_link.py reproduces it). A second,
bridge-only Mosquitto would take the hall's broker out of it, but would still spin a core of the
hall's box and still not come back. This is an ordinary MQTT client of both brokers instead:

- **The hall side** logs in to the hall's broker as `lavos-bridge`, whose ACL lets it read the
  forwarded topics and write nothing (deploy/mosquitto/acl): nothing can flow from the centre to
  the tables through it, whatever it is told. It is one more subscriber on the hall's broker, as
  a monitoring client is; its socket to the centre is nowhere near the hall's broker.
- **What crosses** (FORWARDED, the same as the bridge forwarded): each table's node status and
  light state, the name-free game state (`lavos/v1/ha/<table>/state`; the game summary names the
  member and never leaves the hall), the hub's status and the hall's layout, to
  `hall/<hall>/<topic>` on the centre's broker, retained, QoS 1. Every one of them is retained at
  the hall (the latest state, not history), so the bridge keeps only the latest payload of each
  topic (at most MAX_TOPICS) and sends all of them again on every connection to the centre: a
  message lost in a cut is repaired by the next connection, and nothing queues while the link is
  down, however long.
- **The link's state** for the centre's page ("bez spojenia od 19:42"): `hall/<hall>/bridge/state`
  "1" while the bridge is connected to both brokers, "0" when it loses the hall's broker, and "0"
  as its will on the centre's broker (which says it itself when the link drops), as the Mosquitto
  bridge's notifications did (broker.central.live reads them).
- **The centre side** is TLS only, checked against the centre's CA (`?cafile=`) and its host name,
  with the hall's venue id as its login (the centre's ACL lets it write only under `hall/<hall>/`).
  Every connection is a fresh client: a TCP connect and a TLS handshake within `connect_timeout_s`,
  the broker's answer (CONNACK) within the same, keep-alive pings after that (a silent path is
  given up after at most two keep-alive periods). Between attempts it waits, doubling from
  `retry_s[0]` to at most `retry_s[1]` (with a quarter's jitter, so halls that lost the centre
  together do not come back in step); a link that then held for `retry_s[1]` starts the doubling
  again. So a path that resets, answers garbage, swallows everything or crawls costs
  one attempt per `retry_s[1]` at most, and the link is back at most one wait and one attempt
  (`retry_s[1]` + `connect_timeout_s`) after the path is.
"""

from __future__ import annotations

import contextlib
import logging
import random
import select
import socket
import ssl
import threading
import time
from dataclasses import dataclass

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.reasoncodes import ReasonCode

from broker.adapters.hub_link import MqttUrl
from broker.domain.venue_layout import VENUE_TOPIC
from devices import contract
from devices.mqtt_plumbing import guarded

log = logging.getLogger("lavos.bridge")

# What the hall forwards to the centre (topic filters on the hall's broker); the centre subscribes
# to each under hall/+/ (broker.central.live).
FORWARDED = (
    contract.status_topic("+"),
    contract.light_state_topic("+"),
    f"{contract.ROOT}/ha/+/state",
    contract.HUB_STATUS_TOPIC,
    VENUE_TOPIC,
)
PREFIX = "hall"
LINK_STATE = "bridge/state"  # under hall/<hall>/: "1" linked, "0" not
LINK_UP, LINK_DOWN = b"1", b"0"
BRIDGE_LOGIN = "lavos-bridge"  # its login on the hall's broker (deploy/mosquitto/acl)
MAX_TOPICS = 5000  # 500 tables (the centre's bound) x 3 topics, the hub's two, and room to spare
MAX_INFLIGHT = 20  # unacknowledged publishes to the centre at once; the rest wait, conflated
KEEPALIVE_S = 30
RETRY_S = (1.0, 30.0)
CONNECT_TIMEOUT_S = 10.0
LOOP_S = 1.0  # the longest the centre side sleeps (new state from the hall, or stopping, wakes it at once)
LOG_AGAIN_S = 600.0  # an outage is logged as a warning at its start and then once per ten minutes


def hall_topic(hall: str, topic: str) -> str:
    """Where the centre's broker receives `topic` of hall `hall`."""
    return f"{PREFIX}/{hall}/{topic}"


@dataclass
class BridgeStats:
    hall_up: bool = False  # subscribed on the hall's broker
    centre_up: bool = False  # the centre's broker has accepted us
    centre_connects: int = 0
    centre_failures: int = 0  # attempts that did not get as far as the centre's acceptance
    forwarded: int = 0  # publishes the centre acknowledged
    topics: int = 0  # the state kept
    left_out: int = 0  # messages on topics past MAX_TOPICS, not forwarded
    last_error: str | None = None


class CentreBridge:
    """Forwards the hall's live state to the centre (see the module's docstring); `start()`, `close()`."""

    def __init__(
        self,
        hall: MqttUrl,
        centre: MqttUrl,
        *,
        keepalive_s: int = KEEPALIVE_S,
        retry_s: tuple[float, float] = RETRY_S,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ) -> None:
        if not centre.tls:
            raise ValueError("the link to the centre crosses the internet: give it as mqtts://HALL@host:8883?cafile=...")
        if not centre.username:
            raise ValueError("the centre's login is the hall's venue id: mqtts://petrzalka@central.example.org:8883")
        if not 0 < retry_s[0] <= retry_s[1]:
            raise ValueError("retry_s: 0 < the first wait <= the longest")
        self.hall_id = centre.username
        self.centre = centre
        self.keepalive_s = keepalive_s
        self.retry_s = retry_s
        self.connect_timeout_s = connect_timeout_s
        self.stats = BridgeStats()
        # The centre's CA, not the system's; the host name is checked (create_default_context does).
        self._tls = ssl.create_default_context(cafile=str(centre.ca_file) if centre.ca_file else None)
        self._lock = threading.Lock()
        self._latest: dict[str, bytes] = {}  # every forwarded topic's last payload (b"": cleared)
        self._pending: dict[str, bytes] = {}  # what the centre has not been sent yet, in arrival order
        self._hall_up = False
        self._stop = threading.Event()
        # The hall's side wakes the centre's (asleep in select() on its socket) when there is something to send.
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._warned_at: float | None = None  # the last warning of this outage (None: linked, or never tried)
        self._thread = threading.Thread(target=self._run, name="lavos-bridge-centre", daemon=True)
        self._hall = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=hall.username or BRIDGE_LOGIN, protocol=mqtt.MQTTv311)
        self._hall.username_pw_set(hall.username or BRIDGE_LOGIN, hall.password)
        if hall.tls:
            self._hall.tls_set_context(ssl.create_default_context(cafile=str(hall.ca_file) if hall.ca_file else None))
        self._hall.reconnect_delay_set(1, 5)  # the hall's own broker, on this box or its LAN
        self._hall.on_connect = guarded(self._on_hall_connect, logger=log)
        self._hall.on_subscribe = guarded(self._on_hall_subscribed, logger=log)
        self._hall.on_disconnect = guarded(self._on_hall_disconnect, logger=log)
        self._hall.on_message = guarded(self._on_hall_message, logger=log)
        self._hall_address = (hall.host, hall.port)

    # -- life ---------------------------------------------------------------------------

    def start(self) -> CentreBridge:
        self._hall.connect_async(*self._hall_address, keepalive=15)
        self._hall.loop_start()
        self._thread.start()
        return self

    def close(self) -> None:
        """Say "0" to the centre if linked (a clean goodbye does not fire the will), then stop."""
        self._stop.set()
        self._wake()
        self._thread.join(self.connect_timeout_s + 5)
        self._hall.disconnect()
        self._hall.loop_stop()
        self._wake_r.close()
        self._wake_w.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # a full pair is awake already
            self._wake_w.send(b"\0")

    # -- the hall's side (paho's thread) ------------------------------------------------

    def _on_hall_connect(self, client: mqtt.Client, userdata: object, flags: object, rc: object, props: object = None) -> None:
        if getattr(rc, "is_failure", False):
            log.error("the hall's broker refused the bridge's login: %s", rc)
            return
        client.subscribe([(t, 1) for t in FORWARDED])

    def _on_hall_subscribed(self, *args: object) -> None:
        with self._lock:
            self._hall_up = self.stats.hall_up = True
        self._wake()
        log.info("reading the hall's broker")

    def _on_hall_disconnect(self, *args: object) -> None:
        with self._lock:
            was, self._hall_up = self._hall_up, False
            self.stats.hall_up = False
        self._wake()
        if was and not self._stop.is_set():
            log.warning("lost the hall's broker; the centre is told the link is down until it is back")

    def _on_hall_message(self, client: mqtt.Client, userdata: object, msg: mqtt.MQTTMessage) -> None:
        topic, payload = msg.topic, bytes(msg.payload)
        with self._lock:
            if topic not in self._latest and len(self._latest) >= MAX_TOPICS:
                self.stats.left_out += 1
                if self.stats.left_out == 1:
                    log.warning("more than %d topics to forward: %s and any other new one left out", MAX_TOPICS, topic)
                return
            self._latest[topic] = payload
            self._pending.pop(topic, None)  # the newest goes to the end: older states of it are never sent
            self._pending[topic] = payload
            self.stats.topics = len(self._latest)
        self._wake()

    # -- the centre's side (its own thread) ---------------------------------------------

    def _run(self) -> None:
        delay = self.retry_s[0]
        while not self._stop.is_set():
            if self._session() >= self.retry_s[1]:
                # It held a while: a new cut starts from the shortest wait. A link that breaks as soon
                # as it is up (a path cutting every connection after a moment) keeps doubling.
                delay = self.retry_s[0]
            if self._stop.wait(delay * random.uniform(0.75, 1.0)):
                break
            delay = min(delay * 2, self.retry_s[1])

    def _client(self) -> mqtt.Client:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.hall_id, clean_session=True, protocol=mqtt.MQTTv311)
        client.username_pw_set(self.hall_id, self.centre.password)
        client.tls_set_context(self._tls)
        client.will_set(hall_topic(self.hall_id, LINK_STATE), LINK_DOWN, qos=1, retain=True)
        client.connect_timeout = self.connect_timeout_s
        client.max_inflight_messages_set(MAX_INFLIGHT)
        return client

    def _session(self) -> float:
        """One connection to the centre, until it breaks or the bridge stops; how long it was linked (0: never)."""
        session = _Session(self.stats)
        client = self._client()
        client.on_connect = guarded(session.on_connect, logger=log)
        client.on_publish = guarded(session.on_publish, logger=log)
        try:
            client.connect(self.centre.host, self.centre.port, keepalive=self.keepalive_s)  # TCP and TLS, within connect_timeout_s
            deadline = time.monotonic() + self.connect_timeout_s
            while session.answer is None:
                if not self._io(client, max(0.0, min(LOOP_S, deadline - time.monotonic()))):
                    raise ConnectionError("the connection closed before the centre's broker answered")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no answer from the centre's broker within {self.connect_timeout_s:g} s")
                if self._stop.is_set():
                    return 0.0
            if session.answer.is_failure:
                raise ConnectionRefusedError(f"the centre's broker refused the login {self.hall_id!r}: {session.answer}")
        except (OSError, ValueError) as e:  # ssl.SSLError, timeouts and refusals are OSErrors
            _drop(client)
            self._failed(e)
            return 0.0
        linked_at = time.monotonic()
        self.stats.centre_connects += 1
        self.stats.centre_up = True
        log.info("linked to the centre (%s:%s) as %s", self.centre.host, self.centre.port, self.hall_id)
        self._warned_at = None
        try:
            self._forward(client, session)
        finally:
            self.stats.centre_up = False
            _drop(client)
        return time.monotonic() - linked_at

    def _forward(self, client: mqtt.Client, session: _Session) -> None:
        """Send the whole state, then each change, until the connection breaks or the bridge stops."""
        with self._lock:
            self._pending = dict(self._latest)  # the centre may have lost anything: all of it again
        said: bytes | None = None
        while not self._stop.is_set():
            with self._lock:
                link = LINK_UP if self._hall_up else LINK_DOWN
                batch: list[tuple[str, bytes]] = []
                while self._pending and len(session.inflight) + len(batch) < MAX_INFLIGHT:
                    topic = next(iter(self._pending))
                    batch.append((topic, self._pending.pop(topic)))
            if link != said:
                self._publish(client, session, LINK_STATE, link)
                said = link
            for n, (topic, payload) in enumerate(batch):
                if not self._publish(client, session, topic, payload):
                    self._requeue(batch[n:])
                    break
            if not self._io(client, LOOP_S):
                log.warning("the link to the centre broke; connecting again")
                self.stats.last_error = "the link broke"
                return
        # Stopping: the centre hears "0" from us (a clean disconnect does not fire the will).
        if self._publish(client, session, LINK_STATE, LINK_DOWN):
            deadline = time.monotonic() + 2
            while session.inflight and time.monotonic() < deadline and self._io(client, 0.1):
                pass
        client.disconnect()

    def _io(self, client: mqtt.Client, timeout: float) -> bool:
        """Wait up to `timeout` for the centre's socket or a wake-up, then let paho read, write and
        keep alive (its calls for a loop of one's own); False once the connection is gone."""
        sock = client.socket()
        if sock is None:
            return False
        buffered = sock.pending() if isinstance(sock, ssl.SSLSocket) else 0  # TLS bytes select() cannot see
        try:
            readable, writable, _ = select.select(
                [sock, self._wake_r], [sock] if client.want_write() else [], [], 0.0 if buffered else timeout
            )
        except (OSError, ValueError):  # closed under us
            return False
        if self._wake_r in readable:
            with contextlib.suppress(OSError):
                self._wake_r.recv(4096)
        if (buffered or sock in readable) and client.loop_read() != MQTTErrorCode.MQTT_ERR_SUCCESS:
            return False
        if sock in writable and client.loop_write() != MQTTErrorCode.MQTT_ERR_SUCCESS:
            return False
        return client.loop_misc() == MQTTErrorCode.MQTT_ERR_SUCCESS

    def _publish(self, client: mqtt.Client, session: _Session, topic: str, payload: bytes) -> bool:
        info = client.publish(hall_topic(self.hall_id, topic), payload, qos=1, retain=True)
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            return False
        session.inflight.add(info.mid)
        return True

    def _requeue(self, items: list[tuple[str, bytes]]) -> None:
        with self._lock:
            for topic, payload in items:
                self._pending.setdefault(topic, payload)  # unless a newer state came meanwhile

    def _failed(self, e: BaseException) -> None:
        """Counted always; logged as a warning at the first failure of an outage and then once per
        LOG_AGAIN_S (a path that resets every attempt would otherwise write a line each time)."""
        self.stats.centre_failures += 1
        reason = f"{type(e).__name__}: {e}"
        self.stats.last_error = reason
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at > LOG_AGAIN_S:
            log.warning(
                "cannot reach the centre (%s:%s): %s; trying again, at most every %g s",
                self.centre.host,
                self.centre.port,
                reason,
                self.retry_s[1],
            )
            self._warned_at = now
        else:
            log.debug("cannot reach the centre: %s", reason)


class _Session:
    """One connection's answer and unacknowledged publishes (touched by the centre's thread only)."""

    def __init__(self, stats: BridgeStats) -> None:
        self.answer: ReasonCode | None = None
        self.inflight: set[int] = set()
        self.stats = stats

    def on_connect(self, client: mqtt.Client, userdata: object, flags: object, rc: ReasonCode, props: object = None) -> None:
        self.answer = rc

    def on_publish(self, client: mqtt.Client, userdata: object, mid: int, rc: object = None, props: object = None) -> None:
        if mid in self.inflight:
            self.inflight.discard(mid)
            self.stats.forwarded += 1


def _drop(client: mqtt.Client) -> None:
    """Close a connection paho's loop is not running for (no thread of its own here)."""
    sock = client.socket()
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.close()
