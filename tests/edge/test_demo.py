"""`lavos demo --seconds N`: prints what the simulated node publishes, stops by itself, leaves nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def demo_processes() -> list[str]:
    found = []
    for status in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            cmd = status.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "lavos-demo-" in cmd:
            found.append(cmd)
    return found


def test_demo_runs_and_stops_cleanly():
    result = subprocess.run(
        [sys.executable, "-m", "lavos_cli", "demo", "--seconds", "8"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "300"},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "lavos/v1/table/pool-01/status" in out and '"state":"online"' in out
    assert '"cause":"command"' in out, "the hub's light/set was obeyed and answered"
    assert "demo stopped" in out
    assert not demo_processes(), "the demo's Mosquitto outlived it"
