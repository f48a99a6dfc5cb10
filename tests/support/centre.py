"""`lavos central serve`'s web app (the records API and the pages) in a thread of this process.

The server `lavos central serve` runs (dashboard/http_server.py: the hall's, with its head timeout and
connection cap), on a port that outlives a restart (`stop()` then a new CentreServer on the same
port), over HTTPS when given a certificate and its key, as `lavos central serve --tls-cert --tls-key`.
Used by the several-halls tests (tests/central/) and the halls bench (bench/halls.py).
"""

from __future__ import annotations

import threading
from pathlib import Path

import uvicorn

from broker.central.service import Central
from broker.domain.venue import Venue, load_venue
from dashboard.cli import HttpAddress
from dashboard.http_server import http_server
from dashboard.web.central.app import build_central_app
from sim.mosquitto import free_port, wait_port
from tests.support.hub import VENUE


def hall_venue(hall: str) -> Venue:
    """The shipped venue as hall `hall` (its venue id, the hall's id everywhere it reports)."""
    v = load_venue(VENUE)
    return v.model_copy(update={"venue": v.venue.model_copy(update={"id": hall, "name": f"Lavos {hall.upper()}"})})


class CentreServer:
    def __init__(self, central: Central, port: int | None = None, *, tls: tuple[Path, Path] | None = None) -> None:
        self.central = central
        self.port = port or free_port()
        self.tls = tls  # (certificate, key)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> CentreServer:
        app = build_central_app(self.central, secret="s", https_cookies=self.tls is not None)
        self._server = http_server(app, log_level="warning", access_log=False, tls=self.tls)
        self._sock = HttpAddress("127.0.0.1", self.port).bind()
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, name="central-http", daemon=True)
        self._thread.start()
        wait_port(self.port)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
            self._sock.close()
