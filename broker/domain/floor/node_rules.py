"""What the hub believes of a table node beyond the wire contract: which sensors it
has, and which of its timestamps it trusts.

The contract (devices.contract) says what a well-formed message is; these rules say what a
well-formed message from *this* node, wired as the venue file says, may claim. A node's password
is on a Pi under the table: anything it sends is input, not truth. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from devices.tables import TableSpec

# A node that says its clock is synced (NTP) is believed within this window around the hub's
# clock. Back: a node queues events in its outbox while the hub or the network is down, and
# replays them with their real times; a week covers a hub that was down over a long weekend (the
# outbox holds days of play). Ahead: two NTP-synced clocks agree to well under a second; 5 min
# covers a hub whose own clock is a little behind.
SYNCED_BACK = timedelta(days=7)
SYNCED_AHEAD = timedelta(minutes=5)
# A node that says its clock is *not* synced boots at its last saved time (a Pi has no RTC),
# which may be months old. Its stamp is never used as a time (metrics and billing use the hub's
# clock); it is kept as the node's own reading, for diagnosis, while it is within a year of ours.
UNSYNCED_SPAN = timedelta(days=366)


def sensor_names(table: TableSpec) -> frozenset[str]:
    """The sensors a node wired by `table`'s pin map reports faults under (devices.kinds)."""
    return frozenset(table.pin_map.beams())


def unknown_sensor(table: TableSpec, sensor: str) -> str | None:
    """Why a sensor_fault for `sensor` cannot come from this node, or None if it can."""
    known = sensor_names(table)
    if sensor in known:
        return None
    return f"sensor {sensor[:64]!r} is not wired on {table.id} (its sensors: {', '.join(sorted(known)) or 'none'})"


@dataclass(frozen=True)
class ClockVerdict:
    """The timestamp to store and whether it is a real time, and why the node's was not kept."""

    ts: datetime
    synced: bool
    off: str | None = None  # set when the node's timestamp was replaced by the hub's receive time


def judge_timestamp(ts: datetime, synced: bool, received: datetime) -> ClockVerdict:
    """Keep the node's timestamp if it is plausible, else the hub's receive time (flagged).

    A synced stamp outside [received - SYNCED_BACK, received + SYNCED_AHEAD] is a broken or lying
    clock: it would put a ball drop in 2001 or 9999 on the charts. An unsynced stamp is kept
    within UNSYNCED_SPAN, as the node's own reading. Whatever is replaced is stored as unsynced,
    so nothing downstream takes it for a real time.
    """
    if synced:
        low, high = received - SYNCED_BACK, received + SYNCED_AHEAD
    else:
        low, high = received - UNSYNCED_SPAN, received + UNSYNCED_SPAN
    if low <= ts <= high:  # aware datetimes compare without converting: year 9999 cannot overflow
        return ClockVerdict(ts, synced)
    which = "synced" if synced else "unsynced"
    why = (
        f"node clock ({which}) says {ts.isoformat()}, outside {_span(low, high, received)} of the hub's "
        f"{received.isoformat(timespec='seconds')}: stored at the hub's receive time"
    )
    return ClockVerdict(received, False, why)


def _span(low: datetime, high: datetime, at: datetime) -> str:
    return f"-{_human(at - low)}/+{_human(high - at)}"


def _human(d: timedelta) -> str:
    if d >= timedelta(days=1):
        return f"{d.days} d"
    return f"{int(d.total_seconds() // 60)} min"
