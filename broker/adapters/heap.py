"""Garbage-collector settings for a process that runs one hub (or its MQTT link) for its life.

Why: CPython's cyclic collector walks every tracked object of the oldest generation on each full
collection. A hub process holds a few hundred thousand of them from start-up alone (SQLAlchemy,
pydantic's validators, FastAPI's routes, the catalogues), none of which ever becomes garbage, so
in a backlog drain every fifth batch of 1 000 events paid a 70-120 ms pause to walk them
(bench/hub_ingest.py: batches of 35 ms and of 160 ms). `gc.freeze()` moves what exists after
start-up out of the collector's sight, and a larger first-generation threshold collects the
short-lived containers of each batch less often (a collection per 700 new containers is sized
for small scripts; per 20 000 it costs a few MB of not-yet-collected cycles at most).

Only for processes whose start-up heap lives as long as they do: `lavos server` (after its hub
and web app are built) and the MQTT link's child process. Not for test processes that build
many hubs: a frozen object is never collected, even after it becomes garbage.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000  # new container objects between two young collections (CPython's default: 700)


def settle_heap(young: int = YOUNG_THRESHOLD) -> int:
    """Collect once, freeze what is left (start-up objects), collect the young less often.
    Returns how many objects were frozen (for the log)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, old)
    return gc.get_freeze_count()
