"""The README's two commands are exactly what CI and the demo run."""

from __future__ import annotations

import re
from pathlib import Path

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


def test_readme_names_exactly_the_demo_and_the_test_command():
    assert readme_commands() == ["./run demo", "./run test"]


def test_ci_runs_the_readme_test_command():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    execs = [line for line in lines if line.startswith("exec ")]
    assert execs == ["exec ./run test"]


def test_run_demo_starts_lavos_demo_and_run_test_runs_pytest():
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
