"""The hub's MQTT link in a process of its own, so receiving does not share the writer's GIL.

Why: in a backlog drain (bench/hub_ingest.py) paho's receive path (~40 us a message, all Python)
and the hall writer (~35 us an event) took turns on one interpreter lock, so the hub ran at a
third of what a bare paho subscriber drains. In a child process paho receives on one core while
the writer applies on the other.

Same guarantees as the in-process HubLink, which the child runs unchanged:
- Exactly-once: the child never acks on its own (manual ack); the parent sends the mids of a
  batch only after the writer committed it (`ack_many`), and the child writes the PUBACKs.
- Back-pressure, not loss: the child's queue is bounded; the parent's reader puts each message
  into the writer's bounded inbox and blocks when it is full, so it stops reading the pipe, the
  child's forwarder blocks on the pipe, its queue fills, paho blocks in on_message and stops
  reading the socket. Nothing is acked that was not committed.
- Order: messages and reconnects (LinkUp) travel in one pipe in the order paho saw them.
- One hub, one MQTT session: the child exits when its command pipe reaches EOF, which the
  kernel makes happen the moment the parent dies (only the parent holds the pipe's write end),
  so a SIGKILLed hub leaves no orphan holding the hub's client id for the standby to fight with.
  (Not PR_SET_PDEATHSIG: it fires when the *thread* that started the child ends, and a standby
  starts its hub from a thread that ends.) It ignores SIGINT/SIGTERM: the parent closes it, saying goodbye.
- A child that dies on its own is logged and started again; Mosquitto redelivers whatever was
  not acked (the session is persistent, and a redelivered message keeps its packet id, so an
  ack still on its way for it is still right).

Threads: in the parent, `lavos-link-reader` (pipe → inbox) and whoever publishes (the writer,
after commit); in the child, paho's network thread, the forwarder (queue → pipe) and the main
thread (commands from the pipe → paho).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import queue
import signal
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from typing import Literal, TypedDict

import paho.mqtt.client as mqtt

from broker.adapters.heap import settle_heap
from broker.adapters.hub_link import HUB_CLIENT_ID, HubCommands, HubLink, LinkStats, MqttUrl
from broker.adapters.inbox import HomeAssistantOnline, Inbound, InboxItem, LinkUp, Wake, put_waiting

log = logging.getLogger("lavos.hub.mqtt")

_FORWARD_BATCH = 500  # messages per pipe write: one pickle and one system call for many messages
_CHILD_BOUND = 2000  # messages the child holds before paho waits (the parent's inbox bounds the rest)
_RESTART_PAUSE_S = 1.0
_SEND_GAP_S = 0.002  # under load, at most one pipe write per 2 ms (what a lone event can wait at most)


class _LinkOptions(TypedDict):
    """HubLink's keyword arguments, as the child is given them."""

    client_id: str
    share_group: str | None
    protocol: int
    keepalive: int
    home_assistant: bool


# What goes through the pipes, as plain tuples (cheaper to pickle than objects).
# An inbox item: a message (Inbound's fields), a (re)connect, Home Assistant's birth.
_Entry = tuple[Literal["m"], str, bytes, int, int, float] | tuple[Literal["up"], int] | tuple[Literal["ha"]]
_Stats = dict[str, object]  # LinkStats' fields by name
# Parent → child.
_Command = tuple[Literal["pub"], str, bytes, bool, int] | tuple[Literal["ack"], list[tuple[int, int]]] | tuple[Literal["close"]]
# Child → parent.
_Report = (
    tuple[Literal["started"]]
    | tuple[Literal["error"], str]
    | tuple[Literal["batch"], list[_Entry], _Stats]
    | tuple[Literal["stats"], _Stats]
    | tuple[Literal["closed"]]
)


class ProcessLink(HubCommands):
    """HubLink's interface (start, close, publish, send_light, send_summary, ack, ack_many, stats),
    with paho running in a child process."""

    def __init__(
        self,
        url: MqttUrl,
        inbox: queue.Queue[InboxItem],
        *,
        client_id: str = HUB_CLIENT_ID,
        share_group: str | None = None,
        protocol: int = mqtt.MQTTv311,
        keepalive: int = 15,
        home_assistant: bool = False,
    ) -> None:
        self.url = url
        self.inbox = inbox
        self.stats = LinkStats()
        self.client_id = url.username or client_id
        self._share_group = share_group
        self._options: _LinkOptions = {
            "client_id": client_id,
            "share_group": share_group,
            "protocol": protocol,
            "keepalive": keepalive,
            "home_assistant": home_assistant,
        }
        self._ctx = multiprocessing.get_context("spawn")  # no fork: the parent has threads and a database pool
        self._closing = threading.Event()
        self._send_lock = threading.Lock()  # one pipe writer at a time (the writer, a closing thread)
        self._proc: SpawnProcess | None = None
        self._commands: Connection | None = None
        self._messages: Connection | None = None
        self._reader: threading.Thread | None = None
        self.restarts = 0

    # -- lifecycle (parent) ------------------------------------------------------------

    def start(self, wait_s: float = 10.0) -> None:
        self._spawn(wait_s)
        self._reader = threading.Thread(target=self._read, name="lavos-link-reader", daemon=True)
        self._reader.start()

    def _spawn(self, wait_s: float) -> None:
        cmd_r, cmd_w = self._ctx.Pipe(duplex=False)
        msg_r, msg_w = self._ctx.Pipe(duplex=False)
        proc = self._ctx.Process(
            target=_child_main,
            args=(self.url, self._options, wait_s, logging.getLogger().getEffectiveLevel(), cmd_r, msg_w, os.getpid()),
            name="lavos-mqtt-link",
            daemon=True,
        )
        proc.start()
        cmd_r.close()  # the child's ends: closed here, so an EOF means the other side is gone
        msg_w.close()
        first: _Report = msg_r.recv() if msg_r.poll(wait_s + 30) else ("error", "the MQTT link process did not start")
        if first[0] != "started":
            proc.join(5)
            if proc.is_alive():
                proc.kill()
            raise ConnectionError(first[1] if len(first) > 1 else "the MQTT link process failed")
        self._proc, self._commands, self._messages = proc, cmd_w, msg_r

    def close(self) -> None:
        self._closing.set()
        if self._proc is None:
            return
        with contextlib.suppress(OSError):
            self._send(("close",))
        self._proc.join(10)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        if self._reader is not None:
            self._reader.join(5)
        self.stats.connected = False

    # -- outgoing (parent) --------------------------------------------------------------

    def _send(self, item: _Command) -> None:
        conn = self._commands
        if conn is None:
            raise OSError("the MQTT link process is not running")
        with self._send_lock:
            conn.send(item)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        # As HubLink: paho queues while disconnected; commands are desired state, so late is right.
        try:
            self._send(("pub", topic, payload, retain, qos))
        except OSError:
            log.warning("MQTT link process is down; not published now: %s (the resend after reconnect covers it)", topic)
            return
        self.stats.published += 1

    def ack(self, mid: int, qos: int) -> None:
        if qos > 0:
            self._ack([(mid, qos)])

    def ack_many(self, messages: list[Inbound]) -> None:
        """Called only after the batch's commit, as HubLink.ack_many."""
        self._ack([(m.mid, m.qos) for m in messages if m.qos > 0])

    def _ack(self, pairs: list[tuple[int, int]]) -> None:
        if not pairs:
            return
        try:
            self._send(("ack", pairs))
        except OSError:
            # Not acked: Mosquitto redelivers it to the restarted link, and the (table, boot,
            # seq) key drops the copy.
            log.warning("MQTT link process is down; %d committed messages will be redelivered and skipped", len(pairs))

    # -- incoming (parent, lavos-link-reader) ---------------------------------------------

    def _read(self) -> None:
        while True:
            conn = self._messages
            item: _Report | None
            try:
                item = conn.recv() if conn is not None else None
            except (EOFError, OSError):
                item = None
            if item is None:
                if self._closing.is_set():
                    return
                self._restart()
                continue
            if item[0] == "batch":
                self._take_stats(item[2])
                for entry in item[1]:
                    self._put(_item_of(entry))
            elif item[0] == "stats":
                self._take_stats(item[1])
            elif item[0] == "closed":
                return

    def _take_stats(self, child: _Stats) -> None:
        published = self.stats.published  # counted here, where publish() is called
        for key, value in child.items():
            setattr(self.stats, key, value)
        self.stats.published = published

    def _restart(self) -> None:
        code = self._proc.exitcode if self._proc is not None else None
        log.error("the MQTT link process stopped (exit code %s); starting it again", code)
        self.stats.connected = False
        self._commands = self._messages = None
        while not self._closing.is_set():
            time.sleep(_RESTART_PAUSE_S)
            try:
                self._spawn(wait_s=30)
            except (ConnectionError, OSError) as e:
                log.error("could not start the MQTT link process again: %s", e)
                continue
            self.restarts += 1
            return

    def _put(self, item: InboxItem) -> None:
        """Wait for room in the bounded inbox (broker.adapters.inbox.put_waiting says why)."""
        put_waiting(self.inbox, item, self._closing, self._count_full_wait)

    def _count_full_wait(self) -> None:
        self.stats.inbox_full_waits += 1


# -- the child process ---------------------------------------------------------------------


def _child_main(
    url: MqttUrl, options: _LinkOptions, wait_s: float, level: int, commands: Connection, messages: Connection, parent_pid: int
) -> None:
    if os.getppid() != parent_pid:  # the parent died while we started
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop, and says goodbye
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s[link]: %(message)s")
    received: queue.Queue[InboxItem] = queue.Queue(maxsize=_CHILD_BOUND)
    link = HubLink(url, received, **options)
    try:
        link.start(wait_s)
    except ConnectionError as e:
        messages.send(("error", str(e)))
        return
    settle_heap()  # this process lives as long as the link: its start-up objects need no collecting
    messages.send(("started",))
    threading.Thread(target=_forward, args=(received, messages, link), name="lavos-link-forward", daemon=True).start()
    while True:
        try:
            cmd: _Command = commands.recv()
        except (EOFError, OSError):  # the parent is gone: so is the hub; leave no session behind
            os._exit(0)
        if cmd[0] == "pub":
            link.publish(cmd[1], cmd[2], retain=cmd[3], qos=cmd[4])
        elif cmd[0] == "ack":
            link.ack_many([Inbound("", b"", mid, qos, 0.0) for mid, qos in cmd[1]])
        elif cmd[0] == "close":
            link.close()
            with contextlib.suppress(OSError):
                messages.send(("closed",))
            return


def _forward(received: queue.Queue[InboxItem], messages: Connection, link: HubLink) -> None:
    """Queue → pipe, many messages a write. Blocks on the pipe when the parent stops reading."""
    last_stats: _Stats = {}
    last_sent = 0.0
    while True:
        try:
            first = received.get(timeout=0.5)
        except queue.Empty:
            stats = _stats_of(link)
            if stats != last_stats:  # a disconnect while idle still reaches the hub's health page
                last_stats = stats
                _send_or_exit(messages, ("stats", stats))
            continue
        # Under load, one pipe write per message costs a pickle, a system call and a wake-up of the
        # parent's reader each (a drain went out in writes of 8 messages): gather for what is left
        # of _SEND_GAP_S since the last write. A lone message after a quiet spell goes at once.
        wait = last_sent + _SEND_GAP_S - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        batch = [first]
        while len(batch) < _FORWARD_BATCH:
            try:
                batch.append(received.get_nowait())
            except queue.Empty:
                break
        # Only HubLink puts here: Inbound, LinkUp, HomeAssistantOnline (a Wake comes from staff commands, in the parent).
        entries = [_entry_of(item) for item in batch if not isinstance(item, Wake)]
        last_stats = _stats_of(link)
        _send_or_exit(messages, ("batch", entries, last_stats))
        last_sent = time.monotonic()


def _stats_of(link: HubLink) -> _Stats:
    # A flat copy: LinkStats holds scalars only, and dataclasses.asdict deep-copies each field
    # (70 us a batch, a fifth of the child's time in a drain).
    return dict(vars(link.stats))


def _entry_of(item: Inbound | LinkUp | HomeAssistantOnline) -> _Entry:
    """An inbox item as plain tuples for the pipe (cheaper to pickle than the objects)."""
    if isinstance(item, LinkUp):
        return ("up", item.connects)
    if isinstance(item, HomeAssistantOnline):
        return ("ha",)
    return ("m", *item)


def _item_of(entry: _Entry) -> InboxItem:
    if entry[0] == "up":
        return LinkUp(entry[1])
    if entry[0] == "ha":
        return HomeAssistantOnline()
    return Inbound(*entry[1:])


def _send_or_exit(messages: Connection, item: _Report) -> None:
    try:
        messages.send(item)
    except OSError:
        os._exit(0)  # the parent is gone
