"""Which of two `lavos server` processes on one PostgreSQL is the hub: a session advisory lock.

The active hub holds `pg_try_advisory_lock(HUB_LOCK_KEY)` on a connection of its own, kept for
the life of the process; the standby asks for the same lock every `poll_s` (1 s) on its own
connection. PostgreSQL grants it to one session at a time and frees it when that session ends
(process killed, box gone, connection cut), so PostgreSQL alone decides: no consensus of ours.
The lock is per database, so two halls on one PostgreSQL server do not meet.

Fencing. Holding the lock is what makes a process the hub; a leader that can no longer show it
holds it must stop at once, before a standby that got the lock connects to the broker as the
same login (Mosquitto would hand the hub's session back and forth between them). So:
- every write transaction of the leader checks, on its own connection just before COMMIT, that
  the lock's session still holds the lock (`check_in`, the store's `before_commit`): one that
  finds it gone rolls back and calls `on_lost`, so no change is committed by a hub that lost
  the lock, whatever the timing;
- between transactions the leader checks its lock every LEADER_CHECK_S; a check that fails, or
  none succeeding for LOST_AFTER_S (a query stuck on a dead network), calls `on_lost` (lavos
  server exits non-zero there: systemd starts it again, as a standby);
- a process that wins the lock waits FENCE_GRACE_S (longer than LOST_AFTER_S) before it touches
  MQTT, so an old leader whose session PostgreSQL ended has fenced itself by then.
On SQLite there is one process by construction (one file, one box): no leadership at all.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

log = logging.getLogger("lavos.hub.leadership")

# Any fixed 64-bit number; "LAVOSHUB" in ASCII, so it is recognisable in pg_locks (classid/objid).
HUB_LOCK_KEY = int.from_bytes(b"LAVOSHUB", "big") & 0x7FFF_FFFF_FFFF_FFFF
STANDBY_POLL_S = 1.0
LEADER_CHECK_S = 0.5
LOST_AFTER_S = 2.5
FENCE_GRACE_S = LOST_AFTER_S + 0.5


class _ClientOptions(TypedDict):
    """libpq connection parameters (psycopg.connect passes them on by name)."""

    connect_timeout: int
    keepalives: int
    keepalives_idle: int
    keepalives_interval: int
    keepalives_count: int
    tcp_user_timeout: int
    application_name: str


# libpq and server keep-alives so a dead peer shows as an error within seconds, not TCP's hours.
_CLIENT_OPTIONS: _ClientOptions = {
    "connect_timeout": 3,
    "keepalives": 1,
    "keepalives_idle": 2,
    "keepalives_interval": 1,
    "keepalives_count": 2,
    "tcp_user_timeout": 2000,
    "application_name": "lavos hub leadership",
}
_SERVER_OPTIONS = (
    "-c tcp_keepalives_idle=2 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=2 "
    "-c tcp_user_timeout=2000 -c statement_timeout=2000 -c idle_session_timeout=0"
)


class LeadershipError(ConnectionError):
    """PostgreSQL could not be asked for the hub lock; the message says why."""


class LeadershipLost(RuntimeError):
    """A write transaction found the hub lock gone: it is rolled back, and this process stops leading."""


# The lock held by one backend (the leader's lock connection), as pg_locks shows an advisory lock
# taken with one bigint key: classid the high 32 bits, objid the low, objsubid 1.
_HELD_BY = (
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = {pid} "
    "AND classid = {classid} AND objid = {objid} AND objsubid = 1"
)


def needs_leadership(db_url: str) -> bool:
    """Only a PostgreSQL hub can have a second process beside it; SQLite's one file has one writer
    box. False for a URL that does not parse: opening the store says what is wrong with it."""
    from sqlalchemy import exc
    from sqlalchemy.engine import make_url

    try:
        return make_url(db_url).get_backend_name() == "postgresql"
    except exc.ArgumentError:
        return False


def _conninfo(db_url: str) -> str:
    from sqlalchemy.engine import make_url

    # libpq understands postgresql:// URIs; SQLAlchemy's driver suffix (+psycopg) it does not.
    return make_url(db_url).set(drivername="postgresql").render_as_string(hide_password=False)


class Leadership:
    """The lock connection of one `lavos server` process. Not thread-safe beyond what is documented:
    campaign() from one thread, then watch() starts the one checking thread."""

    def __init__(
        self,
        db_url: str,
        *,
        poll_s: float = STANDBY_POLL_S,
        key: int = HUB_LOCK_KEY,
        check_s: float = LEADER_CHECK_S,
        lost_after_s: float = LOST_AFTER_S,
    ) -> None:
        if poll_s <= 0:
            raise ValueError(f"--standby-poll {poll_s:g}: give a number of seconds above 0, e.g. 1")
        self._conninfo = _conninfo(db_url)
        self.poll_s, self.key, self.check_s, self.lost_after_s = poll_s, key, check_s, lost_after_s
        self._conn: psycopg.Connection[TupleRow] | None = None
        self.leading = False
        self._lock_pid: int | None = None  # the lock connection's backend, while leading
        self._closed = threading.Event()
        self._watcher: threading.Thread | None = None
        self._on_lost: Callable[[str], None] | None = None
        self._fired = threading.Event()

    def _connect(self) -> psycopg.Connection[TupleRow]:
        import psycopg

        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self._conninfo, autocommit=True, options=_SERVER_OPTIONS, **_CLIENT_OPTIONS)
        return self._conn

    def try_acquire(self) -> bool:
        """One attempt; True when this process now holds the lock. LeadershipError when the
        database cannot be reached (the caller decides whether that is fatal)."""
        import psycopg

        try:
            conn = self._connect()
            row = conn.execute("SELECT pg_try_advisory_lock(%s), pg_backend_pid()", (self.key,)).fetchone()
        except psycopg.Error as e:
            self._drop()
            raise LeadershipError(str(e).strip() or type(e).__name__) from None
        self.leading = bool(row and row[0])
        self._lock_pid = int(row[1]) if row and self.leading else None
        return self.leading

    def campaign(self, stop: threading.Event) -> bool:
        """Ask every poll_s until the lock is ours (True) or `stop` is set (False). A database that
        is away is retried: a standby outlives a PostgreSQL restart."""
        while not stop.is_set():
            try:
                if self.try_acquire():
                    return True
            except LeadershipError as e:
                log.warning("standby: cannot ask PostgreSQL for the hub lock (%s); trying again", e)
            stop.wait(self.poll_s)
        return False

    def check_in(self, db: Any) -> None:
        """In a write transaction (`db`, a SQLAlchemy session of the hub's store), before its
        COMMIT: raise LeadershipLost (rolling it back, and telling `on_lost`) unless the lock's
        session still holds the lock. Asked on the transaction's own connection, so a lock
        connection that died a moment ago is seen here even before the watcher's next check."""
        from sqlalchemy import text

        pid = self._lock_pid
        if not self.leading or pid is None:
            raise self._gone("this process does not hold the hub lock")
        sql = _HELD_BY.format(pid=int(pid), classid=(self.key >> 32) & 0xFFFF_FFFF, objid=self.key & 0xFFFF_FFFF)
        if not db.execute(text(sql)).scalar():
            raise self._gone("a write transaction found the hub lock no longer held by this process")

    def _gone(self, reason: str) -> LeadershipLost:
        self._lost(reason)
        return LeadershipLost(f"{reason}: the change is rolled back")

    def _lost(self, reason: str) -> None:
        if not self._fired.is_set() and not self._closed.is_set():
            self._fired.set()
            self.leading = False
            log.critical("lost the hub lock: %s; this process stops acting as the hub", reason)
            if self._on_lost is not None:
                self._on_lost(reason)

    def holds(self) -> bool:
        """Whether this connection's session still has the lock granted (False, not raise, on a dead link)."""
        import psycopg

        try:
            row = (
                self._connect_existing()
                .execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid() "
                    "AND classid = %s AND objid = %s AND objsubid = 1",
                    ((self.key >> 32) & 0xFFFF_FFFF, self.key & 0xFFFF_FFFF),
                )
                .fetchone()
            )
        except (psycopg.Error, RuntimeError):
            return False
        return bool(row and row[0])

    def _connect_existing(self) -> psycopg.Connection[TupleRow]:
        # Never reconnect while leading: a new session would not hold the lock, whatever it says.
        if self._conn is None or self._conn.closed:
            raise RuntimeError("the lock connection is gone")
        return self._conn

    def watch(self, on_lost: Callable[[str], None]) -> None:
        """While leading: check the lock every check_s, call on_lost(reason) once if it is gone or
        if no check has succeeded for lost_after_s (checked apart, so a stuck query counts too)."""
        last_ok = [time.monotonic()]
        self._on_lost = on_lost

        def check() -> None:
            while not self._closed.wait(self.check_s) and not self._fired.is_set():
                if self.holds():
                    last_ok[0] = time.monotonic()
                else:
                    self._lost("the PostgreSQL session holding it ended or no longer has it")

        def deadman() -> None:
            while not self._closed.wait(0.1) and not self._fired.is_set():
                if time.monotonic() - last_ok[0] > self.lost_after_s:
                    self._lost(f"no lock check succeeded for {self.lost_after_s:g} s")

        self._watcher = threading.Thread(target=check, name="leadership-check", daemon=True)
        self._watcher.start()
        threading.Thread(target=deadman, name="leadership-deadman", daemon=True).start()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception as e:  # noqa: BLE001 - closing a dead connection may fail; it is gone either way
                log.debug("closing the lock connection: %s", e)

    def close(self) -> None:
        """Give the lock up (ending the session frees it) and stop watching."""
        self._closed.set()
        self.leading = False
        self._drop()
