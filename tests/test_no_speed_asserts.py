"""No test asserts how fast something is: a test holds what must be true, a bench measures speed.

Issue 29, item 41: on a clean clone with other work on the machine, the failover test failed
because its standby took longer than the test's 10 s to lead, though it led, lost nothing and was
never one of two leaders. A test waits for what must happen with a deadline that only catches a
hang (tests/support/waiting.py: HANG_S, wait_until's default); how fast it happens is a figure of
`bench/`, reported in the README's Performance section with the command that measured it.

This reads every test module (the AST, not a run) for the three shapes a speed claim takes:
- an assert that compares an elapsed time (time.monotonic() - t, took, elapsed, *_s, *_ms, a
  latency, a p95) with a bound;
- a wait whose deadline is shorter than MIN_DEADLINE_S (wait_until, Playwright's expect and
  wait_for_*): a deadline so short that a loaded machine misses it is a speed claim;
- a test named for a speed ("within 2 s", "within a second").
tests/test_waiting.py is left out: it tests the waiting itself, on a clock of its own.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.waiting import HANG_S

TESTS = Path(__file__).resolve().parent
MIN_DEADLINE_S = 10.0  # a wait shorter than this is a claim of speed, not a guard against a hang
EXEMPT = {"test_waiting.py", "test_no_speed_asserts.py"}  # the waiting itself; this module's own examples

_NUMBER = r"(a|an|one|two|three|four|five|ten|fifteen|twenty|thirty|sixty|\d+)"
SPEED_NAME = re.compile(rf"within_{_NUMBER}_?(ms|s|sec|secs|second|seconds|minute|minutes)(_|$)|_in_under_|_(quickly|promptly)(_|$)")
CLOCKS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns"}
# Waits and their deadline's unit: wait_until and the MQTT Collector's wait_for in seconds,
# Playwright's assertions (expect(...).to_*) and page waits in milliseconds.
SECONDS_WAITS = re.compile(r"^(wait_until|wait_for)$")
MS_WAITS = re.compile(r"^(to_\w+|wait_for_(selector|function|url|load_state|event))$")


@dataclass(frozen=True)
class Claim:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _constants(tree: ast.Module) -> dict[str, float]:
    """Module-level NAME = number assignments (a deadline given by name)."""
    out: dict[str, float] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int | float):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = float(node.value.value)
    return out


def _number(node: ast.expr | None, constants: dict[str, float]) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _reads_clock(node: ast.AST, timed: set[str]) -> bool:
    """Does this expression read the wall clock (time.monotonic() and the like, a response's
    .elapsed), or a name this function set from one?"""
    for sub in ast.walk(node):
        func = sub.func if isinstance(sub, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in CLOCKS and isinstance(func.value, ast.Name) and func.value.id == "time":
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "elapsed":
            return True
        if isinstance(sub, ast.Name) and sub.id in timed:
            return True
    return False


def _timed_names(fn: ast.FunctionDef) -> set[str]:
    """Names a function assigns from a clock reading (took = time.monotonic() - t0), or appends one
    to (times.append(time.monotonic() - t0)), transitively; not the readings themselves
    (t0 = time.monotonic() is a moment, not a duration)."""
    timed: set[str] = set()
    assigns = [n for n in ast.walk(fn) if isinstance(n, ast.Assign | ast.AugAssign | ast.AnnAssign) and n.value is not None]
    appends = [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append" and isinstance(n.func.value, ast.Name)
    ]
    while True:
        grown = set(timed)
        for call in appends:
            if call.args and _reads_clock(call.args[0], timed):
                assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                grown.add(call.func.value.id)
        for a in assigns:
            value = a.value
            assert value is not None
            moment = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in CLOCKS
            if not moment and _reads_clock(value, timed):
                targets = a.targets if isinstance(a, ast.Assign) else [a.target]
                grown |= {t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)}
        if grown == timed:
            return timed
        timed = grown


def _upper_bound_on_time(test: ast.expr, timed: set[str]) -> bool:
    """An assert that something measured on the clock stays under a bound (elapsed < N)."""
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides[:-1], sides[1:], strict=True):
            if isinstance(op, ast.Lt | ast.LtE) and _reads_clock(left, timed) and not _reads_clock(right, timed):
                return True
            if isinstance(op, ast.Gt | ast.GtE) and _reads_clock(right, timed) and not _reads_clock(left, timed):
                return True
    return False


def _deadline(call: ast.Call, constants: dict[str, float]) -> tuple[str, float] | None:
    """(what, seconds) of a wait's deadline, if the call is a wait that names one."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    keywords = {k.arg: k.value for k in call.keywords}
    if SECONDS_WAITS.match(name):
        given = keywords.get("timeout", call.args[1] if len(call.args) > 1 else None)
        seconds = _number(given, constants)
        return (name, seconds) if seconds is not None else None
    if MS_WAITS.match(name) and "timeout" in keywords:
        ms = _number(keywords["timeout"], constants)
        return (name, ms / 1000) if ms is not None else None
    return None


def speed_claims(path: Path, rel: str) -> list[Claim]:
    tree = ast.parse(path.read_text(), filename=str(path))
    constants = _constants(tree)
    claims = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        if fn.name.startswith("test_") and SPEED_NAME.search(fn.name):
            claims.append(Claim(rel, fn.lineno, f"the test's name states a speed: {fn.name}"))
        timed = _timed_names(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.Assert) and _upper_bound_on_time(node.test, timed):
                claims.append(Claim(rel, node.lineno, f"asserts an elapsed time: assert {ast.unparse(node.test)[:100]}"))
            elif isinstance(node, ast.Call) and (found := _deadline(node, constants)) and found[1] < MIN_DEADLINE_S:
                claims.append(Claim(rel, node.lineno, f"{found[0]} with a {found[1]:g} s deadline"))
    return sorted(set(claims), key=lambda c: c.line)


def test_the_scan_sees_each_shape_of_a_speed_claim(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "LIMIT_S = 1.0\n"
        "def test_the_light_comes_on_within_200ms():\n"
        "    started = time.monotonic()\n"
        "    assert time.monotonic() - started < 0.2\n"
        "    assert took < 3, took\n"
        "    took = time.monotonic() - started\n"
        "    latencies.append(time.monotonic() - started)\n"
        "    assert max(latencies) < LIMIT_S\n"
        "    wait_until(lambda: on, timeout=1.0, what='relay on')\n"
        "    wait_until(lambda: on, LIMIT_S)\n"
        "    expect(card).to_have_attribute('data-state', 'free', timeout=1000)\n"
        "def test_what_must_be_true():\n"
        "    wait_until(lambda: on, what='relay on')\n"
        "    wait_until(lambda: on, timeout=HANG_S)\n"
        "    assert len(rows) < 3 and total_cents <= 100 and pulse.duration_ms <= 31 and started < time.monotonic()\n"
        "    expect(card).to_have_attribute('data-state', 'free')\n"
    )
    lines = sorted(c.line for c in speed_claims(sample, "sample"))
    assert lines == [2, 4, 5, 8, 9, 10, 11], speed_claims(sample, "sample")


def test_no_test_asserts_how_fast_something_happens() -> None:
    claims = [
        claim
        for path in sorted(TESTS.rglob("test_*.py"))
        if path.name not in EXEMPT
        for claim in speed_claims(path, str(path.relative_to(TESTS.parent)))
    ]
    assert not claims, (
        f"{len(claims)} speed claims in tests: wait with a deadline that only catches a hang (HANG_S = {HANG_S:g} s, "
        "wait_until's default) and measure the speed in bench/ instead:\n" + "\n".join(map(str, claims))
    )


@pytest.mark.parametrize("name", ["test_standby_takes_over_a_killed_hub_within_ten_seconds", "test_x_within_2s", "test_y_within_a_second"])
def test_names_of_speed_are_seen(name: Any) -> None:
    assert SPEED_NAME.search(name)


@pytest.mark.parametrize(
    "name", ["test_a_session_within_the_limit_passes", "test_each_share_is_within_a_cent", "test_receiver_down_for_fifteen_seconds"]
)
def test_names_of_other_things_are_not(name: Any) -> None:
    assert not SPEED_NAME.search(name)
