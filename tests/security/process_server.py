"""A real `lavos server` process for the security tests: started, waited for, users made, stopped."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sim.mosquitto import free_port
from tests.dashboard.test_server_cli import LAVOS
from tests.support.hub import REPO
from tests.support.web import server_argv, wait_serving

MANAGER, MANAGER_PASSWORD = "boss", "Manažér-tajné-heslo-7"


@dataclass
class Served:
    proc: subprocess.Popen
    base: str
    port: int
    log: Path
    tmp: Path  # the server's TMPDIR, data directory and database live under it
    db: str
    env: dict[str, str]
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
            try:
                out.append(os.readlink(fd))
            except OSError:
                pass  # closed meanwhile
        return out

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*LAVOS, *args, "--db", self.db], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done

    def add_user(self, name: str, password: str, role: str) -> None:
        pw = self.tmp / f"{name}.pw"
        pw.write_text(password + "\n")
        self.cli("user", "add", name, "--role", role, "--password-file", str(pw))


@contextmanager
def lavos_server(mosquitto, tmp: Path, *, log_level: str = "INFO", preexec_fn: Callable[[], None] | None = None,
                 wait_s: float = 30) -> Iterator[Served]:  # type: ignore[no-untyped-def]
    """`lavos server` on SQLite with its own TMPDIR (so a spooled upload would show up there)."""
    (tmp / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "LAVOS_DATA_DIR": str(tmp / "data"), "TMPDIR": str(tmp / "tmp")}
    env.pop("LAVOS_DB", None)
    port = free_port()
    db = f"sqlite:///{tmp / 'lavos.db'}"
    log = tmp / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(server_argv(mosquitto.port, db, port, tmp / "data", "--log-level", log_level),
                                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
    served = Served(proc, f"http://127.0.0.1:{port}", port, log, tmp, db, env)
    try:
        wait_serving(proc, served.base, log, wait_s)
        yield served
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
