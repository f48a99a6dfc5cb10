"""Run a private Mosquitto: generated password file, the shipped ACL and our queue limits.

Used by the tests (one broker per test module), the demo and the benchmarks. Production runs
the system Mosquitto with deploy/mosquitto/lavos.conf instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

DEPLOY_ACL = Path(__file__).resolve().parent / "mosquitto_acl"
HUB_USER = "lavos-hub"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.005)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


@dataclass
class Mosquitto:
    """One broker process; `stop()`/`start()` keep the port, so clients can reconnect to it."""

    workdir: Path
    users: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None
    extra_conf: str = ""

    def __post_init__(self) -> None:
        if shutil.which("mosquitto") is None:
            raise RuntimeError("mosquitto is not installed: `apt-get install mosquitto mosquitto-clients` (./run does it for you)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.users = {HUB_USER: "hub-secret", **self.users}
        passwd = self.workdir / "passwd"
        passwd.write_text("")
        for user, pw in self.users.items():
            subprocess.run(["mosquitto_passwd", "-b", str(passwd), user, pw], check=True, capture_output=True)
        shutil.copy(DEPLOY_ACL, self.workdir / "acl")
        self.log = self.workdir / "mosquitto.log"
        run_as = "user root\n" if os.geteuid() == 0 else ""
        (self.workdir / "mosquitto.conf").write_text(
            f"{run_as}per_listener_settings false\nallow_anonymous false\n"
            f"password_file {passwd}\nacl_file {self.workdir / 'acl'}\n"
            f"listener {self.port} 127.0.0.1\n"
            "max_queued_messages 0\nmax_queued_bytes 268435456\nmax_inflight_messages 100\n"
            f"persistence true\npersistence_location {self.workdir}/\n"
            f"log_dest file {self.log}\nlog_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
            f"{self.extra_conf}"
        )

    def add_user(self, user: str, password: str) -> None:
        self.users[user] = password
        subprocess.run(["mosquitto_passwd", "-b", str(self.workdir / "passwd"), user, password], check=True, capture_output=True)
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(1)  # SIGHUP reloads the password file

    def start(self) -> "Mosquitto":
        self.proc = subprocess.Popen(
            ["mosquitto", "-c", str(self.workdir / "mosquitto.conf")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            wait_port(self.port)
        except TimeoutError:
            self.proc.kill()
            err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
            raise RuntimeError(f"mosquitto did not start: {err}") from None
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""
