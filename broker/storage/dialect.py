"""The one place that knows SQLite and PostgreSQL spell upserts with different insert() classes."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def table_of(model: Any) -> Table:
    """A mapped class's Table. Declarative types `__table__` as a FromClause, which has no
    insert(); every model here is mapped to a plain Table."""
    return cast(Table, model.__table__)


def upsert_insert(db: Session, table: Table) -> postgresql.Insert | sqlite.Insert:
    """An INSERT that has on_conflict_do_nothing/on_conflict_do_update for db's backend."""
    name = db.get_bind().dialect.name
    if name == "postgresql":
        return postgresql.insert(table)
    if name == "sqlite":
        return sqlite.insert(table)
    raise NotImplementedError(f"no upsert for backend {name!r}")
