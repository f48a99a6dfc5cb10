"""Issue 9 item 12: secrets and data files are private (0600) from the moment they exist.

Before: add-node wrote the node's password 0644 and chmod'ed it afterwards, `lavos server` made
lavos.db/-wal/-shm 0644, and the README's steps left the hub password and Mosquitto's password
file world-readable. Checked through real processes: the `lavos` CLI under strace (every file it
or mosquitto_passwd creates, and with which mode), a real `lavos server`; the README's one install
command is run in scratch roots by tests/deploy/test_hub_install.py.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.hub import REPO, VENUE
from tests.support.server import LavosServer

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto


# Debian 12's stock /etc/mosquitto/mosquitto.conf, which includes ours from conf.d/.
DEBIAN_MOSQUITTO_CONF = """\
pid_file /run/mosquitto/mosquitto.pid
persistence true
persistence_location /var/lib/mosquitto/
log_dest file /var/log/mosquitto/mosquitto.log
include_dir /etc/mosquitto/conf.d
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def usual_umask() -> None:
    os.umask(0o022)


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_add_node_creates_its_files_private_from_the_first_byte(tmp_path: Path) -> None:
    passwd, kit, trace = tmp_path / "mosquitto" / "lavos.passwd", tmp_path / "kit", tmp_path / "trace"
    for _ in range(2):  # a first kit, then a renewal over the existing files
        done = subprocess.run(
            [
                "strace",
                "-f",
                "-qq",
                "-o",
                str(trace),
                "-e",
                "trace=open,openat,creat,chmod,fchmod,fchmodat,umask",
                sys.executable,
                "-m",
                "lavos_cli",
                "broker",
                "add-node",
                "pool-03",
                "--venue",
                str(VENUE),
                "--passwd-file",
                str(passwd),
                "--out-dir",
                str(kit),
                "--mqtt-host",
                "lavos.local",
                "--no-tls",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=usual_umask,
        )
        assert done.returncode == 0, done.stderr
        calls = trace.read_text()
        umask: dict[str, int] = {}  # per process: the mode a file really gets is the asked one minus the umask
        created = []
        for line in calls.splitlines():
            pid = line.split(None, 1)[0]
            if m := re.match(r"\d+ +umask\((0[0-7]*)\)", line):
                umask[pid] = int(m.group(1), 8)
            elif str(tmp_path) in line and ("O_CREAT" in line or " creat(" in line):
                asked = re.search(r", (0[0-7]+)\) = ", line)
                assert asked, line
                created.append((line, int(asked.group(1), 8) & ~umask.get(pid, 0o022)))
            assert not (str(tmp_path) in line and "chmod" in line), f"made first and restricted afterwards: {line}"
        assert created, calls[-2000:]
        assert [ln for ln, m in created if m & 0o077] == []
    # The fleet's Ansible inventory (host names, no secret) is kept beside them, as privately.
    assert {p.name: mode(p) for p in kit.iterdir()} == {"pool-03.password": 0o600, "pool-03.toml": 0o600, "inventory.json": 0o600}
    assert mode(passwd) == 0o600 and mode(kit) == 0o700


def test_lavos_server_makes_its_database_wal_and_shm_private(mosquitto: Mosquitto, tmp_path: Path) -> None:
    old = os.umask(0o022)  # the server inherits it, as from a login shell
    try:
        server = LavosServer(tmp_path / "server", mosquitto.port, users={}).start()
    finally:
        os.umask(old)
    try:
        db = Path(server.db_url.removeprefix("sqlite:///"))
        files = {p.name: mode(p) for p in db.parent.glob("lavos.db*")}
        assert set(files) == {"lavos.db", "lavos.db-wal", "lavos.db-shm"}, files
        assert all(m == 0o600 for m in files.values()), {k: oct(v) for k, v in files.items()}
    finally:
        server.stop()
