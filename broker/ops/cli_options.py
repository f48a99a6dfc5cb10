"""Options and helpers the hub's commands share (`lavos members`, `lavos db`, `lavos user`)."""

from __future__ import annotations

import getpass
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from devices.cli_support import fail

if TYPE_CHECKING:  # the commands import SQLAlchemy when they run, not for `lavos --help`
    from sqlalchemy.orm import Session

DB_HELP = "Database URL (default: $LAVOS_DB, else a SQLite file in the data directory), e.g. postgresql://lavos@localhost/lavos"
db_option = typer.Option(None, "--db", help=DB_HELP, show_default=False)
actor_option = typer.Option(None, "--actor", help="Who does this, for the audit log (default: your login name)", show_default=False)


def actor_name(actor: str | None) -> str:
    if actor:
        return actor
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


@contextmanager
def store_session(db: str | None) -> Iterator[Session]:
    """One transaction on the opened store; a known error becomes a message and exit code 2."""
    from broker.accounts.users import UserError
    from broker.storage.engine import open_store
    from broker.storage.errors import StoreError
    from broker.storage.members import MemberError
    from broker.storage.members_csv import MemberImportError

    try:
        store = open_store(db)
    except StoreError as e:
        raise fail(str(e)) from None
    try:
        with store.session() as s:
            yield s
    except (MemberError, MemberImportError, UserError) as e:
        raise fail(str(e)) from None
    finally:
        store.close()
