"""`lavos server` as the browser sees it: a real process on a real Mosquitto, users made by `lavos user add`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from sim.mosquitto import free_port
from tests.support.hub import REPO, VENUE

LAVOS = [sys.executable, "-c", "from lavos_cli import app; app()"]
# Generous: on a loaded 2-core machine the first start migrates the database and imports FastAPI.
START_TIMEOUT_S = 60.0


class ServerDied(RuntimeError):
    pass


@dataclass
class LavosServer:
    workdir: Path
    mqtt_port: int
    users: dict[str, tuple[str, str]]  # username -> (role, password)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None
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
        for name, (role, password) in self.users.items():
            pw = self.workdir / f"{name}.password"
            pw.write_text(password + "\n", encoding="utf-8")
            self._lavos("user", "add", name, "--role", role, "--password-file", str(pw), "--db", self.db_url, "--actor", "tests")

    def start(self) -> "LavosServer":
        self.workdir.mkdir(parents=True, exist_ok=True)
        hub_pw = self.workdir / "hub.password"
        hub_pw.write_text("hub-secret\n")
        env = {**os.environ, "LAVOS_DATA_DIR": str(self.workdir / "data")}
        env.pop("LAVOS_DB", None)
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [*LAVOS, "server", "--venue", str(VENUE), "--db", self.db_url,
             "--mqtt", f"mqtt://lavos-hub@127.0.0.1:{self.mqtt_port}", "--mqtt-password-file", str(hub_pw),
             "--http", f"127.0.0.1:{self.port}", "--data-dir", str(self.workdir / "data"), *self.extra_args],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        log.close()
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc is None or self.proc.poll() is not None:
                raise ServerDied(f"lavos server exited while starting:\n{self.log_tail()}")
            try:
                r = httpx.get(self.base_url + "/api/health", timeout=2)
                if r.status_code == 200 and r.json().get("mqtt") is True:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"lavos server not healthy after {START_TIMEOUT_S} s:\n{self.log_tail()}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def api(self, method: str, path: str, user: str, *, status: int | None = 200, **kw: Any) -> Any:
        """Call the JSON API with HTTP Basic as `user`; checks the status, returns the JSON (or the response)."""
        r = httpx.request(method, self.base_url + path, auth=(user, self.users[user][1]), timeout=30, **kw)
        if status is not None:
            assert r.status_code == status, f"{method} {path} as {user} → {r.status_code} {r.text}"
        return r.json() if r.headers.get("content-type", "").startswith("application/json") else r
