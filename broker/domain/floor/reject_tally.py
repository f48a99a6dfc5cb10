"""Accounting for what the table nodes send that the hub refuses: counted per node and reason,
with the last few messages kept as samples, so a broken or hostile node shows on the monitoring
page instead of in one log line.

Everything here is bounded by the venue file, not by what a sender makes up: a count per (table,
reason), with every table id the venue does not know (or a topic that names none) counted under
one UNKNOWN bucket, and reasons from a fixed list. Pure: the database side is broker.storage.rejects.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated

from broker.domain.json_shape import HIDDEN, derived, every_field_sent
from devices.contract import ROOT

# The bucket of messages whose topic names no table of the venue; not a valid table id, so no
# table can ever share it.
UNKNOWN = "_unknown"
SAMPLES_PER_TABLE = 20
EXCERPT_CHARS = 300  # a whole v1 event is about 200 characters
ERROR_CHARS = 500
TOPIC_CHARS = 200

# Why a message was refused. Fixed, so the counts cannot grow with what a sender invents.
INVALID = "invalid"  # breaks the wire contract (devices.contract)
UNKNOWN_TABLE = "unknown_table"  # a table id that is not in the venue file
UNKNOWN_SENSOR = "unknown_sensor"  # a sensor_fault for a sensor the node's pin map does not have
HANDLER_ERROR = "handler_error"  # valid, but applying it failed (a bug on our side)
# Not a refusal: the event is applied, at the hub's receive time, because the node's clock was
# implausible (broker.domain.floor.node_rules). Counted here so a node with a bad clock is as visible.
CLOCK = "clock"
# The message (or the node's last birth) speaks another wire contract version: the node is refused
# until it and the hub run versions that speak the same one (alert node_contract).
CONTRACT = "contract"
REASONS = (INVALID, UNKNOWN_TABLE, UNKNOWN_SENSOR, HANDLER_ERROR, CLOCK, CONTRACT)
KEPT_REASONS = frozenset({CLOCK})


def bucket(topic: str, tables: Collection[str]) -> str:
    """The table a message is counted under: the table its topic names, if the venue has it.

    The broker's ACL lets a node publish only under its own table's topics, so the topic says
    which node sent it (or the hub account, which may publish anywhere).
    """
    parts = topic.split("/", 4)
    if len(parts) >= 4 and "/".join(parts[:3]) == f"{ROOT}/table" and parts[3] in tables:
        return parts[3]
    return UNKNOWN


def printable(text: str, limit: int) -> str:
    """`text` with control characters escaped (PostgreSQL refuses NUL), cut to `limit` characters."""
    out = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}" for c in text[: limit + 1])
    return out if len(out) <= limit else out[:limit] + "…"


def excerpt(payload: bytes) -> str:
    return printable(payload[: EXCERPT_CHARS * 4].decode("utf-8", "backslashreplace"), EXCERPT_CHARS)


@dataclass(frozen=True)
class Sample:
    table: Annotated[str, HIDDEN]  # the bucket it is kept under (the JSON lists a table's samples under the table)
    at: datetime
    topic: str
    reason: str
    error: str
    excerpt: str


@dataclass
class RejectTally:
    """The refusals of one ingest batch, gathered in memory and written in one go."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    samples: dict[str, deque[Sample]] = field(default_factory=dict)

    def add(self, table: str, reason: str, topic: str, error: str, payload: bytes, at: datetime) -> None:
        assert reason in REASONS, reason
        self.counts[table, reason] += 1
        kept = self.samples.setdefault(table, deque(maxlen=SAMPLES_PER_TABLE))
        kept.append(Sample(table, at, printable(topic, TOPIC_CHARS), reason, printable(error, ERROR_CHARS), excerpt(payload)))

    @property
    def dropped(self) -> int:
        return sum(n for (_, reason), n in self.counts.items() if reason not in KEPT_REASONS)

    def all_samples(self) -> Iterable[Sample]:
        for kept in self.samples.values():
            yield from kept

    def __bool__(self) -> bool:
        return bool(self.counts)


@dataclass
class ReasonCount:
    count: int
    first_at: datetime
    last_at: datetime


@every_field_sent
@dataclass
class NodeRejects:
    """One table's (or the UNKNOWN bucket's) refusals: counts per reason, newest samples first.

    `dropped` messages were not applied; `clock_flagged` events were, at the hub's receive time.
    """

    by_reason: dict[str, ReasonCount] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)

    @derived
    def dropped(self) -> int:
        return sum(c.count for r, c in self.by_reason.items() if r not in KEPT_REASONS)

    @derived
    def clock_flagged(self) -> int:
        return sum(c.count for r, c in self.by_reason.items() if r in KEPT_REASONS)

    @derived
    def last_at(self) -> datetime | None:
        return max((c.last_at for c in self.by_reason.values()), default=None)
