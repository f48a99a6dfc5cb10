"""`lavos server` as a real process for the security tests, with accounts made by `lavos user add`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.server import LavosServer


@contextmanager
def lavos_server(workdir: Path, mqtt_port: int, users: dict[str, tuple[str, str]]) -> Iterator[LavosServer]:
    server = LavosServer(workdir, mqtt_port, dict(users))
    server.create_users()
    try:
        yield server.start()
    finally:
        server.stop()
