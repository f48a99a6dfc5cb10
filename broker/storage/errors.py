"""Errors of the store, each with a message that says what to do."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The store cannot be opened or used; str() says what to do."""


class SchemaTooNew(StoreError):
    """The database was migrated by a newer Lavos; this one must not write into it."""

    def __init__(self, found: str, known_head: str) -> None:
        self.found = found
        self.known_head = known_head
        super().__init__(f"database schema {found} is newer than this version of Lavos (knows up to {known_head}); upgrade Lavos")
