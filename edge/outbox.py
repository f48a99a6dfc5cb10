"""The durable outbox: every event is on the node's disk before it is published, until acked.

SQLite in WAL mode, ``synchronous=NORMAL``: a commit is a write into the WAL with no fsync, a few
tens of µs, so writing every ball drop first costs nothing against the 20 ms latency budget (an
fsync on a Pi's SD card takes 2–20 ms and more). What that trades: a killed agent (crash, SIGKILL,
OOM) loses nothing, since the WAL is in the OS page cache; a *power cut* can lose the commits made
since the last WAL sync. :meth:`Outbox.sync` (called every second by the agent) checkpoints, which
syncs the WAL, so a power cut loses at most about a second of events not yet acknowledged.

``seq`` must never be reused, even if a power cut rolls back commits whose events were already
published. So seq numbers are handed out from a block reserved with a full fsync: after an
unclean stop the next start skips to the end of the reserved block (a gap in seq, never a reuse);
after a clean close it continues exactly where it stopped.

Bounded disk (``max_bytes`` of stored rows). When an event does not fit:
  1. the oldest low-value events (``activity``, ``button``) are deleted until it fits, each counted
     in ``dropped``;
  2. a low-value event that still does not fit is itself dropped (counted in ``dropped``);
  3. a pocket, goal, card or sensor_fault event that does not fit is **refused**: counted in
     ``refused``, and logged at ERROR with its full payload, so the record survives in the journal.
     Nothing else stops: the light and the button keep working. Telemetry never enters the outbox.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

log = logging.getLogger(__name__)

LOW_VALUE_TYPES = ("activity", "button")
# Per-row bookkeeping SQLite spends beyond topic + payload (rowid, header, index entry).
ROW_OVERHEAD = 48
SEQ_BLOCK = 1000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    type TEXT NOT NULL,
    topic TEXT NOT NULL,
    payload BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class Pending:
    seq: int
    topic: str
    payload: bytes


class Outbox:
    def __init__(self, path: Path | str, max_bytes: int) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # The outbox is small and mostly appended/deleted at its ends: a small page cache does; a Pi node counts MBs.
        self._db.execute("PRAGMA cache_size=-512")
        self._db.executescript(_SCHEMA)
        # Checkpoints run on their own connection so the fsync they do never holds up add().
        self._checkpointer = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._checkpointer.execute("PRAGMA cache_size=-64")
        self.dropped = self._meta("dropped", 0)
        self.refused = 0
        self._used, self._depth = self._db.execute(
            "SELECT COALESCE(SUM(LENGTH(topic) + LENGTH(payload)), 0) + COUNT(*) * ?, COUNT(*) FROM events", (ROW_OVERHEAD,)
        ).fetchone()
        last = self._db.execute("SELECT COALESCE(MAX(seq), -1) FROM events").fetchone()[0]
        start = self._meta("next_seq", 0) if self._meta("clean", 1) else self._meta("reserved_until", 0)
        self._next_seq = max(start, last + 1)
        self._reserved_until = 0
        self._reserve()
        self._set_meta_durably(clean=0)

    # ------------------------------------------------------------------ meta

    def _meta(self, key: str, default: int) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else int(row[0])

    def _set_meta_durably(self, **values: int) -> None:
        # The rare writes that must survive a power cut get a full fsync.
        self._db.execute("PRAGMA synchronous=FULL")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items())
            self._db.execute("COMMIT")
        finally:
            self._db.execute("PRAGMA synchronous=NORMAL")

    def _reserve(self) -> None:
        self._reserved_until = self._next_seq + SEQ_BLOCK
        self._set_meta_durably(reserved_until=self._reserved_until)

    # ------------------------------------------------------------------ the public API

    @property
    def depth(self) -> int:
        return self._depth

    @property
    def used_bytes(self) -> int:
        return self._used

    def add(self, event_type: str, topic: str, render: Callable[[int], bytes]) -> int | None:
        """Store one event; `render(seq)` builds its payload. Returns its seq, or None if not stored."""
        with self._lock:
            seq = self._next_seq
            payload = render(seq)
            size = len(topic.encode()) + len(payload) + ROW_OVERHEAD
            if size > self.max_bytes - self._used and not self._make_room(size):
                self._reject(event_type, payload)
                return None
            if seq >= self._reserved_until:
                self._reserve()
            self._db.execute("INSERT INTO events(seq, type, topic, payload) VALUES (?, ?, ?, ?)", (seq, event_type, topic, payload))
            self._next_seq = seq + 1
            self._used += size
            self._depth += 1
            return seq

    def _make_room(self, size: int) -> bool:
        rows = self._db.execute(
            f"SELECT seq, LENGTH(topic) + LENGTH(payload) FROM events WHERE type IN ({','.join('?' * len(LOW_VALUE_TYPES))}) ORDER BY seq",
            LOW_VALUE_TYPES,
        )
        victims, freed = [], 0
        for seq, length in rows:
            if self._used - freed + size <= self.max_bytes:
                break
            victims.append(seq)
            freed += length + ROW_OVERHEAD
        if self._used - freed + size > self.max_bytes:
            return False
        self._db.execute("BEGIN IMMEDIATE")
        self._db.executemany("DELETE FROM events WHERE seq = ?", [(s,) for s in victims])
        self.dropped += len(victims)
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('dropped', ?)", (self.dropped,))
        self._db.execute("COMMIT")
        self._used -= freed
        self._depth -= len(victims)
        log.warning("outbox full (%d bytes): dropped the %d oldest activity/button events to make room", self.max_bytes, len(victims))
        return True

    def _reject(self, event_type: str, payload: bytes) -> None:
        if event_type in LOW_VALUE_TYPES:
            self.dropped += 1
            log.warning("outbox full (%d bytes): %s event dropped: %s", self.max_bytes, event_type, payload.decode(errors="replace"))
        else:
            self.refused += 1
            log.error(
                "OUTBOX FULL (%d bytes of pocket/goal/card/fault events waiting): %s event NOT STORED; "
                "its record is this line: %s", self.max_bytes, event_type, payload.decode(errors="replace"),
            )

    def pending(self, after_seq: int = -1, limit: int = 100) -> list[Pending]:
        """Stored events with seq > after_seq, in seq order."""
        with self._lock:
            rows = self._db.execute("SELECT seq, topic, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit)).fetchall()
        return [Pending(seq, topic, bytes(payload)) for seq, topic, payload in rows]

    def ack(self, seq: int) -> None:
        """The broker has the event: forget it."""
        with self._lock:
            row = self._db.execute("DELETE FROM events WHERE seq = ? RETURNING LENGTH(topic) + LENGTH(payload)", (seq,)).fetchone()
            if row is not None:
                self._used -= row[0] + ROW_OVERHEAD
                self._depth -= 1

    def sync(self) -> None:
        """Checkpoint the WAL (which fsyncs it): bounds what a power cut can take."""
        self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def close(self) -> None:
        with self._lock:
            if self._db is None:
                return
            self._set_meta_durably(next_seq=self._next_seq, clean=1)
            self._db.close()
            self._checkpointer.close()
            self._db = None  # type: ignore[assignment]

    def __enter__(self) -> "Outbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
