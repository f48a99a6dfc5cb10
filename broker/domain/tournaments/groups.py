"""Round-robin groups, then a knockout of the groups' best. Pure.

Entrants go into groups by the snake of the draw (1 2 3 4 / 8 7 6 5 / …), so the top seeds are in
different groups; each group plays everyone against everyone (the circle method: in each round
everyone plays once, or sits out once when the group is odd). The best `advance` of each group
go on to a single-elimination knockout, group winners seeded first, so a group's winner meets
another group's runner-up in the knockout's first round.

A group's standings: matches won; then, between exactly two tied, who won their match; then racks
won minus lost; then racks won; then the draw's order (so a standing is never a coin toss).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from broker.domain.tournaments.bracket import Feed, MatchSpec, Placed, Seat, _Plan, _winners_side, first_round
from broker.domain.tournaments.rules import Rules

__all__ = ["GroupScore", "group_names", "group_standings", "groups_then_knockout", "split_into_groups"]


def group_names(count: int) -> list[str]:
    """A, B, …, Z, then AA, AB, … (128 entrants in groups of 2 is 64 groups)."""
    letters = string.ascii_uppercase
    return [letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26] for i in range(count)]


def split_into_groups(seeds: Sequence[int], size: int) -> dict[str, list[int]]:
    """About len/size groups (nearest, none of fewer than two), filled in snake order, so their
    sizes differ by one at most."""
    count = max(1, min(len(seeds) // 2, (len(seeds) + size // 2) // size))
    names = group_names(count)
    groups: dict[str, list[int]] = {n: [] for n in names}
    for i, entrant in enumerate(seeds):
        lap, pos = divmod(i, count)
        groups[names[pos if lap % 2 == 0 else count - 1 - pos]].append(entrant)
    return groups


def round_robin(players: Sequence[int]) -> list[list[tuple[int, int]]]:
    """The rounds of a round robin by the circle method: everyone meets everyone once."""
    ring: list[int | None] = list(players)
    if len(ring) % 2:
        ring.append(None)
    n = len(ring)
    rounds: list[list[tuple[int, int]]] = []
    for _ in range(n - 1):
        pairs = [(ring[i], ring[n - 1 - i]) for i in range(n // 2)]
        rounds.append([(a, b) for a, b in pairs if a is not None and b is not None])
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return rounds


@dataclass(frozen=True)
class GroupScore:
    entrant: int
    played: int
    won: int
    racks_for: int
    racks_against: int

    @property
    def difference(self) -> int:
        return self.racks_for - self.racks_against


def group_standings(players: Sequence[int], games: Sequence[tuple[int, int, int, int]]) -> list[GroupScore]:
    """The group's order from its played games (a, b, a's racks, b's racks; the winner is the one
    with more). `players` in draw order breaks the last ties."""
    played = dict.fromkeys(players, 0)
    won = dict.fromkeys(players, 0)
    rf = dict.fromkeys(players, 0)
    ra = dict.fromkeys(players, 0)
    beat: set[tuple[int, int]] = set()
    for a, b, sa, sb in games:
        played[a] += 1
        played[b] += 1
        rf[a] += sa
        ra[a] += sb
        rf[b] += sb
        ra[b] += sa
        w, loser = (a, b) if sa > sb else (b, a)
        won[w] += 1
        beat.add((w, loser))
    draw = {p: i for i, p in enumerate(players)}

    def key(p: int) -> tuple[int, int, int, int]:
        return (-won[p], -(rf[p] - ra[p]), -rf[p], draw[p])

    order = sorted(players, key=key)
    # Head to head decides between exactly two with the same number of wins.
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and won[order[j + 1]] == won[order[i]]:
            j += 1
        if j == i + 1 and (order[j], order[i]) in beat:
            order[i], order[j] = order[j], order[i]
        i = j + 1
    return [GroupScore(p, played[p], won[p], rf[p], ra[p]) for p in order]


def groups_then_knockout(seeds: Sequence[int], rules: Rules) -> tuple[dict[str, list[int]], list[MatchSpec]]:
    """The groups and every match: each group's round robin, then the knockout of the best."""
    groups = split_into_groups(seeds, rules.group_size)
    plan = _Plan()
    for name, players in groups.items():
        for rnd, pairs in enumerate(round_robin(players), start=1):
            for i, (a, b) in enumerate(pairs, start=1):
                plan.add(f"{name}-{rnd}-{i}", "group", rnd, i, Seat(a), Seat(b), rules.races.winners, group=name)
    advance = min(rules.advance, min(len(p) for p in groups.values()))
    qualified: list[Feed] = [Placed(name, place) for place in range(1, advance + 1) for name in groups]
    if len(qualified) >= 2:
        _winners_side(plan, _knockout_pairs(qualified), rules, "knockout", "K", final_race=True)
    return groups, plan.matches


def _knockout_pairs(qualified: Sequence[Feed]) -> list[tuple[Feed, Feed]]:
    """The knockout's first round: the qualified in seed order (group winners first) placed by the
    standard seeding, byes to the best."""
    # first_round works on ids; index the feeds through their positions.
    index = list(range(len(qualified)))
    pairs: list[tuple[Feed, Feed]] = []
    for a, b in first_round(index):
        pairs.append((qualified[a.entrant] if isinstance(a, Seat) else a, qualified[b.entrant] if isinstance(b, Seat) else b))
    return pairs


def games_of_group(
    matches: Mapping[str, tuple[int, int, int, int]], group: str, specs: Sequence[MatchSpec]
) -> list[tuple[int, int, int, int]]:
    """The played games of one group, from the results by match id."""
    return [matches[s.id] for s in specs if s.group == group and s.id in matches]
