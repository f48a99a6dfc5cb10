"""The suite's time budget, as a pytest plugin (tests/conftest.py loads it).

`./run test` is to take at most 12 minutes here (the README's budget); past 20 minutes CI fails,
even with every test green: a suite that slowly grows gets noticed when it crosses the limit, not
when nobody wants to run it any more. Only the process that runs the session decides: with
pytest-xdist that is the controller (a worker sees only its own share of the tests and time).

LAVOS_TEST_LIMIT_S sets the limit (its test sets a tiny one); the closing lines always say the wall
time against the budget and the limit.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

BUDGET_S = 12 * 60
LIMIT_S = 20 * 60
LIMIT_ENV = "LAVOS_TEST_LIMIT_S"

_started = pytest.StashKey[float]()
_over = pytest.StashKey[float]()


def is_worker(config: pytest.Config) -> bool:
    """True in a pytest-xdist worker (which runs a share of the tests), False in the controller or a plain run."""
    return hasattr(config, "workerinput")


def limit_s() -> float:
    return float(os.environ.get(LIMIT_ENV) or LIMIT_S)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_started] = time.monotonic()


def wall_s(config: pytest.Config) -> float:
    return time.monotonic() - config.stash[_started]


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if is_worker(session.config):
        return
    wall = wall_s(session.config)
    if wall > limit_s():
        session.config.stash[_over] = wall
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if is_worker(config):
        return
    wall = wall_s(config)
    terminalreporter.write_sep("=", f"test time: {wall:.0f} s wall (budget {BUDGET_S} s, CI limit {limit_s():g} s)")
    if _over in config.stash:
        terminalreporter.write_line(
            f"FAILED: the test session took {wall:.0f} s, over the CI limit of {limit_s():g} s "
            f"(budget {BUDGET_S} s): make the slowest tests above faster before adding more",
            red=True,
            bold=True,
        )
