"""`lavos backup` and `lavos restore`: a consistent copy of the database while the server runs.

SQLite: the online backup API copies every page inside one read transaction, so under WAL the
copy is a snapshot of one moment while the server goes on writing; the result is an ordinary
SQLite file (open it with `sqlite3` to look inside). Copying the .db file with cp instead can
tear a page or miss what still sits in the -wal file.

PostgreSQL: pg_dump's custom format (one snapshot, restorable with pg_restore by hand too),
run with the URL's credentials; the password goes through the environment, never argv.

Restore refuses a database that holds rows unless forced, refuses a backup made by a newer
Lavos (its schema would be unknown here), and upgrades an older backup's schema to head.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, create_engine, exc, inspect, text
from sqlalchemy.engine import URL

from broker.storage.engine import SQLITE_BUSY_TIMEOUT_MS, _parse, create_private_file, make_engine, open_store, safe_url
from broker.storage.errors import StoreError
from broker.storage.migrate import alembic_config, current_revision, head_revision

SQLITE_MAGIC = b"SQLite format 3\x00"
PGDUMP_MAGIC = b"PGDMP"
SCHEMA_TABLE = "alembic_version"
PG_CLIENT_HINT = "install the PostgreSQL client tools (apt-get install postgresql-client) of the server's major version or newer"


class BackupError(RuntimeError):
    """A backup or restore that cannot be done; str() says what to do."""


@dataclass(frozen=True)
class Contents:
    """What a database or backup holds: schema revision and rows per table."""

    revision: str | None
    rows: dict[str, int]

    def describe(self) -> str:
        return f"schema {self.revision}, {sum(self.rows.values())} rows in {len(self.rows)} tables"


# -- shared helpers -------------------------------------------------------------------------


def _url(url: str) -> URL:
    try:
        return _parse(url)
    except StoreError as e:
        raise BackupError(str(e)) from None


def _contents(engine: Engine) -> Contents:
    with engine.connect() as conn:
        tables = sorted(t for t in inspect(conn).get_table_names() if t != SCHEMA_TABLE)
        rows = {t: conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one() for t in tables}
        revision = current_revision(conn) if inspect(conn).has_table(SCHEMA_TABLE) else None
    return Contents(revision, rows)


def _read_contents(engine: Engine, what: str) -> Contents:
    try:
        return _contents(engine)
    except exc.DBAPIError as e:
        detail = str(e.orig).strip().splitlines()[0] if e.orig else str(e)
        raise BackupError(f"cannot read {what}: {detail}") from None
    finally:
        engine.dispose()


def _check_restorable(revision: str | None, source: Path) -> None:
    if revision is None:
        raise BackupError(f"{source} holds no Lavos schema (no {SCHEMA_TABLE} table): it is not a Lavos backup")
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    try:
        known = ScriptDirectory.from_config(alembic_config()).get_revision(revision)
    except CommandError:
        known = None
    if known is None:
        raise BackupError(
            f"{source} was made by a newer Lavos (schema {revision}; this one knows up to {head_revision()}): "
            "upgrade Lavos first, then restore"
        )


def _kind_of(path: Path) -> str:
    """'sqlite' or 'postgresql', from the file's first bytes."""
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        raise BackupError(f"backup file {path} does not exist") from None
    except OSError as e:
        raise BackupError(f"cannot read the backup file {path}: {e.strerror}") from None
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(PGDUMP_MAGIC):
        return "postgresql"
    raise BackupError(f"{path} is not a Lavos backup (neither a SQLite database nor a pg_dump custom-format archive)")


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def _atomically(dest: Path, force: bool, write: Callable[[Path], object]) -> None:
    """Write through a temporary file beside `dest`, so a failed backup never leaves half a file
    under the name a restore would later trust."""
    if dest.exists() and not force:
        raise BackupError(f"{dest} exists already; pick another name or add --force to replace it")
    if not dest.parent.is_dir():
        raise BackupError(f"directory {dest.parent} does not exist; create it first")
    partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    partial.unlink(missing_ok=True)
    try:
        # A backup holds members, revenue and password hashes: private from its first byte
        # (sqlite3 and pg_dump both write into the empty file and keep its mode).
        create_private_file(partial)
        write(partial)
        with partial.open("rb") as f:
            os.fsync(f.fileno())
        os.replace(partial, dest)
    finally:
        partial.unlink(missing_ok=True)


# -- SQLite ---------------------------------------------------------------------------------


def _sqlite_connect(path: Path, *, must_exist: bool) -> sqlite3.Connection:
    # mode=rw does not create a missing file: a typo in --db must not back up a new empty database.
    uri = f"file:{path}?mode={'rw' if must_exist else 'rwc'}"
    try:
        return sqlite3.connect(uri, uri=True, timeout=SQLITE_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.OperationalError as e:
        raise BackupError(f"cannot open the SQLite database {path}: {e}") from None


def _sqlite_file_engine(path: Path) -> Engine:
    # Read-only and without our WAL pragma: reading a backup file must not change it.
    return create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")


def _sqlite_backup(u: URL, dest: Path, force: bool) -> Contents:
    source = Path(u.database or "")
    if not source.is_file():
        raise BackupError(f"no database at {source}: check --db (or $LAVOS_DB)")

    def write(partial: Path) -> None:
        src = _sqlite_connect(source, must_exist=True)
        dst = sqlite3.connect(partial, isolation_level=None)
        try:
            src.backup(dst)  # all pages in one step = one read transaction = one consistent snapshot
            dst.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, no -wal beside it
            if (check := dst.execute("PRAGMA quick_check").fetchone()[0]) != "ok":
                raise BackupError(f"the copy of {source} fails SQLite's integrity check ({check}); the database itself may be damaged")
        except sqlite3.DatabaseError as e:
            raise BackupError(f"cannot back up {source}: {e}") from None
        finally:
            dst.close()
            src.close()

    _atomically(dest, force, write)
    return _read_contents(_sqlite_file_engine(dest), str(dest))


def _sqlite_restore(source: Path, u: URL, target_url: str) -> None:
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = _sqlite_connect(Path(u.database or ""), must_exist=False)
    try:
        # Through SQLite's own locking, not a file copy: a process holding the target open sees
        # the restored database as a whole, never a file swapped under it.
        src.backup(dst)
        dst.execute("PRAGMA journal_mode = WAL")  # what the server uses (see broker/storage/engine.py)
    except sqlite3.DatabaseError as e:
        raise BackupError(f"cannot restore {source} into {safe_url(target_url)}: {e}") from None
    finally:
        dst.close()
        src.close()


# -- PostgreSQL -----------------------------------------------------------------------------


def _pg_tool(name: str) -> str:
    tool = shutil.which(name)
    if tool is None:
        raise BackupError(f"{name} is missing: {PG_CLIENT_HINT}")
    return tool


def _pg_conninfo(u: URL) -> tuple[str, dict[str, str]]:
    """A libpq URL without the password, and the environment that carries the password."""
    env = dict(os.environ)
    if u.password is not None:
        env["PGPASSWORD"] = str(u.password)
    return u.set(drivername="postgresql", password=None).render_as_string(hide_password=False), env


def _pg_run(args: list[str], env: dict[str, str], what: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        raise BackupError(f"{what} failed: {' / '.join(detail[-3:]) or f'exit status {done.returncode}'}")
    return done.stdout


def _pg_backup_revision(source: Path) -> str | None:
    """The schema revision inside a pg_dump archive, read without restoring it."""
    out = _pg_run(
        [_pg_tool("pg_restore"), "--data-only", f"--table={SCHEMA_TABLE}", "--file=-", str(source)], dict(os.environ), f"reading {source}"
    )
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("COPY ") and SCHEMA_TABLE in line:
            values = [v for v in lines[i + 1 :] if v != "\\."][:1]
            return values[0].strip() if values else None
    return None


def _pg_backup(u: URL, url: str, dest: Path, force: bool) -> Contents:
    contents = _read_contents(make_engine(url), safe_url(url))  # a wrong URL is one clear line, before pg_dump
    conninfo, env = _pg_conninfo(u)
    tool = _pg_tool("pg_dump")
    _atomically(
        dest,
        force,
        lambda partial: _pg_run([tool, "--format=custom", f"--file={partial}", f"--dbname={conninfo}"], env, f"pg_dump of {safe_url(url)}"),
    )
    # The counts above were taken a moment before pg_dump's own snapshot; report the schema only.
    return Contents(contents.revision, {})


def _pg_restore(source: Path, u: URL) -> None:
    conninfo, env = _pg_conninfo(u)
    # --clean --if-exists: a migrated but empty target already has the tables; --single-transaction:
    # a failure half-way leaves the target as it was; --no-owner: the dump's roles need not exist here.
    _pg_run(
        [
            _pg_tool("pg_restore"),
            "--clean",
            "--if-exists",
            "--no-owner",
            "--no-acl",
            "--single-transaction",
            "--exit-on-error",
            f"--dbname={conninfo}",
            str(source),
        ],
        env,
        f"pg_restore of {source}",
    )


# -- the commands ---------------------------------------------------------------------------


def backup(url: str, dest: Path, *, force: bool = False) -> str:
    """Copy the database at `url` into `dest` while it may be in use; returns what was done."""
    u = _url(url)
    started = time.monotonic()
    contents = _sqlite_backup(u, dest, force) if u.get_backend_name() == "sqlite" else _pg_backup(u, url, dest, force)
    if contents.revision is None:
        dest.unlink(missing_ok=True)
        raise BackupError(f"{safe_url(url)} holds no Lavos schema: check --db (or $LAVOS_DB)")
    what = contents.describe() if contents.rows else f"schema {contents.revision}"
    return (
        f"backed up {safe_url(url)} ({u.get_backend_name()}, {what}) to {dest} "
        f"({_size(dest.stat().st_size)}) in {time.monotonic() - started:.1f} s"
    )


def restore(source: Path, url: str, *, force: bool = False) -> str:
    """Restore a backup into the database at `url` and upgrade it to this Lavos's schema."""
    kind = _kind_of(source)
    u = _url(url)
    backend = u.get_backend_name()
    if kind != backend:
        raise BackupError(
            f"{source} is a {kind} backup and {safe_url(url)} a {backend} database: restore it into a "
            f"{'sqlite:///PATH' if kind == 'sqlite' else 'postgresql://'} URL (moving between SQLite and "
            "PostgreSQL is not something backup/restore does)"
        )
    if kind == "sqlite":
        revision = _read_contents(_sqlite_file_engine(source), f"the backup {source}").revision
    else:
        revision = _pg_backup_revision(source)
    _check_restorable(revision, source)

    target_engine = make_engine(url)
    before = _read_contents(target_engine, safe_url(url))
    held = sum(before.rows.values())
    if held and not force:
        raise BackupError(
            f"{safe_url(url)} is not empty ({held} rows): restore into a new database, or add --force to "
            "replace its contents (back it up first)"
        )
    if kind == "sqlite":
        _sqlite_restore(source, u, url)
    else:
        _pg_restore(source, u)
    try:
        open_store(url).close()  # an older backup's schema is upgraded to head now, not at the next start
    except StoreError as e:
        raise BackupError(f"restored, but the schema upgrade failed: {e}") from None
    after = _read_contents(make_engine(url), safe_url(url))
    done = f"restored {source} ({kind} backup, schema {revision}) into {safe_url(url)}: {after.describe()}"
    if held:
        done += f"; the {held} rows it held before are replaced"
    if revision != after.revision:
        done += f"; schema upgraded to {after.revision}"
    return done + ". Restart lavos server now: it keeps open games and alerts in memory."
