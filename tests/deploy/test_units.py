"""Every systemd unit the project ships passes `systemd-analyze verify` (issue 30, item 1).

systemd-analyze checks each key and value the way systemd would load them (an unknown key or a
value it cannot parse is a warning systemd would ignore, silently weakening the unit) and that the
programs it starts exist: those live in /opt/lavos/.venv on an installed box, so each unit is
verified from a copy whose /opt/lavos/.venv/bin/ names a directory of executables of the same names.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.hub import REPO

UNIT_SUFFIXES = (".service", ".timer", ".socket", ".path", ".mount", ".target")
SHIPPED = sorted(p for p in (REPO / "deploy").rglob("*") if p.suffix in UNIT_SUFFIXES and p.is_file())
VENV_BIN = "/opt/lavos/.venv/bin/"


def test_the_units_are_found():
    assert {p.name for p in SHIPPED} >= {"lavos-edge.service", "lavos-server.service"}


@pytest.mark.parametrize("unit", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_systemd_analyze_verify_finds_nothing(tmp_path: Path, unit: Path):
    bin_dir = tmp_path / "venv-bin"
    bin_dir.mkdir()
    text = unit.read_text()
    for name in set(re.findall(re.escape(VENV_BIN) + r"([\w.-]+)", text)):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    copy = tmp_path / unit.name
    copy.write_text(text.replace(VENV_BIN, f"{bin_dir}/"))
    for other in unit.parent.iterdir():  # a timer's service, a service's drop-ins: beside it, as installed
        if other.suffix in UNIT_SUFFIXES and other != unit:
            (tmp_path / other.name).write_text(other.read_text().replace(VENV_BIN, f"{bin_dir}/"))
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", str(copy)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not (done.stdout + done.stderr).strip(), done.stdout + done.stderr
