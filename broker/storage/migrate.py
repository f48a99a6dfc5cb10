"""Bring a database's schema to the head revision this code knows, or refuse a newer one."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, text

from broker.storage.errors import SchemaTooNew, StoreError

if TYPE_CHECKING:
    from broker.domain.venue import Venue

ALEMBIC_INI = Path(__file__).resolve().parent / "alembic.ini"
# Any constant will do; it only has to be the same in every Lavos process sharing a database.
_PG_MIGRATION_LOCK = 0x1A405


def alembic_config() -> Config:
    return Config(str(ALEMBIC_INI))


@cache
def _scripts() -> ScriptDirectory:
    """The migration scripts, read once per process: they do not change while it runs, and reading
    them imports every revision file (each store opened, e.g. a test's, read them again)."""
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    heads = _scripts().get_heads()
    if len(heads) != 1:  # two revisions with the same parent: a merge revision is missing
        raise StoreError(f"the migrations have {len(heads)} heads ({', '.join(heads)}); write a merge revision")
    return heads[0]


def current_revision(conn: Connection) -> str | None:
    heads = MigrationContext.configure(conn).get_current_heads()
    return heads[0] if heads else None


def upgrade_to_head(conn: Connection, *, migrate: bool = True, venue: Venue | None = None) -> str:
    """Upgrade the schema on `conn` to head and commit; returns the head revision.

    Several Lavos processes may start at once: on PostgreSQL an advisory lock serialises them,
    on SQLite the IMMEDIATE transaction (see engine.py) does. `venue`: the venue file, for a
    revision that moves data named by it (0012: a game's extras onto its tab); the server hands it over.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
    cfg = alembic_config()
    script = _scripts()
    head = head_revision()
    found = current_revision(conn)
    if found is not None:
        try:
            known = script.get_revision(found)
        except CommandError:
            known = None
        if known is None:
            raise SchemaTooNew(found, head)
    if found != head:
        if not migrate:
            raise StoreError(
                f"database schema is at {found or 'nothing'}, this Lavos needs {head}: start the server once, or run `lavos db upgrade`"
            )
        cfg.attributes["connection"] = conn
        cfg.attributes["venue"] = venue
        command.upgrade(cfg, "head")
    conn.commit()
    return head
