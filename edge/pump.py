"""The pump: publishes outbox events in seq order at QoS 1 and deletes each one on its PUBACK.

Paho callbacks only enqueue acks here; this one thread owns the mid → seq map, so an ack can
never be matched before its publish has been recorded. After a reconnect (a new connection
generation) the map is forgotten and everything still in the outbox is sent again from the
start: a duplicate carries the same (boot, seq), a loss cannot happen.
"""

from __future__ import annotations

import collections
import logging
import threading

from edge.mqtt_link import MqttLink
from edge.outbox import Outbox

log = logging.getLogger(__name__)


class Pump:
    def __init__(self, outbox: Outbox, link: MqttLink, *, window: int = 100) -> None:
        self._outbox = outbox
        self._link = link
        self._window = window
        self._cond = threading.Condition()
        self._acks: collections.deque[tuple[int, int, bool]] = collections.deque()
        self._wake = False
        self._stop = False
        self._generation = 0
        self._inflight: dict[int, int] = {}
        self._cursor = -1
        self.rejected = 0
        self._thread = threading.Thread(target=self._run, name="outbox-pump", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def notify(self) -> None:
        """Something changed: a new event, a new connection."""
        with self._cond:
            self._wake = True
            self._cond.notify()

    def on_ack(self, generation: int, mid: int, accepted: bool) -> None:
        with self._cond:
            self._acks.append((generation, mid, accepted))
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not (self._stop or self._wake or self._acks):
                    self._cond.wait(0.5)
                if self._stop:
                    return
                acks = list(self._acks)
                self._acks.clear()
                self._wake = False
            try:
                self._settle(acks)
                self._send()
            except Exception:
                # A disk error must not end the pump: the next wake retries from the outbox.
                log.exception("outbox pump error (will retry)")
                self._stop_event_wait(1.0)

    def _stop_event_wait(self, seconds: float) -> None:
        with self._cond:
            if not self._stop:
                self._cond.wait(seconds)

    def _settle(self, acks: list[tuple[int, int, bool]]) -> None:
        for n, (generation, mid, accepted) in enumerate(acks):
            if generation != self._generation:
                continue
            seq = self._inflight.get(mid)
            if seq is None:
                continue  # a birth, a light/state: not ours
            if accepted:
                try:
                    self._outbox.ack(seq)
                except Exception:
                    # The delete failed (a full disk): keep this ack and the ones after it for the
                    # next round. Dropping them would leave their mids in flight for good, and a
                    # full send window stops the pump until the next reconnect.
                    with self._cond:
                        self._acks.extendleft(reversed(acks[n:]))
                    raise
                del self._inflight[mid]
            else:
                del self._inflight[mid]
                # MQTT 5 tells us the broker refused it (ACL): keep it, send it again next connection.
                self.rejected += 1
                log.error("broker refused event seq %d; kept in the outbox (check the ACL for this node)", seq)

    def _send(self) -> None:
        if self._link.generation != self._generation:
            self._generation = self._link.generation
            self._inflight.clear()
            self._cursor = -1
        room = self._window - len(self._inflight)
        if room <= 0 or not self._link.connected:
            return
        for row in self._outbox.pending(self._cursor, room):
            sent = self._link.publish(row.topic, row.payload, qos=1)
            if sent is None or sent[0] != self._generation:
                self.notify()  # connection changed under us: start over from the outbox
                return
            self._inflight[sent[1]] = row.seq
            self._cursor = row.seq
