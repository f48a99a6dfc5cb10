"""Swiss rounds: everyone plays every round against someone with the same score. Pure.

Round 1 pairs the draw's top half with its bottom half (1 with N/2+1, …). Every later round is
paired once the round before is over: the entrants by points (then the draw), the odd one out
(an odd count) gets the bye — the lowest who has not had one — and counts it as a win; then
from the top each plays the highest below them they have not met yet (a search that backs up
when the rest cannot be paired without a rematch; if no pairing avoids every rematch, rematches
are allowed rather than leaving a round unplayable).

The final order: points; then Buchholz (the points of one's opponents, the strength of the
schedule); then racks won minus lost; then the draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["SwissScore", "pair_round", "rounds_for", "swiss_standings"]

_SEARCH_STEPS = 20_000  # enough for 128 entrants in practice; past it, rematches are allowed


def rounds_for(entrants: int, asked: int | None) -> int:
    """The number of rounds: as asked, else enough to leave one unbeaten (ceil log2 N)."""
    return asked if asked is not None else max(1, math.ceil(math.log2(max(2, entrants))))


def pair_round(
    order: Sequence[int], met: set[frozenset[int]], had_bye: set[int], *, first: bool
) -> tuple[list[tuple[int, int]], int | None]:
    """The pairs of a round and who sits out with the bye (None for an even count)."""
    players = list(order)
    bye: int | None = None
    if len(players) % 2:
        bye = next((p for p in reversed(players) if p not in had_bye), players[-1])
        players.remove(bye)
    if first:
        half = len(players) // 2
        return list(zip(players[:half], players[half:], strict=True)), bye
    found = _search(players, met)
    if found is None:
        found = [(players[i], players[i + 1]) for i in range(0, len(players), 2)]
    return found, bye


def _search(players: list[int], met: set[frozenset[int]]) -> list[tuple[int, int]] | None:
    steps = 0

    def go(rest: list[int]) -> list[tuple[int, int]] | None:
        nonlocal steps
        if not rest:
            return []
        top, others = rest[0], rest[1:]
        for i, other in enumerate(others):
            steps += 1
            if steps > _SEARCH_STEPS:
                return None
            if frozenset((top, other)) in met:
                continue
            tail = go(others[:i] + others[i + 1 :])
            if tail is not None:
                return [(top, other), *tail]
        return None

    return go(players)


@dataclass(frozen=True)
class SwissScore:
    entrant: int
    points: int
    buchholz: int
    racks_for: int
    racks_against: int


def swiss_standings(draw: Sequence[int], games: Sequence[tuple[int, int, int, int]], byes: Mapping[int, int]) -> list[SwissScore]:
    """The order after the games played (a, b, a's racks, b's racks) and the byes (entrant -> count)."""
    points = {p: byes.get(p, 0) for p in draw}
    rf = dict.fromkeys(draw, 0)
    ra = dict.fromkeys(draw, 0)
    opponents: dict[int, list[int]] = {p: [] for p in draw}
    for a, b, sa, sb in games:
        points[a if sa > sb else b] += 1
        rf[a] += sa
        ra[a] += sb
        rf[b] += sb
        ra[b] += sa
        opponents[a].append(b)
        opponents[b].append(a)
    buchholz = {p: sum(points[o] for o in opponents[p]) for p in draw}
    pos = {p: i for i, p in enumerate(draw)}
    order = sorted(draw, key=lambda p: (-points[p], -buchholz[p], -(rf[p] - ra[p]), pos[p]))
    return [SwissScore(p, points[p], buchholz[p], rf[p], ra[p]) for p in order]
