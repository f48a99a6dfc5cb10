"""broker.adapters.heap: the collector settings of a process that runs one hub for its life.

Run in a subprocess each: freezing this test process would keep every later test's garbage."""

from __future__ import annotations

import subprocess
import sys

_SCRIPT = """
import gc
from broker.adapters.heap import YOUNG_THRESHOLD, settle_heap
import sqlalchemy, pydantic  # a start-up heap worth freezing
before = gc.get_threshold()
frozen = settle_heap()
assert frozen == gc.get_freeze_count() > 10_000, frozen
assert gc.get_threshold() == (YOUNG_THRESHOLD, before[1], before[2]), gc.get_threshold()
# What is created afterwards is still collected: a cycle made now is found by a collection.
class Node: pass
a, b = Node(), Node(); a.other, b.other = b, a
del a, b
assert gc.collect() >= 2
print("ok")
"""


def test_settle_heap_freezes_start_up_and_still_collects_what_comes_after() -> None:
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
