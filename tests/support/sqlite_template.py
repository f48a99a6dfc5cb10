"""A SQLite database migrated to head once per test process, copied for each test that wants a fresh one;
the same with test accounts in it, for the tests that run `lavos server` as a process.

Migrating from scratch runs every Alembic revision (0.2 s idle, over a second on a loaded machine);
copying the migrated file takes a millisecond, and what a test gets is the same file. Tests about
migrating itself (tests/broker/storage/test_db.py, a newer schema refused) keep opening empty files.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from pathlib import Path

from argon2 import PasswordHasher

_lock = threading.Lock()
_template: Path | None = None


def _made_template() -> Path:
    global _template
    with _lock:
        if _template is None:
            from broker.storage.engine import open_store

            where = Path(tempfile.mkdtemp(prefix="lavos-sqlite-template-"))
            atexit.register(shutil.rmtree, where, True)
            path = where / "template.db"
            open_store(f"sqlite:///{path}").close()  # the last connection closed: no -wal or -shm left
            _template = path
        return _template


def migrated_sqlite(path: Path) -> str:
    """A fresh database at `path`, migrated to head (a copy of this process's template); its URL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_made_template(), path)
    return f"sqlite:///{path}"


# argon2 at its lowest costs: a test account is made in microseconds instead of ~180 ms of CPU.
# Verification reads the costs from the hash, and the first successful login re-hashes the
# password with the real ones, as it would for an account made by an older Lavos.
CHEAP = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
_with_users: dict[tuple[tuple[str, str, str], ...], Path] = {}


def write_users(db_url: str, users: dict[str, tuple[str, str]]) -> None:
    """`users` ({name: (role, password)}) into the migrated database at `db_url` (SQLite or
    PostgreSQL; no hub on it yet), as `lavos user add` makes them but hashed CHEAP."""
    from broker.accounts.users import create_user, new_password
    from broker.storage.engine import open_store

    store = open_store(db_url)
    try:
        with store.session() as db:  # no hub on this store: this process's own to write
            for name, (role, password) in sorted(users.items()):
                create_user(db, name, new_password(password, CHEAP), role, actor="tests")
    finally:
        store.close()


def sqlite_with_users(path: Path, users: dict[str, tuple[str, str]]) -> str:
    """A fresh migrated database at `path` holding `users` ({name: (role, password)}), as
    `lavos user add` makes them but hashed CHEAP; a copy of a file made once per process per set of users."""
    key = tuple(sorted((name, role, password) for name, (role, password) in users.items()))
    with _lock:
        made = _with_users.get(key)
    if made is None:
        made = Path(tempfile.mkdtemp(prefix="lavos-sqlite-users-")) / "users.db"
        atexit.register(shutil.rmtree, made.parent, True)
        write_users(migrated_sqlite(made), users)
        with _lock:
            _with_users[key] = made
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made, path)
    return f"sqlite:///{path}"
