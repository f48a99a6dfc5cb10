"""The hub's one writer: the only thread that changes hall state.

Everything that changes games, alerts, check-ins, counters or the lights wanted runs here,
one item at a time: staff commands (submitted from HTTP threads as callables, answered through
a Future), MQTT batches from the inbox, the link's reconnects (LinkUp), and watchdog ticks
(submitted like a command). Because only this thread writes, hall state needs no lock: readers
on other threads take the snapshots the state components publish. Each item commits its own
transaction and then runs its effects (publishes, live pushes, metrics) on this thread, after
the commit and with no lock held.

Staff commands come first: the writer looks at its command queue before every inbox batch,
so a click never waits behind a backlog of ball drops (at most behind the one batch being
applied). A command that runs on the writer and calls another (SetCard -> the game's change,
a watchdog tick -> StopGame) runs inline.

Acks go out only after a batch's commit, so a crash before it means redelivery, never loss;
redelivered copies are dropped by the (table, boot, seq) key. A batch the database refuses
(restarting, locked) is kept and retried; nothing of it is acked meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar, cast

from broker.adapters.inbox import WAKE, HomeAssistantOnline, Inbound, InboxItem, LinkUp
from broker.storage.after_commit import deferred

log = logging.getLogger("lavos.hub.writer")

T = TypeVar("T")


class _Command:
    __slots__ = ("fn", "future")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        self.future: Future[Any] = Future()


class HallWriter:
    def __init__(
        self,
        inbox: queue.Queue[InboxItem],
        apply_batch: Callable[[list[Inbound]], None],
        ack: Callable[[int, int], None],
        on_link_up: Callable[[LinkUp | HomeAssistantOnline], None],
        *,
        ack_many: Callable[[list[Inbound]], None] | None = None,
        max_batch: int = 1000,
        retry_s: float = 1.0,
    ) -> None:
        self.inbox = inbox
        self.apply_batch = apply_batch
        self.ack = ack
        self.ack_many = ack_many  # a committed batch's acks in one write (HubLink.ack_many)
        self.on_link_up = on_link_up
        self.max_batch = max_batch
        self.retry_s = retry_s
        self.batches = 0
        self.applied = 0
        self.failures = 0
        self.commands_run = 0
        self._commands: queue.SimpleQueue[_Command] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._gate = threading.Lock()  # orders "started/stopped" against enqueueing a command
        self._started = False
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="lavos-hall-writer", daemon=True)

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        with self._gate:
            if not self._started and not self._stopped:
                self._started = True
                self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the item being applied. Waits for it however long it takes (saying so every
        `timeout` seconds): what the hub closes after this (the store, the notifications' spool) must
        never be closed under a writer, and a commit cut short is lost work for nothing."""
        self._stop.set()
        self._wake()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
            while self._thread.is_alive():
                log.warning("the writer is still applying an item after %.0f s; waiting for it before closing", timeout)
                self._thread.join(timeout)
        with self._gate:
            self._stopped = True
        self._run_commands()  # anything that got in before the gate closed

    @property
    def on_writer(self) -> bool:
        return threading.current_thread() is self._thread

    def _ack(self, batch: list[Inbound]) -> None:
        """Only after the batch's commit. A lost connection means the broker redelivers, and the
        (table, boot, seq) key drops the copies."""
        try:
            if self.ack_many is not None:
                self.ack_many(batch)
                return
            for m in batch:
                self.ack(m.mid, m.qos)
        except Exception:
            log.debug("acks of a batch of %d failed", len(batch), exc_info=True)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """True once everything queued so far has been applied (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.inbox.empty() and self._commands.empty() and self._idle.is_set():
                return True
            time.sleep(0.005)
        return False

    # -- commands (any thread) -------------------------------------------------------

    def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the writer and return its result (or raise its exception) here.

        On the writer itself it runs inline. A hub that was never started (a tool, a test
        without MQTT) starts its writer on the first command; after close there is no writer
        any more and nothing else writes, so the command runs on the caller's thread.
        """
        if self.on_writer:
            return fn()  # nested: part of the item running now, its effects with that item's
        with self._gate:
            if self._stopped:
                inline = True
            else:
                inline = False
                if not self._started:
                    self._started = True
                    self._thread.start()
                cmd = _Command(fn)
                self._commands.put(cmd)
        if inline:
            with deferred():
                return fn()
        self._wake()
        result: T = cmd.future.result()
        return result

    def post(self, fn: Callable[[], object], what: str) -> None:
        """Run `fn` on the writer soon, without waiting for it: bookkeeping a caller's answer does
        not depend on (when a login or a token was last used). A failure is logged as `what`.

        On the writer itself it runs inline, like call(); after close, on the caller's thread."""

        def logged() -> None:
            try:
                fn()
            except Exception:
                log.warning("%s failed", what, exc_info=True)

        if self.on_writer:
            logged()
            return
        with self._gate:
            inline = self._stopped
            if not inline:
                if not self._started:
                    self._started = True
                    self._thread.start()
                self._commands.put(_Command(logged))
        if inline:
            with deferred():
                logged()
            return
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(queue.Full):  # a full inbox means the writer is busy, not waiting: it will see the command
            self.inbox.put_nowait(WAKE)

    def _run_commands(self) -> None:
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return
            if not cmd.future.set_running_or_notify_cancel():
                continue
            try:
                with deferred():  # its effects after all its commits and state updates
                    result = cmd.fn()
            except BaseException as e:  # noqa: BLE001 - the caller gets it, the writer goes on
                cmd.future.set_exception(e)
            else:
                cmd.future.set_result(result)
            self.commands_run += 1

    # -- the loop (the writer thread) ----------------------------------------------------

    def _next_batch(self) -> list[InboxItem]:
        try:
            first = self.inbox.get(timeout=0.2)
        except queue.Empty:
            return []
        # A Wake has done its job by waking us (commands run at the top of the loop); dropping
        # it here keeps the runs of messages between control items long.
        batch = [] if first is WAKE else [first]
        while len(batch) < self.max_batch:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                break
            if item is not WAKE:
                batch.append(item)
        return batch

    def _run(self) -> None:
        pending: list[InboxItem] = []
        while not self._stop.is_set():
            self._run_commands()
            if not pending:
                if self._commands.empty():
                    self._idle.set()
                pending = self._next_batch()
                if not pending:
                    continue
                self._idle.clear()
            pending = self._drain(pending)
            if pending:  # the database refused a batch: wait, serving commands, then retry
                self._stop.wait(self.retry_s)
        self._run_commands()

    def _drain(self, items: list[InboxItem]) -> list[InboxItem]:
        """Apply the items in order; returns those not applied (from a refused batch on)."""
        i = 0
        while i < len(items):
            item = items[i]
            if isinstance(item, Inbound):
                j = i + 1
                while j < len(items) and isinstance(items[j], Inbound):
                    j += 1
                run = cast(list[Inbound], items[i:j])  # all Inbound: the loop above
                try:
                    with deferred():
                        self.apply_batch(run)
                except Exception:
                    self.failures += 1
                    log.exception("could not apply %d messages; retrying in %.1fs (nothing acked, nothing lost)", len(run), self.retry_s)
                    return items[i:]
                self._ack(run)
                self.batches += 1
                self.applied += len(run)
                i = j
                self._run_commands()  # staff first, between batches too
            else:
                if isinstance(item, LinkUp | HomeAssistantOnline):  # both: publish what the link's peers need
                    try:
                        with deferred():
                            self.on_link_up(item)
                    except Exception:
                        log.exception("resend after reconnect failed")
                i += 1
        return []
