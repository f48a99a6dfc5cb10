"""A pytest of its own on a probe test file, with only the plugins at stake: for the tests of the
suite's own machinery (the time budget, the marker guard), serial or under xdist workers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_probe(tmp_path: Path, source: str, plugin: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`pytest -p xdist -p PLUGIN ARGS test_probe.py` in tmp_path, test_probe.py holding `source`.

    The installed plugins are not loaded (Hypothesis and schemathesis take seconds to import), nor
    is this run's xdist worker identity passed on."""
    (tmp_path / "test_probe.py").write_text(source)
    environ = {**os.environ, "PYTHONPATH": str(REPO), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})}
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_ADDOPTS"):
        environ.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "xdist", "-p", plugin, "-p", "no:cacheprovider", "-q", "-rf", *args, "test_probe.py"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
