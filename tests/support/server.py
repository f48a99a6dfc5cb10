"""`lavos server` as a real process for the tests: its command line, the wait until it serves, a
throwaway one on SQLite (`serving`), and `LavosServer`, which keeps its port across stop/start.

The tests that need the hub in-process use tests/support/hub.py instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

from sim.mosquitto import free_port
from tests.support import httpc
from tests.support.hub import REPO, VENUE
from tests.support.sqlite_template import sqlite_with_users, write_users

# The `lavos` command as the tests start it: this Python, whatever scripts are on PATH.
LAVOS = [sys.executable, "-c", "from lavos_cli import app; app()"]
# Generous: on a loaded 2-core machine the first start migrates the database and imports FastAPI.
START_TIMEOUT_S = 60.0


class ServerDied(RuntimeError):
    pass


def server_argv(mqtt_port: int, db: str, http_port: int, data_dir: str | Path, *extra: str, venue: Path = VENUE) -> list[str]:
    """The `lavos server` command line the process tests start: the shipped venue (or `venue`), the
    test broker's hub login inline in the URL (as bench/load.py passes it; the log must never show
    it whole)."""
    return [
        *LAVOS,
        "server",
        "--venue",
        str(venue),
        "--mqtt",
        f"mqtt://lavos-hub:hub-secret@127.0.0.1:{mqtt_port}",
        "--db",
        db,
        "--http",
        f"127.0.0.1:{http_port}",
        "--data-dir",
        str(data_dir),
        *extra,
    ]


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """This process's environment for a server or CLI: its own data directory, no LAVOS_DB from outside."""
    env = {**os.environ, "LAVOS_DATA_DIR": str(data_dir), **extra}
    env.pop("LAVOS_DB", None)
    return env


def wait_serving(
    proc: subprocess.Popen[Any], base: str, log_path: str | Path, timeout: float = START_TIMEOUT_S, *, mqtt: bool = False
) -> None:
    """Until `lavos server` at `base` answers /api/health (with `mqtt`: and is connected to the
    broker); fails with its log if it exits first or takes longer than `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise ServerDied(f"lavos server exited ({proc.returncode}) while starting:\n{_tail(log_path)}")
        try:
            r = httpc.get(f"{base}/api/health", timeout=2)
            if not mqtt or (r.status_code == 200 and r.json().get("mqtt") is True):
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"lavos server at {base} not {'connected and ' if mqtt else ''}serving after {timeout:g} s:\n{_tail(log_path)}"
            )
        time.sleep(0.1)


def stop_server(proc: subprocess.Popen[Any], *, group: bool = False, timeout: float = 20.0) -> None:
    """SIGTERM (to its process group with `group`), then SIGKILL if it has not ended within `timeout`."""
    send = (lambda sig: os.killpg(proc.pid, sig)) if group else proc.send_signal
    if proc.poll() is None:
        send(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        proc.wait()


def _tail(log_path: str | Path, lines: int = 60) -> str:
    path = Path(log_path)
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class Serving:
    """A running throwaway server (see `serving`)."""

    proc: subprocess.Popen[bytes]
    base: str
    port: int
    log: Path
    tmp: Path  # its data directory and database live under it
    db: str
    env: dict[str, str]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`lavos ARGS` against this server's environment; must succeed."""
        done = subprocess.run([*LAVOS, *args], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done


@contextlib.contextmanager
def serving(
    mosquitto_port: int,
    tmp: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    wait_s: float = START_TIMEOUT_S,
    own_group: bool = False,
    preexec_fn: Callable[[], None] | None = None,
) -> Iterator[Serving]:
    """`lavos server` on a fresh SQLite file in `tmp`, logging to tmp/server.log, until the block ends.

    `extra` are more server options; `env` more environment; `own_group` starts it in a process
    group of its own and stops the whole group."""
    env = server_env(tmp / "data", **(env or {}))
    port = free_port()
    db = f"sqlite:///{tmp / 'lavos.db'}"
    log = tmp / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            server_argv(mosquitto_port, db, port, tmp / "data", *extra),
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=own_group,
            preexec_fn=preexec_fn,
        )
    try:
        wait_serving(proc, f"http://127.0.0.1:{port}", log, wait_s)
        yield Serving(proc, f"http://127.0.0.1:{port}", port, log, tmp, db, env)
    finally:
        stop_server(proc, group=own_group)


class Served(Protocol):
    """A served hub as the tests use it: `lavos server` as a process (LavosServer) or in this
    process on a real socket (tests/support/web.py served_lavos)."""

    @property
    def base_url(self) -> str: ...
    @property
    def db_url(self) -> str: ...
    @property
    def workdir(self) -> Path | None: ...

    users: dict[str, tuple[str, str]]

    def api(self, method: str, path: str, user: str, *, status: int | None = 200, **kw: Any) -> Any: ...


@dataclass
class LavosServer:
    """A server with accounts made by `lavos user add` (`create_users`), the hub's MQTT password in a
    file; `stop()` and `start()` again keep its port and database, as a restart at the club does."""

    workdir: Path
    mqtt_port: int
    users: dict[str, tuple[str, str]]  # username -> (role, password)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    db: str | None = None  # a database URL (PostgreSQL); default: SQLite in workdir
    extra_args: tuple[str, ...] = ()  # more `lavos server` options (e.g. --influx)

    @property
    def db_url(self) -> str:
        return self.db or f"sqlite:///{self.workdir / 'lavos.db'}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / "server.log"

    def _lavos(self, *args: str) -> None:
        done = subprocess.run([*LAVOS, *args], cwd=REPO, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"lavos {' '.join(args)} failed: {done.stderr}")

    def create_users(self) -> None:
        # Through the CLI a manager uses at a club, so the server reads accounts it did not make itself.
        # Two processes and a real argon2 hash per account: the few tests about `lavos user add`
        # or the real hash costs use it; the others take seed_users().
        for name, (role, password) in self.users.items():
            pw = self.workdir / f"{name}.password"
            pw.write_text(password + "\n", encoding="utf-8")
            self._lavos("user", "add", name, "--role", role, "--password-file", str(pw), "--db", self.db_url, "--actor", "tests")

    def seed_users(self) -> LavosServer:
        """The accounts, hashed cheaply (tests/support/sqlite_template.py), instead of `lavos user
        add` run once per account: on SQLite a fresh migrated file holding them, copied into
        workdir; on PostgreSQL (`db`, migrated) written into it. The server still reads accounts
        it did not make itself."""
        if self.db is None:
            sqlite_with_users(self.workdir / "lavos.db", self.users)
        else:
            write_users(self.db, self.users)
        return self

    def start(self) -> LavosServer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        hub_pw = self.workdir / "hub.password"
        hub_pw.write_text("hub-secret\n")
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    *LAVOS,
                    "server",
                    "--venue",
                    str(VENUE),
                    "--db",
                    self.db_url,
                    "--mqtt",
                    f"mqtt://lavos-hub@127.0.0.1:{self.mqtt_port}",
                    "--mqtt-password-file",
                    str(hub_pw),
                    "--http",
                    f"127.0.0.1:{self.port}",
                    "--data-dir",
                    str(self.workdir / "data"),
                    *self.extra_args,
                ],
                cwd=REPO,
                env=server_env(self.workdir / "data"),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_serving(self.proc, self.base_url, self.log_path, START_TIMEOUT_S, mqtt=True)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_server(self.proc, timeout=30)
        self.proc = None

    def log_tail(self, lines: int = 60) -> str:
        return _tail(self.log_path, lines)

    def api(self, method: str, path: str, user: str, *, status: int | None = 200, **kw: Any) -> Any:
        """Call the JSON API with HTTP Basic as `user`; checks the status, returns the JSON (or the response)."""
        return call_api(self.base_url, self.users, method, path, user, status=status, **kw)


def call_api(
    base_url: str, users: dict[str, tuple[str, str]], method: str, path: str, user: str, *, status: int | None = 200, **kw: Any
) -> Any:
    """The JSON API at `base_url` with HTTP Basic as `user` (users: name -> (role, password)); checks
    the status, returns the JSON (or the response)."""
    r = httpc.request(method, base_url + path, auth=(user, users[user][1]), timeout=30, **kw)
    if status is not None:
        assert r.status_code == status, f"{method} {path} as {user} → {r.status_code} {r.text}"
    return r.json() if r.headers.get("content-type", "").startswith("application/json") else r
