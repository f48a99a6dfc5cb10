"""The draw: the entrants' order in the bracket (seed 1 first). Pure and repeatable.

The same entrants, ratings and seed give the same draw whatever order the entrants come in, so
drawing twice (a double tap, a second tablet) gives the same bracket. Random: a shuffle by the
seed. Seeded: by rating, best first (the season's ranking points), ties in the random order.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

__all__ = ["make_draw"]


def make_draw(entrants: Sequence[int], seed: int, ratings: Mapping[int, int] | None = None) -> tuple[int, ...]:
    order = sorted(set(entrants))
    random.Random(seed).shuffle(order)
    if ratings is not None:
        order.sort(key=lambda e: -ratings.get(e, 0))  # stable: equal ratings keep the shuffle's order
    return tuple(order)
