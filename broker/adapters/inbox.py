"""What the MQTT link hands the hub's writer: node messages, and the link's own news.

The inbox is bounded, and the policy is back-pressure, not loss: when it is full, paho's
network thread blocks in `on_message` (manual ack: the message is not acked), so paho stops
reading the socket, Mosquitto keeps the rest queued for the hub's persistent session and stops
sending once its in-flight window is full. Nothing is dropped and nothing is acked before the
writer has committed it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

DEFAULT_BOUND = 10_000  # ten batches of the writer: a second or more of a full hall's backlog


class Inbound(NamedTuple):
    # A NamedTuple, not a frozen dataclass: one is made per message on paho's thread, and a
    # frozen dataclass's __init__ (object.__setattr__ per field) cost 5x as much (bench/hub_ingest.py).
    topic: str
    payload: bytes
    mid: int
    qos: int
    received: float  # time.monotonic() when paho handed it over


@dataclass(frozen=True)
class LinkUp:
    """The hub (re)connected to the broker: the nodes may have missed commands, resend them.

    An inbox item, not a callback: the resend reads hall state, which only the writer may do,
    and must be ordered with staff commands (a stop racing a resend must not end "on").
    """

    connects: int


@dataclass(frozen=True)
class HomeAssistantOnline:
    """Home Assistant announced itself (``homeassistant/status`` = online): it forgot its MQTT
    entities, so the hub publishes its discovery configs again (broker.floor.home_assistant).
    An inbox item, like LinkUp: the writer reads the hall's state for it."""


class Wake:
    """Put by a staff command so a writer waiting on an empty inbox looks at its commands."""


WAKE = Wake()

InboxItem = Inbound | LinkUp | HomeAssistantOnline | Wake


def make_inbox(bound: int = DEFAULT_BOUND) -> queue.Queue[InboxItem]:
    return queue.Queue(maxsize=bound)


def put_waiting(inbox: queue.Queue[InboxItem], item: InboxItem, closing: threading.Event, on_full: Callable[[], None]) -> None:
    """Back-pressure, not loss: put `item`, waiting for room as long as it takes.

    While the caller waits it reads nothing more (paho's thread stops reading the socket; the
    link process's reader stops reading its pipe), and the message is not acked (manual ack,
    after the writer's commit), so Mosquitto keeps the rest for the hub's persistent session.
    Only a closing link gives up waiting: the broker redelivers what was never acked.
    `on_full` is called once, before waiting (the link counts it, so the wait shows while it lasts).
    """
    try:
        inbox.put_nowait(item)
        return
    except queue.Full:
        on_full()
    while not closing.is_set():
        try:
            inbox.put(item, timeout=0.5)
            return
        except queue.Full:
            continue
