"""The ingest loop: drain the inbox in batches, apply each batch in one transaction, then ack.

Batching is what lets one Python process keep up with Mosquitto: one commit (one fsync) per
batch instead of per message. Acks go out only after the commit, so a crash before it means
redelivery, never loss; redelivered copies are dropped by the (table, boot, seq) key.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

from broker.hub_link import Inbound

log = logging.getLogger("lavos.hub.ingest")


class IngestLoop:
    def __init__(
        self,
        inbox: "queue.Queue[Inbound]",
        apply_batch: Callable[[list[Inbound]], None],
        ack: Callable[[int, int], None],
        *,
        max_batch: int = 1000,
        retry_s: float = 1.0,
        ack_many: Callable[[list[Inbound]], None] | None = None,
    ) -> None:
        self.inbox = inbox
        self.apply_batch = apply_batch
        self.ack = ack
        self.ack_many = ack_many  # a whole committed batch at once (HubLink.ack_many), if given
        self.max_batch = max_batch
        self.retry_s = retry_s
        self.batches = 0
        self.applied = 0
        self.failures = 0
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lavos-ingest", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """True once everything queued so far has been applied (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.inbox.empty() and self._idle.is_set():
                return True
            time.sleep(0.005)
        return False

    def _next_batch(self) -> list[Inbound]:
        try:
            first = self.inbox.get(timeout=0.2)
        except queue.Empty:
            return []
        batch = [first]
        while len(batch) < self.max_batch:
            try:
                batch.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        return batch

    def _run(self) -> None:
        batch: list[Inbound] = []
        while not self._stop.is_set():
            if not batch:
                self._idle.set()
                batch = self._next_batch()
                if not batch:
                    continue
                self._idle.clear()
            try:
                self.apply_batch(batch)
            except Exception:  # noqa: BLE001 - the database may be restarting; keep the batch
                self.failures += 1
                log.exception("could not apply %d messages; retrying in %.1fs (nothing acked, nothing lost)", len(batch), self.retry_s)
                self._stop.wait(self.retry_s)
                continue
            self._ack(batch)
            self.batches += 1
            self.applied += len(batch)
            batch = []

    def _ack(self, batch: list[Inbound]) -> None:
        if self.ack_many is not None:
            try:
                self.ack_many(batch)
            except Exception:  # noqa: BLE001 - a lost connection means the broker redelivers
                log.debug("ack of %d messages failed", len(batch), exc_info=True)
            return
        for m in batch:
            try:
                self.ack(m.mid, m.qos)
            except Exception:  # noqa: BLE001 - a lost connection means the broker redelivers
                log.debug("ack of mid %s failed", m.mid, exc_info=True)
