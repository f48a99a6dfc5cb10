"""A real `lavos server` (SQLite, real Mosquitto) with staff made by the `lavos user` command, and
HTTP clients that come from a chosen loopback address (the whole 127/8 is this machine), so a
test can be an attacker at 127.0.0.2 and the manager at 127.0.0.1 at once."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from devices import contract
from tests.support import httpc
from tests.support.matching import found
from tests.support.mqtt import Collector
from tests.support.server import serving
from tests.support.web import _CSRF

MANAGER, STAFF = "manager", "jana"
PASSWORDS = {MANAGER: "Manažér-tajné-heslo-7", STAFF: "Čašníčka-heslo-42"}


@dataclass
class Server:
    base: str
    db: Path
    token: str  # the manager's API token
    log: Path
    mosquitto_port: int

    def client(self, address: str = "127.0.0.1", **kw: Any) -> httpx.Client:
        """An HTTP client whose connections come from `address`."""
        return httpc.Client(base_url=self.base, transport=httpc.HTTPTransport(local_address=address), timeout=kw.pop("timeout", 30), **kw)

    def page_login(self, address: str, username: str, password: str) -> httpx.Response:
        """The /login form as a browser fills it (CSRF token from the page), from `address`."""
        with self.client(address, follow_redirects=False) as c:
            token = found(_CSRF, c.get("/login").text).group(1)
            return c.post("/login", data={"username": username, "password": password, "csrf_token": token, "next": "/"})

    def stored_within(self, node: Collector, table: str, timeout: float) -> float:
        """Publish one pocket event as `table`'s node; seconds until the hub has stored it."""
        boot = f"sec-{uuid.uuid4().hex[:8]}"
        ev = contract.PocketEvent(
            v=1,
            table=table,
            type="pocket",
            boot=boot,
            seq=1,
            ts=datetime.now(UTC),
            ts_synced=True,
            data=contract.PocketData(pocket=1, pulse_ms=20.0),
        )
        engine = create_engine(f"sqlite:///{self.db}")
        try:
            t0 = time.monotonic()
            node.publish(contract.event_topic(table, "pocket"), contract.encode(ev))
            while time.monotonic() - t0 < timeout:
                with engine.connect() as c:
                    if c.execute(text("select count(*) from events where boot = :b"), {"b": boot}).scalar_one():
                        return time.monotonic() - t0
                time.sleep(0.02)
            return float("inf")
        finally:
            engine.dispose()


@contextlib.contextmanager
def lavos_server(mosquitto: Any, tmp: Path) -> Iterator[Server]:
    # Its own process group, stopped whole. 127.0.0.1 answers clients from anywhere in 127/8.
    with serving(mosquitto.port, tmp, own_group=True) as served:
        for user, role in ((MANAGER, "manager"), (STAFF, "staff")):
            pw = tmp / f"{user}.pw"
            pw.write_text(PASSWORDS[user] + "\n")
            served.cli("user", "add", user, "--role", role, "--password-file", str(pw), "--db", served.db)
        token = served.cli("user", "token", MANAGER, "--name", "security-test", "--db", served.db).stdout.strip().splitlines()[0]
        yield Server(served.base, tmp / "lavos.db", token, served.log, mosquitto.port)


@contextlib.contextmanager
def node(server: Server, table: str) -> Iterator[Collector]:
    """Publish as the table's node (its own MQTT user, as in the hall)."""
    c = Collector(server.mosquitto_port, username=table, password=f"pw-{table}", topics=(contract.light_set_topic(table),))
    try:
        yield c
    finally:
        c.close()


def status_json(r: httpx.Response) -> tuple[int, str]:
    try:
        return r.status_code, json.loads(r.text).get("detail", "")
    except ValueError:
        return r.status_code, r.text[:80]
