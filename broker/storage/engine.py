"""Open the store: URL → engine with the right connection settings → schema at head → Store.

`open_store(url)` is what the server (and the CLI) calls once at start. It upgrades an older
schema and refuses a newer one, so an old Lavos never writes into a database it does not
understand.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, create_engine, event, exc
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker

from broker.storage import after_commit
from broker.storage.errors import StoreError
from broker.storage.migrate import upgrade_to_head

if TYPE_CHECKING:
    from broker.domain.venue import Venue

URL_HELP = "use sqlite:///PATH/lavos.db or postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
SQLITE_BUSY_TIMEOUT_MS = 10_000


def default_data_dir() -> Path:
    """$LAVOS_DATA_DIR, else /var/lib/lavos when we may write there, else ~/.local/share/lavos."""
    if env := os.environ.get("LAVOS_DATA_DIR"):
        return Path(env)
    system = Path("/var/lib/lavos")
    if system.is_dir() and os.access(system, os.W_OK):
        return system
    return Path.home() / ".local" / "share" / "lavos"


def default_db_url(data_dir: Path | None = None) -> str:
    """$LAVOS_DB if set, else a SQLite file in the data directory (created if missing)."""
    if data_dir is None and (env := os.environ.get("LAVOS_DB")):
        return env
    directory = data_dir or default_data_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # members, revenue, password hashes
    return f"sqlite:///{directory / 'lavos.db'}"


def safe_url(url: str | URL) -> str:
    """The URL with its password hidden, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except exc.ArgumentError:
        return "<unparseable URL>"


def _parse(url: str) -> URL:
    try:
        u = make_url(url)
    except exc.ArgumentError:
        raise StoreError(f"database URL {url!r} is not a URL: {URL_HELP}") from None
    if u.get_backend_name() == "postgresql":
        # psycopg 3 is the driver we ship; the bare scheme would ask for psycopg2.
        if u.drivername in ("postgresql", "postgres"):
            u = u.set(drivername="postgresql+psycopg")
    elif u.get_backend_name() == "sqlite":
        database = u.database or ""
        if database in ("", ":memory:") or database.startswith("file:"):
            raise StoreError(f"database URL {safe_url(u)!r} names no file: an in-memory database loses everything at exit; {URL_HELP}")
        parent = Path(database).expanduser().resolve().parent
        if not parent.is_dir():
            raise StoreError(f"database directory {parent} does not exist: create it, or pick another path ({URL_HELP})")
    else:
        raise StoreError(f"database URL {safe_url(u)!r}: backend {u.get_backend_name()!r} is not supported; {URL_HELP}")
    return u


def _sqlite_pragmas(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    # Let SQLAlchemy (not the sqlite3 module) decide where transactions begin; see _sqlite_begin.
    dbapi_conn.isolation_level = None
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA foreign_keys = ON")
    # WAL: the dashboard reads while ingest writes; NORMAL is durable across process crashes
    # (the case we test) and only risks the last commits on power loss.
    cur.execute("PRAGMA journal_mode = WAL")
    cur.execute("PRAGMA synchronous = NORMAL")
    cur.close()


_READ_ONLY = "lavos_read_only"


def _sqlite_begin(conn: Connection) -> None:
    # IMMEDIATE takes the write lock up front. A deferred transaction that reads and then writes
    # fails at once with "database is locked" when another writer got in between, whatever
    # busy_timeout says; waiting at BEGIN instead makes busy_timeout do its job. Readers (see
    # Store.reader) begin deferred: under WAL they neither wait for nor block the writer, and
    # query_only makes SQLite refuse any write in one ("attempt to write a readonly database"),
    # so a read path that writes fails in the tests instead of taking the write lock in the hall.
    reading = bool(conn.get_execution_options().get(_READ_ONLY))
    conn.exec_driver_sql(f"PRAGMA query_only = {int(reading)}")
    conn.exec_driver_sql("BEGIN" if reading else "BEGIN IMMEDIATE")


def create_private_file(path: Path) -> None:
    """Create `path` empty and owner-only (0600) unless it exists; never widens or narrows one that does."""
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def make_engine(url: str) -> Engine:
    """An engine for a sqlite:/// or postgresql:// URL, with our connection settings; no schema work."""
    u = _parse(url)
    if u.get_backend_name() == "sqlite":
        # The database holds members, revenue and password hashes. SQLite would create it with
        # the process umask (0644 as usual), and makes its -wal and -shm files with the database
        # file's own mode: an empty 0600 file (which SQLite opens as an empty database) keeps all
        # three private from their first byte, whoever runs us and with whatever umask.
        if u.database:  # sqlite:// alone is an in-memory database: no file to protect
            create_private_file(Path(u.database).expanduser())
        engine = create_engine(u, connect_args={"check_same_thread": False}, hide_parameters=True)
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
    else:
        engine = create_engine(u, pool_pre_ping=True, pool_size=5, max_overflow=10, hide_parameters=True)
    # hide_parameters: an error message must not carry a statement's values into the log (a card
    # UID is a credential, a member's name and note are personal data).
    return engine


class OffTheWriter(AssertionError):
    """A write transaction opened off the hub's writer thread: a bug (docs/concurrency.md, "one writer")."""


@dataclass
class Store:
    """The opened database: an engine and a session factory, schema at head.

    Once a hub binds it (`bind_writer`), a write transaction may be opened only on the hub's
    writer thread: every change of the hall, the till, members, accounts and settings is a
    command the writer runs (broker.core.commands), and this is where that is enforced rather
    than hoped for. A store no hub has bound (a CLI tool, a migration, a backup) is its
    process's only writer and may write from its one thread.
    """

    engine: Engine
    sessions: sessionmaker[Session]
    readers: sessionmaker[Session]
    _on_writer: Callable[[], bool] | None = field(default=None, repr=False)
    _writer_name: str = field(default="", repr=False)
    # Called in every write transaction before its COMMIT (the hub's fencing on PostgreSQL:
    # broker.adapters.leadership); raising rolls the transaction back.
    before_commit: Callable[[Session], None] | None = field(default=None, repr=False)

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    @property
    def url(self) -> str:
        return safe_url(self.engine.url)

    def bind_writer(self, on_writer: Callable[[], bool], name: str) -> None:
        """From now on only the thread for which `on_writer()` is true may open session()."""
        if self._on_writer is not None:
            raise OffTheWriter(f"this store already has a writer ({self._writer_name}); one hub per store")
        self._on_writer, self._writer_name = on_writer, name

    def unbind_writer(self) -> None:
        """The hub is closed: its writer is gone and the store is its process's again."""
        self._on_writer, self._writer_name = None, ""

    @property
    def writer_bound(self) -> bool:
        return self._on_writer is not None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One write transaction: committed when the block ends, rolled back if it raises.

        Its effects (broker.storage.after_commit) are handed on after the commit, dropped on a
        rollback. Off the bound writer thread this raises OffTheWriter before touching the database.
        """
        if self._on_writer is not None and not self._on_writer():
            raise OffTheWriter(
                f"a write transaction on thread {threading.current_thread().name!r}: only {self._writer_name} writes; "
                "submit a command (Hub.execute) instead"
            )
        s = self.sessions()
        try:
            with s.begin():
                yield s
                if self.before_commit is not None:
                    self.before_commit(s)
        except BaseException:
            after_commit.rolled_back(s)
            raise
        finally:
            s.close()
        after_commit.committed(s)

    @contextmanager
    def reader(self) -> Iterator[Session]:
        """A transaction for reading only (dashboards, reports), on any thread: on SQLite it does
        not queue behind writers. The database refuses a write in it at once (a read-only
        transaction on both backends), so a read path that writes can never hold or wait for the
        write lock; changes go through session() on the writer."""
        with self.readers.begin() as s:
            yield s

    def close(self) -> None:
        self.engine.dispose()


def open_store(url: str | None = None, *, upgrade: bool = True, venue: Venue | None = None) -> Store:
    """Open the store at `url` (default: default_db_url()), upgrading its schema to head (with the
    venue file when the caller has it: a revision may move data it names, see migrate.upgrade_to_head).

    Raises StoreError with what to do when the URL is wrong, the server cannot be reached, the
    file is not a database, or the schema is newer than this code (SchemaTooNew).
    """
    url = url or default_db_url()
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            upgrade_to_head(conn, migrate=upgrade, venue=venue)
    except StoreError:
        engine.dispose()
        raise
    except exc.DBAPIError as e:
        engine.dispose()
        detail = str(e.orig).strip().splitlines()[0] if e.orig else str(e)
        raise StoreError(f"cannot open database {safe_url(url)!r}: {detail}") from None
    # A reader cannot write, on either backend: SQLite's query_only (_sqlite_begin), PostgreSQL's
    # READ ONLY transaction. Only the writer's sessions write (Store.bind_writer).
    read_only: dict[str, object] = {_READ_ONLY: True}
    if engine.dialect.name == "postgresql":
        read_only["postgresql_readonly"] = True
    readers = sessionmaker(engine.execution_options(**read_only), expire_on_commit=False)
    return Store(engine, sessionmaker(engine, expire_on_commit=False), readers)
