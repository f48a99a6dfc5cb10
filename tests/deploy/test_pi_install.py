"""deploy/pi/install.sh in a test root (--prefix): it installs, and a second run changes nothing."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from broker.domain.venue import load_venue
from devices.nodeconfig import CardReaderSettings, dump_node_config, node_config_for
from tests.support.hub import REPO, VENUE

INSTALL = REPO / "deploy" / "pi" / "install.sh"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True, timeout=120)


def tree(root: Path) -> dict[str, str]:
    """Every path under root with its kind, mode and content hash (or link target)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = f"link {os.readlink(p)}"
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = f"dir {stat.S_IMODE(st.st_mode):o}"
            else:
                out[rel] = f"file {stat.S_IMODE(st.st_mode):o} {hashlib.sha256(p.read_bytes()).hexdigest()}"
    return out


@pytest.fixture
def kit(tmp_path: Path) -> Any:
    """What the central box hands over for pool-01: node.toml, password, CA."""
    cfg = node_config_for(
        load_venue(VENUE),
        "pool-01",
        mqtt_host="lavos.local",
        mqtt_port=8883,
        password_file=Path("/etc/lavos/mqtt-password"),
        tls=True,
        ca_file=Path("/etc/lavos/ca.crt"),
    )
    (tmp_path / "pool-01.toml").write_text(dump_node_config(cfg))
    (tmp_path / "pool-01.password").write_text("s3cret\n")
    (tmp_path / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    return tmp_path


def test_install_twice_in_a_test_root_changes_nothing_the_second_time(kit: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    args = [
        "--prefix",
        str(root),
        "--config",
        str(kit / "pool-01.toml"),
        "--password-file",
        str(kit / "pool-01.password"),
        "--ca-file",
        str(kit / "ca.crt"),
        "--no-pip",
    ]
    first = run(*args)
    assert first.returncode == 0, first.stderr
    assert "would: systemctl restart lavos-edge.service" in first.stdout
    assert "would: systemctl enable systemd-time-wait-sync.service lavos-edge.service" in first.stdout
    after_first = tree(root)

    second = run(*args)
    assert second.returncode == 0, second.stderr
    assert tree(root) == after_first
    assert "done: nothing changed" in second.stdout and "restart" not in second.stdout
    assert "installed:" not in second.stdout

    assert (root / "etc/lavos/node.toml").read_text() == (kit / "pool-01.toml").read_text()
    assert (root / "etc/lavos/mqtt-password").read_text() == "s3cret\n"
    assert after_first["etc/lavos/mqtt-password"].startswith("file 640 ")
    assert (root / "etc/lavos/ca.crt").exists()
    assert (root / "etc/systemd/system/lavos-edge.service").read_bytes() == (REPO / "deploy/systemd/lavos-edge.service").read_bytes()
    assert "TimeoutStartSec=90s" in (root / "etc/systemd/system/systemd-time-wait-sync.service.d/lavos.conf").read_text()
    assert (root / "opt/lavos/.venv/bin/python").exists() and (root / "var/lib/lavos").is_dir()
    # the privileged steps are only said under --prefix
    if subprocess.run(["getent", "passwd", "lavos"], capture_output=True).returncode != 0:
        assert "would: useradd --system" in first.stdout and "would: chown lavos:lavos" in first.stdout


def test_node_toml_from_table_and_host_with_lavos_node_config(kit: Any, tmp_path: Path) -> None:
    root = tmp_path / "root"
    assert run("--prefix", str(root), "--config", str(kit / "pool-01.toml"), "--no-pip").returncode == 0
    # as if pip had installed lavos into the node's venv
    (root / "opt/lavos/.venv/bin/lavos").symlink_to(REPO / ".venv" / "bin" / "lavos")
    args = ["--prefix", str(root), "--table", "pool-04", "--mqtt-host", "lavos.local", "--no-pip"]
    made = run(*args)
    assert made.returncode == 0, made.stderr
    assert "installed: " in made.stdout and 'table = "pool-04"' in (root / "etc/lavos/node.toml").read_text()
    assert "nothing changed" in run(*args).stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--table", "pool-01"], "--table needs --mqtt-host"),
        (["--config", "/nonexistent/node.toml"], "does not exist"),
        (["--table", "pool-01", "--mqtt-host", "h", "--config", "x"], "not both"),
        (["--bogus"], "unknown argument"),
        ([], "no .*/etc/lavos/node.toml yet"),
        (["--table", "pool-01", "--mqtt-host", "h"], "no lavos in"),
    ],
)
def test_bad_arguments_say_what_to_do(tmp_path: Path, args: Any, message: Any) -> None:
    done = run("--prefix", str(tmp_path / "root"), "--no-pip", *args)
    assert done.returncode == 2
    assert re.search(message, done.stderr), done.stderr


def test_a_config_that_is_not_toml_is_refused(tmp_path: Path) -> None:
    (tmp_path / "node.toml").write_text("this is [not toml\n")
    done = run("--prefix", str(tmp_path / "root"), "--no-pip", "--config", str(tmp_path / "node.toml"))
    assert done.returncode == 2 and "not valid TOML" in done.stderr
    assert not (tmp_path / "root/etc/lavos/node.toml").exists()


# What of the node's build has no wheel for a Raspberry Pi (aarch64) and builds from source there,
# and the Debian packages that build needs; install.sh must install them on a fresh Raspberry Pi OS
# Lite, which has no compiler (issue 30, item 1).
BUILDS_FROM_SOURCE = {
    "evdev": {"gcc", "libc6-dev", "python3-dev"},  # C extension; linux/input.h comes with libc6-dev
    "mfrc522": {"gcc", "libc6-dev", "python3-dev"},  # through RPi.GPIO and spidev, both C extensions
    "lgpio": {"swig", "liblgpio-dev"},  # only where its wheel does not fit (32-bit Pi OS, a newer Python)
}


def fresh_os(tmp_path: Path) -> dict[str, str]:
    """An environment whose dpkg knows no package: what install.sh sees on a fresh Raspberry Pi OS Lite."""
    bin_dir = tmp_path / "fresh-bin"
    bin_dir.mkdir()
    (bin_dir / "dpkg").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "dpkg").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_a_fresh_raspberry_pi_os_gets_what_the_nodes_build_needs(kit: Any, tmp_path: Path) -> None:
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=;\[ ]", r, maxsplit=1)[0].lower() for extra in ("edge", "pi", "mfrc522") for r in deps[extra]}
    assert set(BUILDS_FROM_SOURCE) <= names, "a package of this table is no longer installed on the Pi: update the table"
    args = ["--prefix", str(tmp_path / "root"), "--config", str(kit / "pool-01.toml"), "--no-pip"]
    done = subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True, timeout=120, env=fresh_os(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    [install] = [x for x in lines if x.startswith("would: apt-get install -y ")]
    assert lines.index("would: apt-get update") < lines.index(install)
    assert set().union(*BUILDS_FROM_SOURCE.values()) | {"python3-venv"} <= set(install.split()[4:])


def test_an_mfrc522_node_gets_its_reader_package_and_others_do_not(kit: Any, tmp_path: Path) -> None:
    """The agent with lgpio, without RPi.GPIO, unless node.toml names an MFRC522 reader (pip as a recorder)."""
    root = tmp_path / "root"
    venv_bin = root / "opt/lavos/.venv/bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to("/usr/bin/python3")
    (venv_bin / "pip").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/pip.log\n')
    (venv_bin / "pip").chmod(0o755)
    mfrc = kit / "foos-01.toml"
    cfg = node_config_for(load_venue(VENUE), "foos-01", mqtt_host="lavos.local")
    mfrc.write_text(dump_node_config(cfg.model_copy(update={"card_reader": CardReaderSettings(kind="mfrc522")})))
    assert run("--prefix", str(root), "--config", str(kit / "pool-01.toml")).returncode == 0
    assert run("--prefix", str(root), "--config", str(mfrc)).returncode == 0
    assert "unchanged: Python packages" in run("--prefix", str(root), "--config", str(mfrc)).stdout
    installs = (tmp_path / "pip.log").read_text().splitlines()
    assert installs == [f"install --quiet {REPO}[edge]", f"install --quiet {REPO}[edge,mfrc522]"]
