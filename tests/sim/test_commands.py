"""The README's two commands are exactly what CI and the demo run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Two commands\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the Two commands section has no ```sh block"
    return [line.split("#", 1)[0].strip() for line in block.group(1).splitlines() if line.split("#", 1)[0].strip()]


def run_case(name: str) -> list[str]:
    """The lines of one `name)` branch of ./run's case statement."""
    text = (ROOT / "run").read_text()
    m = re.search(rf"^\s*{name}\)\n(.*?)^\s*;;", text, re.S | re.M)
    assert m, f"./run has no {name} command"
    return [line.strip() for line in m.group(1).splitlines()]


def test_readme_names_exactly_the_demo_and_the_test_command() -> None:
    assert readme_commands() == ["./run demo", "./run test"]


def test_ci_runs_the_readme_test_command() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    execs = [line for line in lines if line.startswith("exec ")]
    assert execs == ["exec ./run test"]


def test_run_demo_starts_lavos_demo_and_run_test_runs_pytest() -> None:
    assert [line for line in run_case("demo") if line.startswith("exec ")] == ['exec .venv/bin/lavos demo "$@"']
    # All of it (no -m), spread over xdist workers, closing with the 15 slowest and the time budget.
    test = run_case("test")
    pytest_line = '.venv/bin/python -m pytest "${xdist[@]}" --durations=15 "$@" || status=$?'
    assert [line for line in test if "-m pytest" in line] == [pytest_line]
    assert "mapfile -t xdist < <(parallel 4)" in test
    # mypy runs alongside the tests (started before them, its verdict after), and the run's exit
    # status is the tests' or mypy's failure.
    assert test.index("start_mypy") < test.index(pytest_line) < test.index('finish_mypy || [ "$status" -ne 0 ] || status=1')
    assert test[-1] == 'exit "$status"'


# What `./run test` checks for before it installs anything (its apt_install lines): where one is
# missing it would install it, which a test must not do.
RUN_TEST_NEEDS = (
    "mosquitto",
    "mosquitto_passwd",
    "gcc",
    "/usr/bin/victoria-metrics",
    "/usr/lib/postgresql",
    "/usr/bin/chromium-headless-shell",
)
FAKE_TOOL = '#!/bin/sh\necho "{name} $*" >> "$FAKE_LOG"\nexit "${{FAKE_{var}:-0}}"\n'


def fake_run_test(tmp_path: Path, *, mypy: int, pytest_status: int) -> tuple[int, str]:
    """Run the real ./run test beside a `.venv` whose tools only exit as told; (its status, what ran)."""
    for needed in RUN_TEST_NEEDS:
        if not (shutil.which(needed) or Path(needed).exists()):
            pytest.skip(f"{needed} is missing: ./run test would install it")
    shutil.copy(ROOT / "run", tmp_path / "run")
    (tmp_path / "pyproject.toml").write_text("")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, var in [("python", "PYTEST"), ("mypy", "MYPY"), ("ruff", "RUFF"), ("lint-imports", "LINT")]:
        (bin_dir / name).write_text(FAKE_TOOL.format(name=name, var=var))
        (bin_dir / name).chmod(0o755)
    # Installed already: newer than pyproject.toml, so ensure_venv installs nothing.
    stamp = tmp_path / ".venv" / ".lavos-installed"
    stamp.touch()
    os.utime(stamp, (time.time() + 60, time.time() + 60))
    log = tmp_path / "ran.log"
    env = {**os.environ, "FAKE_LOG": str(log), "FAKE_MYPY": str(mypy), "FAKE_PYTEST": str(pytest_status), "LAVOS_TEST_WORKERS": "0"}
    done = subprocess.run([str(tmp_path / "run"), "test", "-k", "x"], env=env, capture_output=True, text=True, timeout=30)
    return done.returncode, log.read_text()


@pytest.mark.parametrize(
    ("mypy", "pytest_status", "expected"),
    [(0, 0, 0), (1, 0, 1), (0, 2, 2)],
    ids=["both-pass", "mypy-fails", "tests-fail"],
)
def test_run_test_fails_when_mypy_or_the_tests_fail(tmp_path: Path, mypy: Any, pytest_status: Any, expected: Any) -> None:
    status, ran = fake_run_test(tmp_path, mypy=mypy, pytest_status=pytest_status)
    assert status == expected, ran
    # mypy ran (alongside), and the tests ran with the arguments given, whatever mypy said.
    assert "mypy \n" in ran and "python -m pytest --durations=15 -k x\n" in ran, ran
