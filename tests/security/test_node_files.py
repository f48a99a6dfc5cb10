"""Issue 9 item 12: secrets and data files are private (0600) from the moment they exist.

Before: add-node wrote the node's password 0644 and chmod'ed it afterwards, `lavos server` made
lavos.db/-wal/-shm 0644, and the README's steps left the hub password and Mosquitto's password
file world-readable. Checked through real processes: the `lavos` CLI under strace (every file it
or mosquitto_passwd creates, and with which mode), a real `lavos server`, and the README's own
commands run in a scratch root with the usual umask 022.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from sim.mosquitto import free_port, wait_port
from tests.support.hub import REPO, VENUE
from tests.support.matching import found
from tests.support.server import LavosServer

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
def test_add_node_creates_its_files_private_from_the_first_byte(tmp_path):
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
    assert {p.name: mode(p) for p in kit.iterdir()} == {"pool-03.password": 0o600, "pool-03.toml": 0o600}
    assert mode(passwd) == 0o600 and mode(kit) == 0o700


def test_lavos_server_makes_its_database_wal_and_shm_private(mosquitto, tmp_path):
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


def readme_deploy_script() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Deploying at a club") :]
    return found(r"```sh\n(.*?)```", section, re.S).group(1)


SKIPPED = re.compile(r"^(apt-get|adduser|git clone|systemctl|install .*systemd)|user add ")
SHELL_PRELUDE = r"""
set -euo pipefail
# Users and services are not made here: ownership is for the real box, modes are what is checked.
chown() { :; }
runuser() { while [ "$1" != "--" ]; do shift; done; shift; "$@"; }
install() {
    local args=()
    while [ $# -gt 0 ]; do case "$1" in -o|-g) shift 2 ;; *) args+=("$1"); shift ;; esac; done
    command install "${args[@]}"
}
"""


def test_the_readmes_deploy_steps_make_private_files_and_a_broker_that_starts(tmp_path):
    root = tmp_path / "root"
    for d in ("etc/mosquitto/conf.d", "var/lib/mosquitto", "var/log/mosquitto", "run/mosquitto", "bin"):
        (root / d).mkdir(parents=True)
    lavos = root / "bin" / "lavos"
    lavos.write_text(f'#!/bin/sh\nexec {sys.executable} -m lavos_cli "$@"\n')
    lavos.chmod(0o755)
    lines = [ln for ln in readme_deploy_script().splitlines() if ln.strip() and not SKIPPED.search(ln)]
    script = "\n".join(lines)
    script = script.replace("sqlite:////var/lib/", f"sqlite:///{root}/var/lib/")
    for prefix in ("/etc/", "/var/lib/", "/root/"):
        script = script.replace(f" {prefix}", f" {root}{prefix}").replace(f">{prefix}", f">{root}{prefix}")
    script = script.replace("pool-01 pool-02 ...", "pool-01 pool-02").replace(".venv/bin/lavos", str(lavos))
    assert "umask 077" in script and "/etc/lavos" in script.replace(str(root), "")
    # every path the steps name is inside the scratch root, and no command falls back on a default path
    assert not re.search(r"(?<![\w/.-])/(etc|var|root|opt)/", script), script
    assert "--passwd-file" in script
    done = subprocess.run(
        ["bash", "-c", SHELL_PRELUDE + script], cwd=REPO, capture_output=True, text=True, timeout=300, preexec_fn=usual_umask
    )
    assert done.returncode == 0, f"{script}\n---\n{done.stderr}"

    secrets = [
        root / "etc/lavos/hub-password",
        root / "etc/mosquitto/lavos.passwd",
        root / "var/lib/lavos/lavos.db",
        *sorted((root / "root/nodes").iterdir()),
    ]
    assert {p.name for p in secrets} >= {"pool-01.password", "pool-01.toml", "pool-02.password"}
    assert {str(p.relative_to(root)): oct(mode(p)) for p in secrets} == {str(p.relative_to(root)): "0o600" for p in secrets}
    world_readable = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and mode(p) & 0o004 and p != lavos)
    assert world_readable == ["etc/lavos/venue.toml", "etc/mosquitto/conf.d/lavos.conf"], world_readable

    # Mosquitto from Debian's stock main config with ours in conf.d/: it starts, and the hub and a node log in
    port = free_port()
    conf_d = root / "etc/mosquitto/conf.d/lavos.conf"
    conf_d.write_text(conf_d.read_text().replace("/etc/", f"{root}/etc/").replace("listener 1883\n", f"listener {port} 127.0.0.1\n"))
    main = root / "etc/mosquitto/mosquitto.conf"
    main.write_text(("user root\n" if os.geteuid() == 0 else "") + DEBIAN_MOSQUITTO_CONF.replace(" /", f" {root}/"))
    proc = subprocess.Popen(["mosquitto", "-c", str(main)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        try:
            wait_port(port, 10)
        except TimeoutError:
            proc.kill()
            assert proc.stderr is not None
            pytest.fail(f"mosquitto refused the README's setup: {proc.stderr.read().decode(errors='replace')}")
        hub_password = (root / "etc/lavos/hub-password").read_text().strip()
        assert connack(port, "lavos-hub", hub_password) == "Success"
        assert connack(port, "pool-01", (root / "root/nodes/pool-01.password").read_text().strip()) == "Success"
        assert connack(port, "pool-01", hub_password) == "Not authorized"
    finally:
        proc.terminate()
        proc.wait(10)


def connack(port: int, user: str, password: str) -> str:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user)
    c.username_pw_set(user, password)
    got: list[str] = []
    done = threading.Event()

    def on_connect(cl: mqtt.Client, u: object, f: object, rc: ReasonCode, p: object = None) -> None:
        got.append(str(rc))
        done.set()

    c.on_connect = on_connect
    c.connect("127.0.0.1", port, keepalive=5)
    c.loop_start()
    done.wait(5)
    c.disconnect()
    c.loop_stop()
    return got[0] if got else "no answer"
