"""The shape of a tournament: its matches and where each match's two players come from. Pure.

A match names its two sides by *feeds*: a drawn entrant, a bye, the winner or the loser of an
earlier match, or a group's n-th place. Who actually plays is worked out from the results
(broker.domain.tournaments.progress), so a corrected result moves its winner and loser through
every later match by itself.

Elimination brackets use the standard seeding: in a bracket of P = 2^k places, seed s meets seed
P + 1 - s in the first round and the top seeds are as far apart as they can be. The P - N places
left over are byes, and they are the places of the seeds N+1..P: each meets one of the top seeds
1..P-N, never another bye (N > P/2), and its player goes through at once.

Double elimination: every loser of the winners' side drops to the losers' side. Losers' round 1
pairs the first round's losers; even losers' rounds take the winners' side's next losers, in an
order that is reversed on the first drop and then alternately reversed and swapped by halves, so a
dropped player does not meet again at once someone from their own part of the draw. N entrants
play 2N - 2 matches (62 for 32), plus the reset of the grand final when the losers' side wins it.

Byes on the losers' side: a losers' first-round match fed by two byes has no one in it, so the
winners' second-round loser who drops against it has a bye too. The bye rule (issue 29): such an
empty place goes to a player who has had no bye yet where the bracket allows, over the whole drop.
With N > P/2 only the first drop can meet an empty place. Its places fall in two kinds
(`Dropped`): the empty places that may receive a player with a bye (their winners' match had a bye
feeding it) and the real places that may receive one without (a played first-round match fed
theirs). Once the losers those places wait for are known, each empty place whose loser has had a
bye changes places with the first real place (in a fixed order, the surest first) whose loser has
had none, until either kind runs out; so no one gets a second bye while a player without one
could take it. A place is decided as soon as what it depends on is known: a real place whose
loser has had a bye, or an empty one whose loser has had none, keeps its loser at once; the
others wait only for the results the order consults. Every other place of the drop never waits.
The decision is a function of the draw and the results alone (not of the order they came in), so
a stored draw gives the same bracket every time. When every player who could take an empty place
has had a bye (5 entrants: seeds 1-3 have byes, the loser of 4-5 a losers' bye), a second bye is
unavoidable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from broker.domain.tournaments.rules import Rules

__all__ = [
    "Bye",
    "Dropped",
    "Feed",
    "Loser",
    "MatchSpec",
    "Phase",
    "Placed",
    "Seat",
    "Winner",
    "bracket_size",
    "double_elimination",
    "seed_order",
    "single_elimination",
]

Phase = Literal["winners", "losers", "final", "reset", "group", "knockout", "swiss"]


@dataclass(frozen=True)
class Seat:
    """A drawn entrant (by id)."""

    entrant: int


@dataclass(frozen=True)
class Bye:
    """No one: the other side goes through without playing."""


@dataclass(frozen=True)
class Winner:
    match: str


@dataclass(frozen=True)
class Loser:
    match: str


@dataclass(frozen=True)
class Dropped(Loser):
    """The loser of `match` dropping to a place of the losers' side's first drop that the bye rule
    (the module's docstring) may give to another loser of that drop: `empty` are the winners'
    matches whose losers drop to an empty place and may have had a bye, `real` those dropping to a
    real place who may have had none, each in the order the rule consults them. Readers that do
    not know the rule (standings, the pace) may take it for plain Loser(match)."""

    empty: tuple[str, ...]
    real: tuple[str, ...]

    @property
    def bye(self) -> bool:
        """Is this the feed of an empty place (its match a bye)?"""
        return self.match in self.empty

    @property
    def others(self) -> tuple[str, ...]:
        """The matches whose loser may come to this place instead of the loser of `match`."""
        return self.real if self.bye else self.empty


@dataclass(frozen=True)
class Placed:
    """The `place`-th (1-based) of round-robin group `group` once the group is over."""

    group: str
    place: int


Feed = Seat | Bye | Winner | Loser | Dropped | Placed


@dataclass(frozen=True)
class MatchSpec:
    """One match of the plan: `id` is stable (it is what results, calls and exports name);
    `round` counts within its phase from 1; `order` is its place in the whole plan (feeds only
    ever name a match of lower order)."""

    id: str
    phase: Phase
    round: int
    index: int
    a: Feed
    b: Feed
    race_to: int
    order: int
    group: str | None = None


def bracket_size(n: int) -> int:
    """The smallest power of two that holds n entrants (at least 2)."""
    size = 2
    while size < n:
        size *= 2
    return size


def seed_order(size: int) -> list[int]:
    """The seeds (1-based) in bracket order: slot 2i and 2i+1 meet in the first round.

    seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]: 1 and 2 can meet only in the final.
    """
    order = [1]
    while len(order) < size:
        n = len(order) * 2
        order = [x for s in order for x in (s, n + 1 - s)]
    return order


def _seat(seeds: Sequence[int], seed: int) -> Seat | Bye:
    """Seed `seed` (1-based) of the drawn order, or a bye past its end."""
    return Seat(seeds[seed - 1]) if seed <= len(seeds) else Bye()


class _Plan:
    """Collects matches in order."""

    def __init__(self) -> None:
        self.matches: list[MatchSpec] = []

    def add(self, id: str, phase: Phase, rnd: int, index: int, a: Feed, b: Feed, race_to: int, group: str | None = None) -> str:
        self.matches.append(MatchSpec(id, phase, rnd, index, a, b, race_to, len(self.matches), group))
        return id


def _winners_side(
    plan: _Plan, first: Sequence[tuple[Feed, Feed]], rules: Rules, phase: Phase, prefix: str, *, final_race: bool
) -> list[list[str]]:
    """An elimination bracket from its first-round pairs; returns the match ids per round.
    The last round (one match) is raced to the final's race when `final_race`."""
    rounds: list[list[str]] = []
    pairs: list[tuple[Feed, Feed]] = list(first)
    rnd = 1
    while pairs:
        last = len(pairs) == 1
        race = rules.races.final if (last and final_race) else rules.races.winners
        ids = [plan.add(f"{prefix}{rnd}-{i + 1}", phase, rnd, i + 1, a, b, race) for i, (a, b) in enumerate(pairs)]
        rounds.append(ids)
        if last:
            break
        pairs = [(Winner(ids[i]), Winner(ids[i + 1])) for i in range(0, len(ids), 2)]
        rnd += 1
    return rounds


def first_round(seeds: Sequence[int], size: int | None = None) -> list[tuple[Feed, Feed]]:
    """The first round's pairs of a bracket for `seeds` (entrant ids in seed order)."""
    order = seed_order(size or bracket_size(len(seeds)))
    return [(_seat(seeds, order[i]), _seat(seeds, order[i + 1])) for i in range(0, len(order), 2)]


def single_elimination(seeds: Sequence[int], rules: Rules, *, phase: Phase = "winners", prefix: str = "W") -> list[MatchSpec]:
    """A knockout of `seeds` (entrant ids, best first); its last match is the final."""
    plan = _Plan()
    _winners_side(plan, first_round(seeds), rules, phase, prefix, final_race=True)
    return plan.matches


def _drop_order(items: list[str], drop: int) -> list[str]:
    """The order the winners' side's losers of drop number `drop` (1-based) come in."""
    if drop % 2 == 1:
        return items[::-1]
    half = len(items) // 2
    return items[half:] + items[:half]


def _bye_rule(wins: list[list[str]], byes: set[str], empty: list[bool], incoming: list[str]) -> list[Loser]:
    """The first drop's feeds (`incoming[i]` drops to place i, `empty[i]`: nobody is there): the
    empty places that may receive a player with a bye and the real places that may receive one
    without are `Dropped` over both kinds; every other place is plain Loser. A winners'
    second-round match may bring a player with a bye when one of its two first-round matches was
    a bye, one without when one was played; each kind is consulted the surest first."""
    fed_by = {w2: wins[0][2 * j : 2 * j + 2] for j, w2 in enumerate(wins[1])}

    def with_bye(match: str) -> int:
        return sum(w1 in byes for w1 in fed_by[match])

    at_risk = sorted((i for i, d in enumerate(incoming) if empty[i] and with_bye(d)), key=lambda i: -with_bye(incoming[i]))
    chance = sorted((i for i, d in enumerate(incoming) if not empty[i] and with_bye(d) < 2), key=lambda i: with_bye(incoming[i]))
    feeds: list[Loser] = [Loser(d) for d in incoming]
    if at_risk and chance:
        to_empty, to_real = tuple(incoming[i] for i in at_risk), tuple(incoming[i] for i in chance)
        for i in at_risk + chance:
            feeds[i] = Dropped(incoming[i], to_empty, to_real)
    return feeds


def double_elimination(seeds: Sequence[int], rules: Rules) -> list[MatchSpec]:
    """Winners' side, losers' side, the grand final and (if the rules have it) its reset."""
    plan = _Plan()
    pairs = first_round(seeds)
    wins = _winners_side(plan, pairs, rules, "winners", "W", final_race=False)
    byes = {w1 for w1, (a, b) in zip(wins[0], pairs, strict=True) if isinstance(a, Bye) or isinstance(b, Bye)}
    champion_of_losers: Feed
    if len(wins) == 1:
        champion_of_losers = Loser(wins[0][0])  # two entrants: the first final's loser is the losers' side
    else:
        race = rules.races.losers
        lr = 1
        first = wins[0]
        current = [
            plan.add(f"L{lr}-{i + 1}", "losers", lr, i + 1, Loser(first[2 * i]), Loser(first[2 * i + 1]), race)
            for i in range(len(first) // 2)
        ]
        empty = [first[2 * i] in byes and first[2 * i + 1] in byes for i in range(len(first) // 2)]  # both fed by byes
        for drop, dropping in enumerate(wins[1:], start=1):
            lr += 1
            incoming = _drop_order(list(dropping), drop)
            feeds = _bye_rule(wins, byes, empty, incoming) if drop == 1 else [Loser(d) for d in incoming]
            current = [
                plan.add(f"L{lr}-{i + 1}", "losers", lr, i + 1, Winner(w), d, race)
                for i, (w, d) in enumerate(zip(current, feeds, strict=True))
            ]
            if len(current) > 1:
                lr += 1
                current = [
                    plan.add(f"L{lr}-{i + 1}", "losers", lr, i + 1, Winner(current[2 * i]), Winner(current[2 * i + 1]), race)
                    for i in range(len(current) // 2)
                ]
        champion_of_losers = Winner(current[0])
    final = plan.add("GF", "final", 1, 1, Winner(wins[-1][0]), champion_of_losers, rules.races.final)
    if rules.grand_final_reset:
        # The same two again; played only if the losers' side (b) won the first final (progress).
        plan.add("GF2", "reset", 1, 1, Winner(final), Loser(final), rules.races.final)
    return plan.matches
