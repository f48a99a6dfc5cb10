"""What the MQTT link hands the hub's writer: node messages, and the link's own news.

The inbox is bounded, and the policy is back-pressure, not loss: when it is full, paho's
network thread blocks in `on_message` (manual ack: the message is not acked), so paho stops
reading the socket, Mosquitto keeps the rest queued for the hub's persistent session and stops
sending once its in-flight window is full. Nothing is dropped and nothing is acked before the
writer has committed it.
"""

from __future__ import annotations

import queue
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


class Wake:
    """Put by a staff command so a writer waiting on an empty inbox looks at its commands."""


WAKE = Wake()

InboxItem = Inbound | LinkUp | Wake


def make_inbox(bound: int = DEFAULT_BOUND) -> queue.Queue[InboxItem]:
    return queue.Queue(maxsize=bound)
