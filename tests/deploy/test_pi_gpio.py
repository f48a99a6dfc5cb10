"""Issue 30, item 1: the agent drives its pins with lgpio under the shipped unit, or says in one line why not.

Run as the shipped lavos-edge.service runs it, its settings read from the unit file itself
(tests/support/unit_sandbox.py: its user, its environment, a read-only root but for the unit's
writable paths, its working directory), with the real lgpio (its x86-64 wheel behaves as on a Pi
up to the gpiochip: it makes its notification pipe at import, then finds no /dev/gpiochip0). The
agent must get past lgpio's start, in the place the unit gives it, and stop only at the missing
chip, with exit status 3 (which the unit does not restart on) and one line saying why and what to do.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from broker.domain.venue import load_venue
from devices.nodeconfig import dump_node_config, node_config_for
from edge.pins import EXIT_PINS
from tests.support.hub import REPO, VENUE
from tests.support.unit_sandbox import Unit, run_sandboxed

UNIT = Unit(REPO / "deploy" / "systemd" / "lavos-edge.service")
NO_CHIP = "error: cannot drive the GPIO pins: no GPIO chip: /dev/gpiochip0 does not exist (lgpio: 'can not open gpiochip')"


@pytest.fixture
def etc(tmp_path: Path) -> Path:
    """/etc/lavos as deploy/pi/install.sh leaves it: pool-01's node.toml and password."""
    etc = tmp_path / "etc-lavos"
    etc.mkdir()
    cfg = node_config_for(load_venue(VENUE), "pool-01", mqtt_host="127.0.0.1", mqtt_port=1, password_file=Path("/etc/lavos/mqtt-password"))
    (etc / "node.toml").write_text(dump_node_config(cfg))
    (etc / "mqtt-password").write_text("s3cret\n")
    return etc


def installed(etc: Path, **more: Path) -> dict[str, Path]:
    """The node's files where install.sh puts them; this venv stands for the Pi's. Its Python may
    live under /root (pyenv), and the checkout its editable install points at under /tmp or /root
    (CI's clean clone), which the unit's ProtectHome= and PrivateTmp= hide: those are shown again."""
    hidden = ("/root/", "/home/", "/tmp/", "/var/tmp/")
    shown = {path: Path(path) for path in (sys.base_prefix, str(REPO)) if path.startswith(hidden)}
    return {"/opt/lavos/.venv": REPO / ".venv", "/etc/lavos": etc, **shown, **more}


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_the_agent_under_its_unit_starts_lgpio_and_stops_only_at_the_missing_gpiochip(tmp_path: Path, etc: Path) -> None:
    scratch = tmp_path / "sandbox"
    done = run_sandboxed(UNIT.sandbox(scratch, binds=installed(etc)))
    assert done.returncode == EXIT_PINS, done.stderr
    assert error_lines(done.stderr) == [
        f"{NO_CHIP}: this is not a Raspberry Pi, or its kernel has no GPIO driver; "
        "run the agent on the table's Pi (or with GPIOZERO_PIN_FACTORY=mock to try it without pins)"
    ]
    # lgpio started where the unit told it to: its notification pipe is in the RuntimeDirectory.
    assert UNIT.environment["LG_WD"] == "/run/lavos-edge" and "lavos-edge" in UNIT.many("RuntimeDirectory")
    assert [p.name for p in (scratch / "run" / "lavos-edge").iterdir()] == [".lgd-nfy0"]
    assert str(EXIT_PINS) in UNIT.many("RestartPreventExitStatus")  # "2 3": never a restart loop


def test_an_unwritable_lg_wd_is_one_line_naming_it(tmp_path: Path, etc: Path) -> None:
    done = run_sandboxed(UNIT.sandbox(tmp_path / "sandbox", binds=installed(etc), env={"LG_WD": "/opt/lavos"}))
    assert done.returncode == EXIT_PINS, done.stderr
    assert error_lines(done.stderr) == [
        "error: cannot drive the GPIO pins: LG_WD=/opt/lavos is not a directory lavos can write: lgpio makes its notification pipe "
        "there at start; point LG_WD at one (the shipped unit gives it /run/lavos-edge (RuntimeDirectory=, deploy/systemd/lavos-edge.service))"
    ]


def test_a_gpiochip_the_user_may_not_open_says_which_group_to_join(tmp_path: Path, etc: Path) -> None:
    chip = tmp_path / "gpiochip0"
    chip.write_bytes(b"")
    os.chmod(chip, 0o600)
    os.chown(chip, 65534, 65534)  # not the unit's user: inside the sandbox it is nobody's
    done = run_sandboxed(UNIT.sandbox(tmp_path / "sandbox", binds=installed(etc, **{"/dev/gpiochip0": chip})))
    assert done.returncode == EXIT_PINS, done.stderr
    [line] = error_lines(done.stderr)
    assert line.startswith("error: cannot drive the GPIO pins: lavos may not open /dev/gpiochip0 (group nogroup, mode 600): ")
    assert "sudo usermod -aG nogroup lavos" in line


def test_test_sensors_as_lavos_from_any_directory_gets_to_the_gpiochip(tmp_path: Path, etc: Path) -> None:
    """README, section 3: `sudo -u lavos /opt/lavos/.venv/bin/lavos edge --config /etc/lavos/node.toml
    test-sensors`, from a directory lavos cannot write and with no LG_WD (sudo gives it none)."""
    argv = ["/opt/lavos/.venv/bin/lavos", "edge", "--config", "/etc/lavos/node.toml", "test-sensors", "--seconds", "0.2"]
    done = run_sandboxed(UNIT.sandbox(tmp_path / "sandbox", binds=installed(etc), env={"LG_WD": None}, argv=argv, chdir="/usr"))
    assert done.returncode == EXIT_PINS, done.stderr
    assert error_lines(done.stderr)[0].startswith(NO_CHIP)
