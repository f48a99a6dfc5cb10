"""No test asserts how fast something is: a test holds what must be true, a bench measures speed.

Issue 29, item 41: on a clean clone with other work on the machine, the failover test failed
because its standby took longer than the test's 10 s to lead, though it led, lost nothing and was
never one of two leaders. A test waits for what must happen with a deadline that only catches a
hang (tests/support/waiting.py: HANG_S, wait_until's default); how fast it happens is a figure of
`bench/`, reported in the README's Performance section with the command that measured it.

This reads every test module (the AST, not a run) for the three shapes a speed claim takes:
- an assert that compares an elapsed time (time.monotonic() - t, took, elapsed, *_s, *_ms, a
  latency, a p95) with a bound;
- an assert that compares two measured times, or their ratio with anything (`slow / fast < 2`,
  `slow < 2 * fast`, `0.5 < a / b`): load on the machine slows one side and not the other, so a
  relative figure fails on a busy machine just as an absolute one does (a login's time ratio,
  2.36 in a clean-clone run, failed that way). A duration is also what a function of the module
  returns from the clock (`def timed(f): ... return time.perf_counter() - t0`) and timeit's;
- a wait whose deadline is shorter than MIN_DEADLINE_S (wait_until, Playwright's expect and
  wait_for_*): a deadline so short that a loaded machine misses it is a speed claim;
- a test named for a speed ("within 2 s", "within a second").
tests/test_waiting.py is left out: it tests the waiting itself, on a clock of its own.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
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


TIMERS = {"timeit", "repeat"}  # timeit.timeit(...), timeit.repeat(...): durations
# A name that says it holds measured times, for the sides of a ratio: times a helper measured and
# handed back in a structure the scan does not follow (`(known, known_s), (unknown, unknown_s) =
# answers(...)`, then `median(unknown_s) / median(known_s)`: the ratio that failed in a clean-clone run).
DURATION_NAME = re.compile(r"(^|_)(took|elapsed|latency|latencies|duration|durations|times|timings)$|_(s|ms|us|ns|secs|seconds)$")


def _values(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of an expression, but not inside len(...): a count of measured times is a count."""
    yield node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return
    for child in ast.iter_child_nodes(node):
        yield from _values(child)


def _reads_clock(node: ast.AST, timed: set[str], timers: frozenset[str] = frozenset()) -> bool:
    """Does this expression read the wall clock (time.monotonic() and the like, a response's
    .elapsed, timeit's), call a function of the module that returns a duration (`timers`), or read
    a name this function set from one?"""
    for sub in _values(node):
        func = sub.func if isinstance(sub, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in CLOCKS and isinstance(func.value, ast.Name) and func.value.id == "time":
            return True
        if isinstance(func, ast.Attribute) and func.attr in TIMERS and isinstance(func.value, ast.Name) and func.value.id == "timeit":
            return True
        if isinstance(func, ast.Name) and func.id in timers:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr == "elapsed":
            return True
        if isinstance(sub, ast.Name) and sub.id in timed:
            return True
    return False


def _is_moment(value: ast.expr) -> bool:
    """A reading of the clock itself (t0 = time.monotonic()): a moment, not a duration."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in CLOCKS


def _bindings(nodes: list[ast.AST]) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) of each assignment in a function, a tuple unpacked element by element
    (`first, since = shown(), time.monotonic()`: since is a moment, first is not timed)."""
    out: list[tuple[ast.expr, ast.expr]] = []
    for a in nodes:
        if not isinstance(a, ast.Assign | ast.AugAssign | ast.AnnAssign) or a.value is None:
            continue
        for target in a.targets if isinstance(a, ast.Assign) else [a.target]:
            value = a.value
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                out.extend(zip(target.elts, value.elts, strict=True))
            else:
                out.append((target, value))
    return out


def _names_bound(nodes: list[ast.AST], reads: Callable[[ast.expr, set[str]], bool]) -> set[str]:
    """Names a function (its `nodes`) assigns from an expression `reads` accepts, or appends one to
    (times.append(...)), transitively (given the names found so far)."""
    bindings = _bindings(nodes)
    appends = [
        n
        for n in nodes
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append" and isinstance(n.func.value, ast.Name)
    ]
    found: set[str] = set()
    while True:
        grown = set(found)
        for call in appends:
            if call.args and reads(call.args[0], found):
                assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                grown.add(call.func.value.id)
        for target, value in bindings:
            if reads(value, found):
                grown |= {t.id for t in ast.walk(target) if isinstance(t, ast.Name)}
        if grown == found:
            return found
        found = grown


def _timed_names(fn: ast.AST, timers: frozenset[str] = frozenset(), nodes: list[ast.AST] | None = None) -> set[str]:
    """Names a function assigns from a clock reading (took = time.monotonic() - t0), or appends one
    to (times.append(time.monotonic() - t0)), transitively; not the readings themselves
    (t0 = time.monotonic() is a moment, not a duration)."""
    nodes = list(ast.walk(fn)) if nodes is None else nodes
    return _names_bound(nodes, lambda value, timed: not _is_moment(value) and _reads_clock(value, timed, timers))


def _upper_bound_on_time(test: ast.expr, timed: set[str], timers: frozenset[str] = frozenset()) -> bool:
    """An assert that something measured on the clock stays under a bound (elapsed < N)."""
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides[:-1], sides[1:], strict=True):
            if isinstance(op, ast.Lt | ast.LtE) and _reads_clock(left, timed, timers) and not _reads_clock(right, timed, timers):
                return True
            if isinstance(op, ast.Gt | ast.GtE) and _reads_clock(right, timed, timers) and not _reads_clock(left, timed, timers):
                return True
    return False


def _timers(tree: ast.Module) -> frozenset[str]:
    """Functions of the module that return a duration read on the clock (a `timed(f)` helper),
    transitively: a call to one is a measured time as much as `time.monotonic() - t0` is."""
    functions = []  # (function, its nodes, what it returns) for each that returns something
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef):
            nodes = list(ast.walk(fn))
            returns = [n.value for n in nodes if isinstance(n, ast.Return) and n.value is not None]
            if returns:
                functions.append((fn, nodes, returns))
    timers: set[str] = set()
    while True:
        grown = set(timers)
        for fn, nodes, returns in functions:
            known = frozenset(timers)
            timed = _timed_names(fn, known, nodes)
            if fn.name not in grown and any(_durations(value, timed, known) for value in returns):
                grown.add(fn.name)
        if grown == timers:
            return frozenset(timers)
        timers = grown


def _ratio_of_times(node: ast.AST, timed: set[str], timers: frozenset[str], ratios: set[str]) -> bool:
    """A division whose both sides are measured times (slow / fast, or names that say so:
    median(unknown_s) / median(known_s)), or a name set from one."""
    named = {n for n in ast.walk(node) if isinstance(n, ast.Name) and DURATION_NAME.search(n.id)}

    def measured(side: ast.expr) -> bool:
        return _durations(side, timed, timers) or any(isinstance(n, ast.Name) and n in named for n in _values(side))

    return any(
        (isinstance(sub, ast.Name) and sub.id in ratios)
        or (isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div | ast.FloorDiv) and measured(sub.left) and measured(sub.right))
        for sub in _values(node)
    )


def _ratio_names(nodes: list[ast.AST], timed: set[str], timers: frozenset[str]) -> set[str]:
    """Names a function (its `nodes`) sets from a ratio of measured times (ratio = slow / fast), transitively."""
    if not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div | ast.FloorDiv) for n in nodes):
        return set()
    return _names_bound(nodes, lambda value, ratios: _ratio_of_times(value, timed, timers, ratios))


def _relative_time(test: ast.expr, timed: set[str], timers: frozenset[str], ratios: set[str]) -> bool:
    """An assert that orders two measured times (slow < 2 * fast), or their ratio and anything,
    in either direction (slow / fast < 2, 0.5 < a / b)."""
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides[:-1], sides[1:], strict=True):
            if not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
                continue
            if _ratio_of_times(left, timed, timers, ratios) or _ratio_of_times(right, timed, timers, ratios):
                return True
            if _durations(left, timed, timers) and _durations(right, timed, timers):
                return True
    return False


def _durations(node: ast.expr, timed: set[str], timers: frozenset[str]) -> bool:
    """A measured time: a duration (a name set from the clock, a helper's), not a moment read now
    (`started < time.monotonic()` compares two moments: it holds on any machine)."""
    return not _is_moment(node) and _reads_clock(node, timed, timers)


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


def _outermost_functions(node: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
        else:
            yield from _outermost_functions(child)


# A module that reads no clock has no measured time but what its names say (known_s): the flow
# through its functions is not followed (most modules; the scan of them all stays a second or two).
CLOCK_TEXT = re.compile(r"\b(monotonic|perf_counter|timeit)|\btime\.time\b|\.elapsed\b")


def speed_claims(path: Path, rel: str) -> list[Claim]:
    source = path.read_text()
    tree = ast.parse(source, filename=str(path))
    constants = _constants(tree)
    clocked = bool(CLOCK_TEXT.search(source))
    timers = _timers(tree) if clocked else frozenset()
    claims = []
    for fn in _outermost_functions(tree):  # a nested function is read as part of the one it is in
        nodes = list(ast.walk(fn))
        for named in nodes:
            if isinstance(named, ast.FunctionDef) and named.name.startswith("test_") and SPEED_NAME.search(named.name):
                claims.append(Claim(rel, named.lineno, f"the test's name states a speed: {named.name}"))
        asserts = any(isinstance(node, ast.Assert) for node in nodes)
        timed = _timed_names(fn, timers, nodes) if clocked and asserts else set()
        ratios = _ratio_names(nodes, timed, timers) if asserts else set()
        for node in nodes:
            if isinstance(node, ast.Assert) and _relative_time(node.test, timed, timers, ratios):
                claims.append(Claim(rel, node.lineno, f"compares measured times: assert {ast.unparse(node.test)[:100]}"))
            elif isinstance(node, ast.Assert) and _upper_bound_on_time(node.test, timed, timers):
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


def test_the_scan_sees_a_comparison_of_two_measured_times(tmp_path: Path) -> None:
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "def timed(f):\n"
        "    t0 = time.perf_counter()\n"
        "    f()\n"
        "    return time.perf_counter() - t0\n"
        "def best_of(f):\n"
        "    return min(timed(f) for _ in range(3))\n"
        "def now():\n"
        "    return time.monotonic()\n"
        "def test_unknown_names_cost_what_known_ones_do():\n"
        "    t0 = time.perf_counter()\n"
        "    known()\n"
        "    slow = time.perf_counter() - t0\n"
        "    t1 = time.monotonic()\n"
        "    unknown()\n"
        "    fast = time.monotonic() - t1\n"
        "    assert slow / fast < 2\n"
        "    assert 0.5 < slow / fast\n"
        "    assert slow < 2 * fast\n"
        "    ratio = timed(known) / timed(unknown)\n"
        "    assert ratio > 0.5, ratio\n"
        "    assert best_of(known) <= best_of(unknown) * 1.5\n"
        "    assert timeit.timeit(known, number=5) / timeit.timeit(unknown, number=5) < 3\n"
        "    (known, known_s), (unknown, unknown_s) = _answers(server, 8)\n"
        "    ratio = statistics.median(unknown_s) / statistics.median(known_s)\n"
        "    assert 0.5 < ratio < 2, (known_s, unknown_s)\n"
        "def test_what_must_be_true():\n"
        "    started = now()\n"
        "    first = time.monotonic()\n"
        "    assert started <= first < time.monotonic()\n"
        "    assert shown_s - first_shown <= time.monotonic() - first + 1.5\n"
        "    assert total_cents / count == 250 and len(rows) / 2 < 3\n"
        "    assert played_s / 60 < 3 and used_s <= limit_s and len(starts) <= len(stops)\n"
        "    assert len(times) / len(rounds) < 2\n"
    )
    lines = sorted(c.line for c in speed_claims(sample, "sample"))
    assert lines == [16, 17, 18, 20, 21, 22, 25], speed_claims(sample, "sample")


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
