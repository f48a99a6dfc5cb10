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
from typing import cast

import pytest

from tests.support.hub import REPO

UNIT_SUFFIXES = (".service", ".timer", ".socket", ".path", ".mount", ".target")
SHIPPED = sorted(p for p in (REPO / "deploy").rglob("*") if p.suffix in UNIT_SUFFIXES and p.is_file())
VENV_BIN = "/opt/lavos/.venv/bin/"


def test_the_units_are_found() -> None:
    assert {p.name for p in SHIPPED} >= {"lavos-edge.service", "lavos-server.service"}


@pytest.mark.parametrize("unit", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_systemd_analyze_verify_finds_nothing(tmp_path: Path, unit: Path) -> None:
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


def _settings(unit: Path) -> dict[str, str]:
    """A unit's keys and values (the last of a key repeated), continuation lines joined."""
    text = unit.read_text().replace("\\\n", " ")
    return dict(re.findall(r"^(\w+)=(.*)$", text, re.M))


def test_the_centre_runs_by_a_unit_with_the_hall_servers_limit_and_hardening_and_the_flags_its_cli_knows() -> None:
    """Issue 29's independent check: `lavos central serve` had no unit. Under an artificial
    `ulimit -n 256` a flood of connections that never start TLS delayed honest posts up to 19.5 s
    (the connection cap below the open-file limit was 16); the unit's LimitNOFILE=8192, as the
    hall's, gives the cap its full 1000. The docs' centre commands install it."""
    import click
    import typer.main

    from dashboard.central_cli import central_app

    systemd = REPO / "deploy/systemd"
    central, server = _settings(systemd / "lavos-central.service"), _settings(systemd / "lavos-server.service")
    for key in ("LimitNOFILE", "UMask", "NoNewPrivileges", "ProtectSystem", "PrivateTmp", "User", "Group", "StateDirectoryMode"):
        assert central.get(key) == server.get(key), key
    assert central["LimitNOFILE"] == "8192"
    serve = cast(click.Group, typer.main.get_command(central_app)).commands["serve"]
    known = {opt for p in serve.params for opt in p.opts}
    flags = set(re.findall(r"(?<!\S)(--[\w-]+)", central["ExecStart"]))
    assert central["ExecStart"].startswith(f"{VENV_BIN}lavos central serve ") and flags <= known, flags - known
    assert flags >= {"--db", "--mqtt", "--mqtt-password-file", "--http", "--tls-cert", "--tls-key", "--secret-file"}
    scaling = (REPO / "docs/scaling.md").read_text()
    assert "deploy/systemd/lavos-central.service" in scaling and "systemctl enable --now lavos-central" in scaling
