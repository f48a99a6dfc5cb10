"""A real `lavos server` process for the security tests: started, waited for, users made, stopped."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.server import START_TIMEOUT_S, Serving, serving

MANAGER, MANAGER_PASSWORD = "boss", "Manažér-tajné-heslo-7"


@dataclass
class Served(Serving):
    """The server (tmp holds its TMPDIR, data directory and database), seen from /proc too."""

    token: str = ""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def open_fds(self) -> list[str]:
        fd_dir = Path(f"/proc/{self.pid}/fd")
        out = []
        for fd in fd_dir.iterdir():
            with contextlib.suppress(OSError):  # closed meanwhile
                out.append(os.readlink(fd))
        return out

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return super().cli(*args, "--db", self.db)

    def add_user(self, name: str, password: str, role: str) -> None:
        pw = self.tmp / f"{name}.pw"
        pw.write_text(password + "\n")
        self.cli("user", "add", name, "--role", role, "--password-file", str(pw))


@contextmanager
def lavos_server(
    mosquitto: Any,
    tmp: Path,
    *,
    log_level: str = "INFO",
    preexec_fn: Callable[[], None] | None = None,
    wait_s: float = START_TIMEOUT_S,
    env: dict[str, str] | None = None,
) -> Iterator[Served]:
    """`lavos server` on SQLite with its own TMPDIR (so a spooled upload would show up there); `env`: more environment."""
    (tmp / "tmp").mkdir(exist_ok=True)
    with serving(
        mosquitto.port,
        tmp,
        "--log-level",
        log_level,
        env={"TMPDIR": str(tmp / "tmp"), **(env or {})},
        preexec_fn=preexec_fn,
        wait_s=wait_s,
    ) as s:
        yield Served(s.proc, s.base, s.port, s.log, s.tmp, s.db, s.env)
