"""Alembic environment: runs on the connection migrate.py hands over, or on -x url=... from the CLI."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from broker.storage.models import Base

config = context.config


def _run(connection: Connection) -> None:
    # render_as_batch: SQLite cannot ALTER most things; batch mode rebuilds the table instead.
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    from broker.storage.engine import make_engine

    url = context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        raise SystemExit("pass the database with -x url=sqlite:///PATH or -x url=postgresql://...")
    with make_engine(url).connect() as conn:
        _run(conn)
        conn.commit()
