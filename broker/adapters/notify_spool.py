"""The push notifications' disk spool: every message is stored here BEFORE it is sent, marked after.

One SQLite file (WAL) in the hub's data directory, table `messages`: a message is "pending"
(waiting, maybe held until `not_before`: quiet hours, a rate-limit summary), "sent" or "dropped"
(the bound, a removed target). `key` is unique, so a message spooled twice (an alert opened,
the hub restarted and told again) is one row: nothing is sent twice from here.

Bound: at most `max_pending` pending messages; beyond, the OLDEST are dropped and counted (the
count is kept in `meta` and shown on /notifications): while the club's internet is down, the
newest alerts matter most. Sent and dropped rows are the history, trimmed to `max_history`.

Why SQLite: a commit is atomic, so a hub killed at any point keeps every committed message; the
only window is between a successful send and its `mark_sent` (a few microseconds of a local
commit): a SIGKILL exactly there sends that one message again on restart, never more.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

SPOOL_FILE = "notify-spool.sqlite3"


@dataclass(frozen=True)
class Message:
    id: int
    key: str
    target: str
    title: str
    body: str
    lang: str
    created_at: datetime
    created_local: str  # "20:31": the hall's local time, for the late mark
    not_before: datetime | None
    state: str
    attempts: int
    last_error: str | None
    sent_at: datetime | None
    late: bool


_COLUMNS = "id, key, target, title, body, lang, created_at, created_local, not_before, state, attempts, last_error, sent_at, late"


def _dt(v: str | None) -> datetime | None:
    return datetime.fromisoformat(v) if v else None


# A `messages` row in _COLUMNS' order, as sqlite3 gives it: times as ISO text, `late` as 0 or 1.
_Row = tuple[int, str, str, str, str, str, str, str, str | None, str, int, str | None, str | None, int]


def _row(r: _Row) -> Message:
    return Message(
        r[0], r[1], r[2], r[3], r[4], r[5], _dt(r[6]) or datetime.min, r[7], _dt(r[8]), r[9], r[10], r[11], _dt(r[12]), bool(r[13])
    )


class NotifySpool:
    def __init__(self, directory: Path | None, max_pending: int = 500, max_history: int = 500) -> None:
        self.path = (directory / SPOOL_FILE) if directory is not None else None
        self.max_pending = max_pending
        self.max_history = max_history
        self._lock = threading.Lock()
        # One connection shared by the hub's writer (put) and the sender thread; our lock serialises them.
        if self.path is not None:
            # The spool holds the day's takings and alert texts: owner-only from its first byte, whatever
            # the umask (SQLite gives its -wal and -shm files the database file's mode), as the database.
            with suppress(FileExistsError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        self._db = sqlite3.connect(str(self.path) if self.path else ":memory:", check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: survives a killed process (the restart we promise); a power cut may lose the last commit.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS messages(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, target TEXT NOT NULL,"
            " title TEXT NOT NULL, body TEXT NOT NULL, lang TEXT NOT NULL, created_at TEXT NOT NULL, created_local TEXT NOT NULL,"
            " not_before TEXT, state TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,"
            " sent_at TEXT, late INTEGER NOT NULL DEFAULT 0)"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS messages_state ON messages(state, id)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v INTEGER NOT NULL)")

    def put(
        self, key: str, target: str, title: str, body: str, lang: str, at: datetime, local: str, not_before: datetime | None = None
    ) -> bool:
        """Store a message unless one of this key exists; True when it is new. Trims to the bound."""
        with self._lock, self._db:
            self._db.execute("BEGIN")
            cur = self._db.execute(
                "INSERT OR IGNORE INTO messages(key, target, title, body, lang, created_at, created_local, not_before)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, target, title, body, lang, at.isoformat(), local, not_before.isoformat() if not_before else None),
            )
            if cur.rowcount:
                self._trim()
            return bool(cur.rowcount)

    def replace_pending(self, key: str, body: str) -> bool:
        """Change a message still waiting (the rate limit's running "…and N more times" summary)."""
        with self._lock, self._db:
            return bool(self._db.execute("UPDATE messages SET body = ? WHERE key = ? AND state = 'pending'", (body, key)).rowcount)

    def has(self, key: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM messages WHERE key = ?", (key,)).fetchone() is not None

    def _trim(self) -> None:
        (pending,) = self._db.execute("SELECT COUNT(*) FROM messages WHERE state = 'pending'").fetchone()
        excess = pending - self.max_pending
        if excess > 0:
            self._db.execute(
                "UPDATE messages SET state = 'dropped', last_error = 'spool full' WHERE id IN"
                " (SELECT id FROM messages WHERE state = 'pending' ORDER BY id LIMIT ?)",
                (excess,),
            )
            self._db.execute("INSERT INTO meta(k, v) VALUES ('dropped', ?) ON CONFLICT(k) DO UPDATE SET v = v + excluded.v", (excess,))
        self._db.execute(
            "DELETE FROM messages WHERE state != 'pending' AND id NOT IN"
            " (SELECT id FROM messages WHERE state != 'pending' ORDER BY id DESC LIMIT ?)",
            (self.max_history,),
        )

    def due(self, now: datetime, limit: int = 50) -> list[Message]:
        """Pending messages whose time has come, oldest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM messages WHERE state = 'pending' AND (not_before IS NULL OR not_before <= ?) ORDER BY id LIMIT ?",
                (now.isoformat(), limit),
            ).fetchall()
        return [_row(r) for r in rows]

    def mark_sent(self, message_id: int, at: datetime, late: bool) -> None:
        with self._lock, self._db:
            self._db.execute(
                "UPDATE messages SET state = 'sent', sent_at = ?, late = ?, attempts = attempts + 1 WHERE id = ?",
                (at.isoformat(), int(late), message_id),
            )

    def mark_failed_attempt(self, message_id: int, error: str) -> None:
        with self._lock, self._db:
            self._db.execute("UPDATE messages SET attempts = attempts + 1, last_error = ? WHERE id = ?", (error[:300], message_id))

    def drop_target(self, target: str, why: str) -> int:
        """A target was removed: its waiting messages will never go (kept in the history as dropped)."""
        with self._lock, self._db:
            return self._db.execute(
                "UPDATE messages SET state = 'dropped', last_error = ? WHERE target = ? AND state = 'pending'", (why, target)
            ).rowcount

    def history(self, limit: int = 100) -> list[Message]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM messages ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [_row(r) for r in rows]

    def counts(self) -> tuple[int, int]:
        """(pending, dropped by the bound since the file was made)."""
        with self._lock:
            (pending,) = self._db.execute("SELECT COUNT(*) FROM messages WHERE state = 'pending'").fetchone()
            row = self._db.execute("SELECT v FROM meta WHERE k = 'dropped'").fetchone()
        return pending, (row[0] if row else 0)

    def close(self) -> None:
        with self._lock:
            self._db.close()
