"""bench/hub_ingest.py still runs and still checks what it claims (a small drain, one round)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.server import REPO


def test_the_ingest_bench_drains_and_prints_its_ratio():
    done = subprocess.run(
        [sys.executable, "-m", "bench.hub_ingest", "--events", "2000", "--rounds", "1", "--no-metrics"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr  # non-zero: a lost, doubled or refused event
    assert "ratio hub/bare" in done.stdout and "its own process" in done.stdout, done.stdout
    assert "'stored': 2000" in done.stdout and "'mqtt-link process'" in done.stdout, done.stdout
