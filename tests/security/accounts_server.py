"""`lavos server` as a real process for the security tests, with its accounts in a fresh database
(seeded from a copied file; `by_cli=True`: made by `lavos user add`, one process and a real hash each)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.server import LavosServer


@contextmanager
def lavos_server(workdir: Path, mqtt_port: int, users: dict[str, tuple[str, str]], *, by_cli: bool = False) -> Iterator[LavosServer]:
    server = LavosServer(workdir, mqtt_port, dict(users))
    if by_cli:
        server.create_users()
    else:
        server.seed_users()
    try:
        yield server.start()
    finally:
        server.stop()
