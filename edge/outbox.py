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

Bounded disk (``max_bytes`` of stored rows, and at least ``MIN_FREE_BYTES`` left free on the
filesystem: a disk filled by something else, or a ``max_bytes`` larger than the card, counts as
full too). When an event does not fit:
  1. the oldest low-value events (``activity``, ``button``) are deleted until it fits, each counted
     in ``dropped``;
  2. a low-value event that still does not fit is itself dropped (counted in ``dropped``);
  3. a pocket, goal, card or sensor_fault event that does not fit is **refused**: counted in
     ``refused``, and logged at ERROR with its full payload, so the record survives in the journal
     (a card's UID is a credential: at ERROR it is masked, the full record is logged at DEBUG).
     Nothing else stops: the light and the button keep working. Telemetry never enters the outbox.
The free-space margin is what keeps a full disk workable: with no byte left, SQLite can neither
delete an acknowledged event nor checkpoint its WAL, so the outbox could never drain again. Should
the disk fill anyway (faster than the check), the insert's "disk full" error is a refusal too.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

LOW_VALUE_TYPES = ("activity", "button")
_CARD_UID = re.compile(r'("uid"\s*:\s*")[^"]*(")')
# Per-row bookkeeping SQLite spends beyond topic + payload (rowid, header, index entry).
ROW_OVERHEAD = 48
SEQ_BLOCK = 1000
# Room SQLite needs for deletes, checkpoints and the seq reservation on a disk we fill ourselves.
MIN_FREE_BYTES = 1024 * 1024

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
        used, depth = self._db.execute(
            "SELECT COALESCE(SUM(LENGTH(topic) + LENGTH(payload)), 0) + COUNT(*) * ?, COUNT(*) FROM events", (ROW_OVERHEAD,)
        ).fetchone()
        self._used: int = used
        self._depth: int = depth
        last: int = self._db.execute("SELECT COALESCE(MAX(seq), -1) FROM events").fetchone()[0]
        start = self._meta("next_seq", 0) if self._meta("clean", 1) else self._meta("reserved_until", 0)
        self._next_seq = max(start, last + 1)
        self._closed = False
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
            # A failed COMMIT (disk full) may leave the transaction open: every later insert
            # would join it and never be committed. PRAGMA synchronous is refused inside one.
            self._rollback()
            self._db.execute("PRAGMA synchronous=NORMAL")

    def _rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _reserve(self) -> None:
        # Memory follows the disk, not the other way: a reservation that failed to reach the disk
        # must not hand out seqs that the next start after a power cut would hand out again.
        until = self._next_seq + SEQ_BLOCK
        self._set_meta_durably(reserved_until=until)
        self._reserved_until = until

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
            disk_low = self._disk_free() < MIN_FREE_BYTES
            # Rows freed inside the file are reused by the next insert: on a low disk, free one row's worth.
            need = max(self._used + size - self.max_bytes, size if disk_low else 0)
            try:
                if need > 0 and not self._make_room(need):
                    self._reject(event_type, payload, "disk" if disk_low else "outbox")
                    return None
                if seq >= self._reserved_until:
                    self._reserve()
                self._db.execute("INSERT INTO events(seq, type, topic, payload) VALUES (?, ?, ?, ?)", (seq, event_type, topic, payload))
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_FULL:
                    raise
                self._rollback()
                self._reject(event_type, payload, "disk")
                return None
            self._next_seq = seq + 1
            self._used += size
            self._depth += 1
            return seq

    def _disk_free(self) -> int:
        st = os.statvfs(self.path.parent)
        return st.f_bavail * st.f_frsize

    def _make_room(self, need: int) -> bool:
        """Delete the oldest low-value events until `need` bytes are freed; False (nothing deleted) if they cannot."""
        rows = self._db.execute(
            f"SELECT seq, LENGTH(topic) + LENGTH(payload) FROM events WHERE type IN ({','.join('?' * len(LOW_VALUE_TYPES))}) ORDER BY seq",
            LOW_VALUE_TYPES,
        )
        victims, freed = [], 0
        for seq, length in rows:
            if freed >= need:
                break
            victims.append(seq)
            freed += length + ROW_OVERHEAD
        if freed < need:
            return False
        self._db.execute("BEGIN IMMEDIATE")
        self._db.executemany("DELETE FROM events WHERE seq = ?", [(s,) for s in victims])
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('dropped', ?)", (self.dropped + len(victims),))
        self._db.execute("COMMIT")
        self.dropped += len(victims)
        self._used -= freed
        self._depth -= len(victims)
        log.warning(
            "outbox full (%d bytes, %d free on disk): dropped the %d oldest activity/button events to make room",
            self.max_bytes,
            self._disk_free(),
            len(victims),
        )
        return True

    def _reject(self, event_type: str, payload: bytes, full: str) -> None:
        why = (
            f"{self.max_bytes} bytes of events waiting"
            if full == "outbox"
            else f"disk full: {self._disk_free()} bytes free on {self.path.parent}"
        )
        record = payload.decode(errors="replace")
        if event_type in LOW_VALUE_TYPES:
            self.dropped += 1
            log.warning("outbox full (%s): %s event dropped: %s", why, event_type, record)
        else:
            self.refused += 1
            log.error(
                "OUTBOX FULL (%s): %s event NOT STORED (%d refused so far); its record is this line: %s",
                why,
                event_type,
                self.refused,
                _CARD_UID.sub(r"\1(card UID at DEBUG)\2", record),
            )
            if event_type == "card":
                log.debug("the card event not stored: %s", record)

    def pending(self, after_seq: int = -1, limit: int = 100) -> list[Pending]:
        """Stored events with seq > after_seq, in seq order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, topic, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit)
            ).fetchall()
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
            if self._closed:
                return
            self._set_meta_durably(next_seq=self._next_seq, clean=1)
            self._db.close()
            self._checkpointer.close()
            self._closed = True

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
