"""The metrics writer's disk spool: line-protocol points waiting for InfluxDB, bounded in bytes.

One SQLite file (WAL) with a table `spool(seq INTEGER PRIMARY KEY, line TEXT)`. `seq` is the
point's position in the order `MetricsWriter.write()` was called, so replay order is simply
`ORDER BY seq`, even when a batch that failed in flight is spooled after newer points were
already spilled behind it. SQLite rather than hand-rolled segment files because a commit is
atomic: a process killed mid-write loses at most the uncommitted spill, never the file.

Bound policy: the sum of the stored lines' UTF-8 bytes (plus one newline each) never exceeds
`max_bytes` after a `put()`. When it would, the OLDEST points are deleted and counted as
dropped: metrics feed dashboards, where the last minutes matter more than the first ones of a
long outage (and InfluxDB is never the record of money).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

SPOOL_FILE = "metrics-spool.sqlite3"


def line_bytes(line: str) -> int:
    return len(line.encode()) + 1  # +1: the newline that joins it into a request body


class Spool:
    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.path = directory / SPOOL_FILE
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        # One connection shared by the caller (spill when memory is full) and the sender
        # thread; our lock serialises them.
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: survives a killed process, which is the restart we promise; a power cut may
        # lose the last spill, which is acceptable for metrics.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS spool(seq INTEGER PRIMARY KEY, line TEXT NOT NULL)")
        count, nbytes, last = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(line AS BLOB)) + 1), 0), COALESCE(MAX(seq), -1) FROM spool"
        ).fetchone()
        self.count: int = count
        self.bytes: int = nbytes
        self.last_seq: int = last

    def put(self, items: list[tuple[int, str]]) -> int:
        """Store (seq, line) pairs, then trim the oldest to the bound; returns how many were dropped."""
        if not items:
            return 0
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO spool(seq, line) VALUES (?, ?)", items)
            self.count += len(items)
            self.bytes += sum(line_bytes(line) for _, line in items)
            self.last_seq = max(self.last_seq, items[-1][0])
            return self._trim()

    def _trim(self) -> int:
        excess = self.bytes - self.max_bytes
        if excess <= 0:
            return 0
        freed = dropped = 0
        cutoff = None
        for seq, size in self._db.execute("SELECT seq, LENGTH(CAST(line AS BLOB)) + 1 FROM spool ORDER BY seq"):
            freed += size
            dropped += 1
            cutoff = seq
            if freed >= excess:
                break
        self._db.execute("DELETE FROM spool WHERE seq <= ?", (cutoff,))
        self.count -= dropped
        self.bytes -= freed
        return dropped

    def head(self, limit: int) -> list[tuple[int, str]]:
        """The oldest `limit` points, oldest first."""
        with self._lock:
            return self._db.execute("SELECT seq, line FROM spool ORDER BY seq LIMIT ?", (limit,)).fetchall()

    def remove_through(self, seq: int) -> int:
        """Forget every point up to and including `seq` (they were delivered); returns how many."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            # RETURNING because a trim may have dropped some of them while they were in flight.
            sizes = self._db.execute("DELETE FROM spool WHERE seq <= ? RETURNING LENGTH(CAST(line AS BLOB)) + 1", (seq,)).fetchall()
            self.count -= len(sizes)
            self.bytes -= sum(s for (s,) in sizes)
            return len(sizes)

    def close(self) -> None:
        with self._lock:
            self._db.close()
