"""The time budget (tests/support/budget.py): a session past the CI limit fails with a clear line,
even when every test passed, and under pytest-xdist only the controller decides, once."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.budget import LIMIT_ENV
from tests.support.probe import run_probe

# Two tests that pass; a session of them takes more than a millisecond (collecting the file alone
# does), so a limit of 1 ms is passed without a sleep: each of the four probe sessions had slept 0.6-1.2 s.
PROBE = """
def test_passes():
    pass

def test_passes_too():
    pass
"""
TINY_LIMIT_S = 0.001


def run_budget_probe(tmp_path: Path, limit_s: float, *args: str) -> subprocess.CompletedProcess[str]:
    return run_probe(tmp_path, PROBE, "tests.support.budget", *args, env={LIMIT_ENV: str(limit_s)})


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_session_past_the_limit_fails_though_every_test_passed(tmp_path: Path, args: Any) -> None:
    done = run_budget_probe(tmp_path, TINY_LIMIT_S, *args)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert done.stdout.count("FAILED: the test session took") == 1, done.stdout  # the controller's line, not a worker's
    assert f"over the CI limit of {TINY_LIMIT_S:g} s" in done.stdout


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_session_within_the_limit_passes_and_says_its_time(tmp_path: Path, args: Any) -> None:
    done = run_budget_probe(tmp_path, 600, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("test time: ") == 1 and "CI limit 600 s" in done.stdout
    assert "FAILED" not in done.stdout


def test_every_known_figure_names_a_module_or_test_that_exists() -> None:
    """A figure whose module or test was renamed or moved no longer orders anything (the unit counts
    as free and runs in the tail, tests/support/schedule.py), and nothing else would say so."""
    from tests.support.hub import REPO
    from tests.support.schedule import KNOWN_S

    for key in KNOWN_S:
        path, _, test = key.partition("::")
        assert (REPO / path).exists(), f"KNOWN_S names {path}, which does not exist"
        if test:
            assert f"def {test}(" in (REPO / path).read_text(encoding="utf-8"), f"KNOWN_S names {key}, which does not exist"
