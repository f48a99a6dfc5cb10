"""bench/hub_ingest.py still runs and still checks what it claims (a small drain, one round):
`lavos server` started as the shipped systemd unit starts it, next to a bare subscriber."""

from __future__ import annotations

import subprocess
import sys

from tests.support.hub import REPO


def test_the_ingest_bench_drains_through_the_shipped_server_and_prints_its_ratio() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.hub_ingest", "--events", "2000", "--rounds", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr  # non-zero: a lost, doubled or refused event, or a bad exit
    out = done.stdout
    assert "ratio server/bare" in out and "as shipped" in out and "its own process" in out, out
    assert "'stored': 2000" in out and "'refused': 0" in out and "'exit code': 0" in out, out
    # The unit's command line, pointed at this run: the installed `lavos server` with its options.
    command = next(line for line in out.splitlines() if line.startswith("server command"))
    assert "/lavos server --venue " in command and "--mqtt-password-file " in command and "--http 127.0.0.1:" in command, command
    assert "'link process'" in out, out
