"""Run a private Mosquitto from the shipped config and ACL, with a generated password file.

Used by the tests (one broker per test module), the demo (sim/broker.py) and the benchmarks; it is
no part of what a club runs, so it lives here in sim/ and not in the hub's package. It reads the very
files a club installs (broker/mosquitto_conf = deploy/mosquitto/lavos.conf, broker/mosquitto_acl =
deploy/mosquitto/acl) and changes only what must differ per run: the listener's port and address,
the password/ACL file paths, the persistence and log locations, and `user root` when run as root
(Mosquitto would drop to its own user and could not read the run's files). So what the tests
exercise (client id = login, packet and queue limits) is what a club runs.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, ClassVar, Self

# Package data of the hub (pyproject's package-data), wherever the package is installed.
SHIPPED_CONF = Path(str(files("broker") / "mosquitto_conf"))
SHIPPED_ACL = Path(str(files("broker") / "mosquitto_acl"))
HUB_USER = "lavos-hub"
HUB_PASSWORD = "hub-secret"
MONITOR_USER = "lavos-monitor"
MONITOR_PASSWORD = "monitor-secret"


# Below Linux's ephemeral range (32768-60999): a port the kernel hands out for a bind to 0 can
# also become the local end of any outgoing connection (a node reconnecting, a database client),
# and a broker restarted on it then fails with "address in use" (seen once in CI, after a
# 60-second outage with 13 nodes retrying).
_TEST_PORTS = range(20000, 32000)
# LAVOS_TEST_PORTS="start-stop" narrows it: parallel test workers (tests/conftest.py) each take a
# slice of their own, so two workers can never pick the same port between its check and its bind.
PORTS_ENV = "LAVOS_TEST_PORTS"


def test_ports() -> range:
    """The ports free_port picks from: _TEST_PORTS, or the slice LAVOS_TEST_PORTS names."""
    spec = os.environ.get(PORTS_ENV, "")
    if not spec:
        return _TEST_PORTS
    start, _, stop = spec.partition("-")
    return range(int(start), int(stop))


def free_port() -> int:
    ports = test_ports()
    for _ in range(200):
        port = random.choice(ports)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1} on 127.0.0.1")


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.005)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


@dataclass(frozen=True)
class TlsFiles:
    """make-certs.sh's output directory and the port for the shipped TLS listener."""

    certs: Path
    port: int = field(default_factory=free_port)


def acl_users(acl_text: str) -> list[str]:
    """The logins an ACL file names in `user` lines, in order."""
    return [
        line.split(None, 1)[1].strip() for line in acl_text.splitlines() if line.split(None, 1)[:1] == ["user"] and len(line.split()) > 1
    ]


def acl_block(acl_text: str, user: str) -> str:
    """The `user` line and the rules under it, for giving another login the same rights."""
    lines, inside = [], False
    for line in acl_text.splitlines():
        words = line.split()
        if words[:1] == ["user"]:
            inside = words[1:] == [user]
        if inside and words and not line.lstrip().startswith("#"):
            lines.append(line)
    if not lines:
        raise ValueError(f"the ACL has no `user {user}` block")
    return "\n".join(lines) + "\n"


def _paragraphs(text: str) -> list[list[str]]:
    """The config's lines in blank-line separated paragraphs (a blank line is a paragraph of its own)."""
    out: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip():
            out += [[line], []]
        else:
            out[-1].append(line)
    return [p for p in out if p]


def _setting(line: str) -> tuple[str, str, bool] | None:
    """(key, value, commented) of a setting line, live or commented out ("#cafile ..."); None for prose."""
    if line.startswith("# ") or line.strip() in ("", "#"):
        return None
    commented = line.startswith("#")
    key, _, value = line.lstrip("#").strip().partition(" ")
    return key, value.strip(), commented


def _is_tls_block(paragraph: list[str]) -> bool:
    keys = {s[0] for line in paragraph if (s := _setting(line))}
    return {"listener", "certfile"} <= keys


def render_conf(
    shipped: str, *, port: int, passwd: Path, acl: Path, data_dir: Path, log: Path, tls: TlsFiles | None = None, run_as_root: bool = False
) -> str:
    """The shipped config with this run's port and paths; every line it does not name is kept as is.

    The plain listener moves to 127.0.0.1:`port`. The TLS listener's block (live in the hub box's
    lavos.conf, commented out in the centre's central.conf) is, with `tls`, switched on with its
    port and make-certs.sh's files; without, it is commented out (a run without certificates)."""
    replaced: set[str] = set()
    out = ["user root"] if run_as_root else []
    for paragraph in _paragraphs(shipped):
        if _is_tls_block(paragraph):
            out += _tls_block(paragraph, tls, replaced)
            continue
        for line in paragraph:
            s = _setting(line)
            key = s[0] if s and not s[2] else ""
            value = {"listener": f"{port} 127.0.0.1", "password_file": passwd, "acl_file": acl, "persistence_location": f"{data_dir}/"}.get(
                key
            )
            if value is None:
                out.append(line)
                continue
            if key in replaced:
                raise ValueError(
                    f"the shipped Mosquitto config has more than one {key} line outside its TLS block; sim/mosquitto.py expects one"
                )
            replaced.add(key)
            out.append(f"{key} {value}")
    if "persistence_location" not in replaced:  # Debian's main config sets it for a club (see the shipped file)
        out.append(f"persistence_location {data_dir}/")
    missing = {"listener", "password_file", "acl_file"} - replaced
    if tls is not None:
        missing |= {f"tls {k}" for k in ("listener", "cafile", "certfile", "keyfile")} - replaced
    if missing:
        raise ValueError(f"the shipped Mosquitto config lacks {', '.join(sorted(missing))}: sim/mosquitto.py cannot run it")
    out += [f"log_dest file {log}", *(f"log_type {t}" for t in ("error", "warning", "notice", "information"))]
    return "\n".join(out) + "\n"


def _tls_block(paragraph: list[str], tls: TlsFiles | None, replaced: set[str]) -> list[str]:
    out = []
    for line in paragraph:
        s = _setting(line)
        if s is None:
            out.append(line)
            continue
        key, value, _ = s
        if tls is None:
            out.append(f"#{key} {value}".rstrip())
            continue
        value = str(
            {
                "listener": f"{tls.port} 127.0.0.1",
                "cafile": tls.certs / "ca.crt",
                "certfile": tls.certs / "server.crt",
                "keyfile": tls.certs / "server.key",
            }.get(key, value)
        )
        out.append(f"{key} {value}".rstrip())
        replaced.add(f"tls {key}")
    return out


@dataclass
class Mosquitto:
    """One broker process; `stop()`/`start()` keep the port, so clients can reconnect to it.

    Its users: `users` plus lavos-hub (password "hub-secret") and lavos-monitor
    ("monitor-secret"). One connection per login (the shipped config makes the client id the
    login), so a second hub process needs `hub_login()`."""

    workdir: Path
    users: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    extra_conf: str = ""
    tls: TlsFiles | None = None
    # Another shipped pair (the centre's broker of several halls: deploy/mosquitto/central.conf, central.acl).
    shipped_conf: Path = SHIPPED_CONF
    shipped_acl: Path = SHIPPED_ACL

    # Started brokers by port, so a test helper given only a port (tests/support/mqtt.py) can
    # ask for a login of its own.
    running: ClassVar[dict[int, Mosquitto]] = {}

    def __post_init__(self) -> None:
        self._free_probes: list[str] = []
        self._probes = 0
        if shutil.which("mosquitto") is None:
            raise RuntimeError("mosquitto is not installed: `apt-get install mosquitto mosquitto-clients` (./run does it for you)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.shipped_acl == SHIPPED_ACL:
            self.users = {HUB_USER: HUB_PASSWORD, MONITOR_USER: MONITOR_PASSWORD, **self.users}
        self.passwd = self.workdir / "passwd"
        self.passwd.write_text("")
        for user, pw in self.users.items():
            subprocess.run(["mosquitto_passwd", "-b", str(self.passwd), user, pw], check=True, capture_output=True)
        self.acl = self.workdir / "acl"
        shutil.copy(self.shipped_acl, self.acl)
        self.log = self.workdir / "mosquitto.log"
        conf = render_conf(
            self.shipped_conf.read_text(),
            port=self.port,
            passwd=self.passwd,
            acl=self.acl,
            data_dir=self.workdir,
            log=self.log,
            tls=self.tls,
            run_as_root=os.geteuid() == 0,
        )
        (self.workdir / "mosquitto.conf").write_text(conf + self.extra_conf)

    def add_user(self, user: str, password: str) -> None:
        self.users[user] = password
        subprocess.run(["mosquitto_passwd", "-b", str(self.passwd), user, password], check=True, capture_output=True)
        self._reload()

    def hub_login(self, user: str = HUB_USER) -> tuple[str, str]:
        """(user, password) of a login with the hub's rights, made if new.

        A login the shipped ACL names (lavos-hub-2, ...) only gets a password; any other name gets
        a copy of lavos-hub's ACL block in this run's ACL, as a club would add one. Each login is
        one client id, so one persistent session: tests give each independent hub its own."""
        return self.login_like(user, HUB_USER, HUB_PASSWORD)

    def login_like(self, user: str, like: str, password: str) -> tuple[str, str]:
        """(user, password) of a login with `like`'s rights (its `user` block in the ACL), made if new;
        on a running broker, once the reload has taken it."""
        if user in self.users:
            return user, self.users[user]
        acl_text = self.acl.read_text()
        if user not in acl_users(acl_text):
            block = acl_block(acl_text, like).replace(f"user {like}", f"user {user}", 1)
            self.acl.write_text(f"{acl_text.rstrip()}\n\n# added by this test run\n{block}")
        self.users[user] = password
        subprocess.run(["mosquitto_passwd", "-b", str(self.passwd), user, password], check=True, capture_output=True)
        if self._reload():
            self._wait_login(user, password)
        return user, password

    def probe_login(self) -> tuple[str, str]:
        """A login with the hub's rights that no open connection uses (lavos-probe-N),
        for a test's observer; give it back with `release_login` when its connection is closed."""
        if self._free_probes:
            user = self._free_probes.pop()
            return user, self.users[user]
        self._probes += 1
        return self.hub_login(f"lavos-probe-{self._probes}")

    def release_login(self, user: str) -> None:
        if user.startswith("lavos-probe-") and user not in self._free_probes:
            self._free_probes.append(user)

    def _reload(self) -> bool:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(1)  # SIGHUP re-reads the password and ACL files
            return True
        return False

    def _wait_login(self, user: str, password: str, timeout: float = 5.0) -> None:
        """Until the reload has happened: a new login's first connect must not be refused.

        Only for a login never used: connecting takes its client id (and its clean session
        would end a persistent one)."""
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        deadline = time.monotonic() + timeout
        while True:
            probe = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user, clean_session=True)
            probe.username_pw_set(user, password)
            result: list[Any] = []
            probe.on_connect = lambda c, u, f, rc, p=None: result.append(rc)  # noqa: B023 - called within this turn
            try:
                probe.connect("127.0.0.1", self.port, keepalive=5)
                end = time.monotonic() + 1.0
                while not result and time.monotonic() < end:
                    probe.loop(0.05)
            finally:
                probe.disconnect()
            if result and not result[0].is_failure:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"mosquitto did not accept the new login {user} after a reload: {result}")
            time.sleep(0.02)

    def start(self) -> Self:
        self.proc = subprocess.Popen(
            ["mosquitto", "-c", str(self.workdir / "mosquitto.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            wait_port(self.port)
            if self.tls is not None:
                wait_port(self.tls.port)
        except TimeoutError:
            self.proc.kill()
            err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
            raise RuntimeError(f"mosquitto did not start: {err}{self.log_text()[-2000:]}") from None
        Mosquitto.running[self.port] = self
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
        Mosquitto.running.pop(self.port, None)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""
