"""`lavos backup` / `lavos restore` on both backends: a backup taken while a writer keeps
inserting is one consistent moment, restores into a fresh database, and bad input is refused
with a message that says what to do."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select, text

from broker.ops.backup import BackupError, backup, restore
from broker.storage.engine import open_store
from broker.storage.events import insert_events_once
from broker.storage.members import add_member
from broker.storage.migrate import head_revision
from broker.storage.models import Event, Member
from tests.support.cli import lavos as run_lavos
from tests.support.hub import REPO

if TYPE_CHECKING:
    from pathlib import Path


BATCH = 25  # rows per writer transaction: a consistent copy holds whole batches only
FUTURE = "9999_from_a_newer_lavos"


def event_rows(batch: int) -> list[dict[str, Any]]:
    at = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
    return [
        dict(
            table_id=f"pool-{(seq % 10) + 1:02d}",
            boot="boot-1",
            seq=seq,
            type="pocket",
            node_ts=at,
            ts_synced=True,
            data={"pocket": seq % 6, "pulse_ms": 20.0},
            received_at=at,
        )
        for seq in range(batch * BATCH, (batch + 1) * BATCH)
    ]


class Writer(threading.Thread):
    """Keeps committing batches of events, as the hub does while a backup runs."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.store = open_store(url)
        self.batches = 0
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                with self.store.session() as db:
                    insert_events_once(db, event_rows(self.batches))
                self.batches += 1
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e
        finally:
            self.store.close()

    def wait_for(self, batches: int) -> None:
        deadline = time.monotonic() + 30
        while self.batches < batches and self.error is None:
            assert time.monotonic() < deadline, "writer too slow"
            time.sleep(0.01)


def snapshot(url: str) -> tuple[list[tuple[Any, ...]], list[str]]:
    store = open_store(url)
    try:
        with store.session() as db:
            events = [(e.table_id, e.boot, e.seq, e.type, e.node_ts, e.data) for e in db.scalars(select(Event).order_by(Event.seq))]
            members = list(db.scalars(select(Member.name).order_by(Member.name)))
    finally:
        store.close()
    return events, members


@pytest.fixture
def fresh_url(request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> Iterator[Any]:
    """An empty database of the same backend as db_url (not even migrated)."""
    if db_url.startswith("sqlite"):
        (tmp_path / "restored").mkdir()
        yield f"sqlite:///{tmp_path / 'restored' / 'lavos.db'}"
        return
    cluster = request.getfixturevalue("postgres_cluster")
    url = cluster.create_database()
    yield url
    cluster.drop_database(url)


def set_revision(url: str, revision: str) -> None:
    store = open_store(url)
    try:
        with store.session() as db:
            db.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    finally:
        store.close()


def test_backup_while_writing_restores_one_consistent_moment(db_url: str, fresh_url: Any, tmp_path: Path) -> None:
    store = open_store(db_url)
    with store.session() as db:
        add_member(db, "Ambra Tomáš", actor="test")
        add_member(db, "Zadražil Miro", actor="test")
    store.close()
    writer = Writer(db_url)
    writer.start()
    try:
        writer.wait_for(4)
        report = backup(db_url, tmp_path / "lavos.backup")
        at_backup = writer.batches
        writer.wait_for(at_backup + 4)  # it kept writing: the backup blocked nobody
    finally:
        writer.stop.set()
        writer.join(10)
    assert writer.error is None
    assert "backed up" in report and str(tmp_path / "lavos.backup") in report and f"schema {head_revision()}" in report

    said = restore(tmp_path / "lavos.backup", fresh_url)
    assert said.startswith(f"restored {tmp_path / 'lavos.backup'}") and "Restart lavos server" in said

    source_events, source_members = snapshot(db_url)
    restored_events, restored_members = snapshot(fresh_url)
    assert restored_members == source_members == ["Ambra Tomáš", "Zadražil Miro"]
    n = len(restored_events)
    # whole transactions only, from the first one on, and nothing invented
    assert n % BATCH == 0 and 4 * BATCH <= n <= (at_backup + 1) * BATCH
    assert [e[2] for e in restored_events] == list(range(n))
    assert restored_events == source_events[:n]
    assert len(source_events) > n
    assert f"schema {head_revision()}" in said and " rows in " in said


def test_restore_refuses_a_database_with_rows_unless_forced(db_url: str, tmp_path: Path) -> None:
    store = open_store(db_url)
    with store.session() as db:
        add_member(db, "Ambra Tomáš", actor="test")
    with store.session() as db:
        add_member(db, "Zadražil Miro", actor="test")
        backup(db_url, tmp_path / "one-member.backup")  # sees committed rows only
    store.close()
    with pytest.raises(BackupError, match=r"is not empty \(\d+ rows\).*--force"):
        restore(tmp_path / "one-member.backup", db_url)
    assert snapshot(db_url)[1] == ["Ambra Tomáš", "Zadražil Miro"]  # untouched
    said = restore(tmp_path / "one-member.backup", db_url, force=True)
    assert "rows it held before are replaced" in said
    assert snapshot(db_url)[1] == ["Ambra Tomáš"]
    with pytest.raises(BackupError, match=r"exists already.*--force"):
        backup(db_url, tmp_path / "one-member.backup")


def test_a_backup_from_a_newer_schema_is_refused(db_url: str, fresh_url: Any, tmp_path: Path) -> None:
    set_revision(db_url, FUTURE)  # as if a newer Lavos had migrated it
    backup(db_url, tmp_path / "future.backup")  # copying is fine...
    with pytest.raises(BackupError, match=f"newer Lavos.*{FUTURE}.*upgrade Lavos first"):
        restore(tmp_path / "future.backup", fresh_url)  # ...writing it where this Lavos works is not


def test_a_backup_is_private_whatever_the_umask(db_url: str, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        backup(db_url, tmp_path / "private.backup")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private.backup").stat().st_mode) == 0o600


def test_a_backup_of_the_other_backend_is_refused(db_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    mine = tmp_path / "mine.backup"
    backup(db_url, mine)
    if db_url.startswith("sqlite"):
        other = request.getfixturevalue("postgres_cluster").url("postgres")
        expected = "is a sqlite backup and .* a postgresql database"
    else:
        other = f"sqlite:///{tmp_path / 'other.db'}"
        expected = "is a postgresql backup and .* a sqlite database"
    with pytest.raises(BackupError, match=expected):
        restore(mine, other)


def lavos(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lavos_cli", *args], capture_output=True, text=True, cwd=REPO, timeout=60)


def test_cli_garbage_is_one_clear_line(tmp_path: Path) -> None:
    # In-process (tests/support/cli.py): the messages and exit codes are the command's; a traceback
    # would raise here instead of reaching stderr. test_cli_backup_and_restore runs the real process.
    lavos = run_lavos
    url = f"sqlite:///{tmp_path / 'lavos.db'}"
    open_store(url).close()
    (tmp_path / "notes.txt").write_text("not a backup at all\n")
    not_lavos = tmp_path / "other-app.db"
    with sqlite3.connect(not_lavos) as c:
        c.execute("CREATE TABLE t (x)")
    cases = [
        (("restore", str(tmp_path / "missing.backup"), "--db", url), "does not exist"),
        (("restore", str(tmp_path / "notes.txt"), "--db", url), "is not a Lavos backup"),
        (("restore", str(not_lavos), "--db", url), "holds no Lavos schema"),
        (("backup", str(tmp_path / "b.db"), "--db", f"sqlite:///{tmp_path / 'nowhere.db'}"), "no database at"),
        (("backup", str(tmp_path / "nodir" / "b.db"), "--db", url), "does not exist; create it"),
        (("backup", str(tmp_path / "b.db"), "--db", "mysql://x/y"), "not supported"),
    ]
    for args, message in cases:
        done = lavos(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    assert not (tmp_path / "nowhere.db").exists()  # a typo in --db does not create a database


def test_cli_backup_and_restore(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lavos.db'}"
    store = open_store(url)
    with store.session() as db:
        insert_events_once(db, event_rows(0))
    store.close()
    done = lavos("backup", str(tmp_path / "b.db"), "--db", url)
    assert done.returncode == 0 and done.stdout.startswith(f"backed up {url}"), done.stderr
    done = lavos("restore", str(tmp_path / "b.db"), "--db", f"sqlite:///{tmp_path / 'again.db'}")
    assert done.returncode == 0 and f"{BATCH} rows in" in done.stdout, done.stderr
    assert snapshot(f"sqlite:///{tmp_path / 'again.db'}") == snapshot(url)
