"""A shipped systemd unit's sandbox, rebuilt with bubblewrap from the unit file itself.

systemd cannot run units here (no init, no Pi), but what a unit's settings do to its process can be
had without it: `Unit.sandbox()` reads ExecStart=, User=, Environment=, WorkingDirectory=,
ProtectSystem=, PrivateTmp=, ProtectHome=, StateDirectory=, RuntimeDirectory= and ReadWritePaths=
and runs the command under `bwrap` the way systemd would: the whole root read-only but for the
unit's writable paths (each backed by a scratch directory the test can look into), a /tmp of its
own, the unit's user (a user namespace maps it, and a copy of /etc/passwd names it), only the
unit's environment, its working directory (`/` when it names none, as systemd's default), and a
/dev with no gpiochip, as on any machine but a Pi. What the unit needs installed (/opt/lavos/.venv,
/etc/lavos) is bound in from the test's own venv and files. A setting it does not know is an error,
so a new hardening line in a unit cannot be silently left out of the test.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# Settings that change nothing the sandbox must reproduce (restart policy, ordering, notify, limits).
INERT = {
    "Type",
    "NotifyAccess",
    "WatchdogSec",
    "Restart",
    "RestartSec",
    "RestartPreventExitStatus",
    "TimeoutStopSec",
    "NoNewPrivileges",  # bwrap always sets it
    "UMask",
    "RuntimeDirectoryMode",
    "StateDirectoryMode",
    "LimitNOFILE",
    "SupplementaryGroups",  # the groups own /dev/gpiochip* on a Pi; here there is none
}
# What the sandbox mounts afresh (writable while it is set up): a path in them needs no shadow.
OWN_MOUNTS = ("/dev", "/run", "/tmp", "/var/tmp", "/home", "/root")


def _free_system_uid() -> int:
    """The unit's user's uid inside the sandbox: a system user's, one this machine does not use."""
    taken = {int(line.split(":")[2]) for line in Path("/etc/passwd").read_text().splitlines() if line.count(":") >= 3}
    taken |= {int(line.split(":")[2]) for line in Path("/etc/group").read_text().splitlines() if line.count(":") >= 3}
    return next(uid for uid in range(990, 100, -1) if uid not in taken)


UID = _free_system_uid()


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> every value given (systemd allows a key more than once), continuations joined."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    pending = ""
    for raw in path.read_text().splitlines():
        line = pending + raw.strip()
        pending = ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


@dataclass
class Unit:
    path: Path
    service: dict[str, list[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.service = parse_unit(self.path)["Service"]

    def one(self, key: str, default: str | None = None) -> str | None:
        values = self.service.get(key)
        return values[-1] if values else default

    def many(self, key: str) -> list[str]:
        return [word for value in self.service.get(key, []) for word in value.split()]

    @property
    def user(self) -> str:
        return self.one("User") or "root"

    @property
    def exec_start(self) -> list[str]:
        return shlex.split(self.one("ExecStart") or "")

    @property
    def environment(self) -> dict[str, str]:
        env = {}
        for value in self.service.get("Environment", []):
            for assignment in shlex.split(value):
                name, _, val = assignment.partition("=")
                env[name] = val
        return env

    def writable(self) -> list[str]:
        """The paths systemd leaves writable under ProtectSystem=strict, besides /tmp."""
        paths = [f"/var/lib/{d}" for d in self.many("StateDirectory")]
        paths += [f"/run/{d}" for d in self.many("RuntimeDirectory")]
        paths += [p.lstrip("-") for p in self.many("ReadWritePaths")]
        return list(dict.fromkeys(paths))

    def sandbox(
        self,
        scratch: Path,
        *,
        binds: dict[str, Path],
        env: dict[str, str | None] | None = None,
        argv: list[str] | None = None,
        chdir: str | None = None,
    ) -> list[str]:
        """The bwrap command line running `argv` (default: ExecStart) as this unit would.

        `scratch`/<path> backs each writable path (made here, owned by the unit's user as systemd
        makes them); `binds` maps a path inside to a file or directory outside (read-only);
        `env` adds to or overrides the unit's Environment= (a value None is left out)."""
        known = INERT | {
            "ExecStart",
            "User",
            "Group",
            "Environment",
            "WorkingDirectory",
            "ProtectSystem",
            "PrivateTmp",
            "ProtectHome",
            "StateDirectory",
            "RuntimeDirectory",
            "ReadWritePaths",
        }
        unknown = set(self.service) - known
        assert not unknown, f"{self.path.name}: the sandbox does not know what {sorted(unknown)} do; teach tests/support/unit_sandbox.py"
        assert self.one("ProtectSystem") == "strict", "the sandbox reproduces ProtectSystem=strict only"
        cmd = ["bwrap", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"]
        if self.one("PrivateTmp") == "yes":
            cmd += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
        if self.one("ProtectHome") == "yes":
            cmd += ["--tmpfs", "/home", "--tmpfs", "/root"]
        for path in self.writable():
            outside = scratch / path.lstrip("/")
            outside.mkdir(parents=True, exist_ok=True)
            cmd += _shadow_for(path, cmd)
            cmd += ["--bind", str(outside), path]
        passwd = scratch / "passwd"
        passwd.write_text(Path("/etc/passwd").read_text() + f"{self.user}:x:{UID}:{UID}::/var/lib/{self.user}:/usr/sbin/nologin\n")
        group = scratch / "group"
        group.write_text(Path("/etc/group").read_text() + f"{self.user}:x:{UID}:\n")
        for inside, outside in {**binds, "/etc/passwd": passwd, "/etc/group": group}.items():
            cmd += _shadow_for(inside, cmd)
            cmd += ["--ro-bind", str(outside), inside]
        cmd += [arg for d in _shadowed(cmd) for arg in ("--remount-ro", d)]
        cmd += ["--unshare-user", "--uid", str(UID), "--gid", str(UID), "--clearenv"]
        environment: dict[str, str | None] = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": f"/var/lib/{self.user}",
            "USER": self.user,
            "LOGNAME": self.user,
            **self.environment,
            **(env or {}),
        }
        for name, value in environment.items():
            if value is not None:
                cmd += ["--setenv", name, value]
        cmd += ["--chdir", chdir or self.one("WorkingDirectory", "/") or "/"]
        return [*cmd, "--", *(argv or self.exec_start)]


def _shadow_for(inside: str, cmd: list[str]) -> list[str]:
    """A bind to a path this machine lacks (/etc/lavos, /opt/lavos) needs a mount point, and the
    read-only root has no room for one: its nearest existing ancestor becomes a tmpfs holding
    (bound again, read-only) everything the machine has there, and the new path."""
    if Path(inside).exists() or any(Path(inside).is_relative_to(d) for d in OWN_MOUNTS):
        return []
    parent = Path(inside).parent
    while not parent.exists():
        parent = parent.parent
    if str(parent) in _shadowed(cmd) or parent == Path("/"):
        return []
    args = ["--tmpfs", str(parent)]
    for entry in os.scandir(parent):
        args += ["--symlink", os.readlink(entry.path), entry.path] if entry.is_symlink() else ["--ro-bind", entry.path, entry.path]
    return args


def _shadowed(cmd: list[str]) -> list[str]:
    return [cmd[i + 1] for i, arg in enumerate(cmd[:-1]) if arg == "--tmpfs" and cmd[i + 1] not in OWN_MOUNTS]


def run_sandboxed(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ})
