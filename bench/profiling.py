"""cProfile for every thread a benchmark starts (cProfile alone sees only the thread that enables it).

    p = ThreadProfiler(Path("out.pstats")); p.install(); ...start threads, join them...; p.collect()

Each thread started after `install()` runs under a profiler of its own; `collect()` (once the
threads have ended) merges them into one pstats file and prints the top of it by own time and
by cumulative time. The hub's threads (paho's network loop, the ingest loop, the metrics sender)
share one interpreter lock, so their own times add up to what the drain cost.
"""

from __future__ import annotations

import cProfile
import pstats
import threading
from pathlib import Path


class ThreadProfiler:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.profiles: list[tuple[str, cProfile.Profile]] = []
        self._original = threading.Thread.run

    def install(self) -> None:
        original, profiles = self._original, self.profiles

        def run(self: threading.Thread) -> None:  # Thread.run from now on: `self` is the thread
            prof = cProfile.Profile()
            profiles.append((self.name, prof))
            prof.enable()
            try:
                original(self)
            finally:
                prof.disable()

        threading.Thread.run = run  # type: ignore[method-assign]

    def collect(self, top: int = 40) -> None:
        threading.Thread.run = self._original  # type: ignore[method-assign]
        self.out.parent.mkdir(parents=True, exist_ok=True)
        stats = None
        for name, prof in self.profiles:
            prof.create_stats()
            if not prof.stats:
                continue
            own = sum(v[2] for v in prof.stats.values())
            print(f"  thread {name}: {own:.2f} s own time")
            stats = pstats.Stats(prof) if stats is None else stats.add(prof)
        if stats is None:
            return
        stats.dump_stats(str(self.out))
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
