"""Final standings, payouts to the cent and the season's ranking points. Pure.

Places: the winner is 1st and the last final's loser 2nd; everyone else is placed by how far
they got, and those out at the same stage share the places (two losers of the semi-finals are
both "3.–4."). In double elimination the stage is the losers' round one went out in; after
groups, those who did not go on are placed below the knockout by their place in the group; a
Swiss tournament's order is its standings (nobody shares a place).

Payouts: the pot (entry fees minus the club's share) by the payout shares of the places; entrants
who share places share those places' money equally; the cents are shared by largest remainder,
so the payouts sum to the pot to the cent. Season points: each entrant gets the points of the best
place of their range (both "3.–4." get the points of 3rd).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from broker.domain.refusals import N_
from broker.domain.till.money import allocate
from broker.domain.tournaments.bracket import Loser
from broker.domain.tournaments.groups import group_standings
from broker.domain.tournaments.progress import MatchState, Progress, swiss_table
from broker.domain.tournaments.rules import TournamentRefused

__all__ = ["Place", "club_share", "payouts", "season_points", "standings"]

_PHASE_RANK = {"group": 0, "winners": 1, "losers": 1, "knockout": 2, "final": 3, "reset": 4, "swiss": 0}


@dataclass(frozen=True)
class Place:
    """Places `first`..`last` (the same number when not shared), held by `entrants`."""

    first: int
    last: int
    entrants: tuple[int, ...]


def standings(p: Progress) -> list[Place]:
    """The final places, best first (empty until the tournament is over)."""
    if p.champion is None:
        return []
    if p.plan.rules.format == "swiss":
        return [Place(i, i, (e,)) for i, (e, _, _) in enumerate(swiss_table(p), start=1)]
    out = _eliminations(p)
    stages: dict[tuple[int, ...], list[int]] = {}
    for entrant, stage in out.items():
        stages.setdefault(stage, []).append(entrant)
    draw = {e: i for i, e in enumerate(p.plan.draw)}
    places = [Place(1, 1, (p.champion,))]
    nxt = 2
    for stage in sorted(stages, reverse=True):
        group = tuple(sorted(stages[stage], key=draw.__getitem__))
        places.append(Place(nxt, nxt + len(group) - 1, group))
        nxt += len(group)
    return places


def _eliminations(p: Progress) -> dict[int, tuple[int, ...]]:
    """How far each entrant but the winner got: a stage key, higher is further."""
    taken_on = {f for m in p.matches for f in _loser_feeds(m)}
    out: dict[int, tuple[int, ...]] = {}
    for m in p.matches:
        if m.status != "done" or not isinstance(m.loser, int) or m.spec.phase == "group":
            continue
        if m.id in taken_on and not _next_is_void(p, m):
            continue  # a loss on the winners' side of a double elimination: dropped, not out
        out[m.loser] = (_PHASE_RANK[m.spec.phase], m.spec.round)
    if p.groups:
        ko = {e for m in p.matches if m.spec.phase == "knockout" for e in (m.a, m.b) if isinstance(e, int)}
        for players in p.groups.values():
            order = _group_order(p, players)
            for place, entrant in enumerate(order, start=1):
                if entrant not in ko and entrant != p.champion:
                    out[entrant] = (0, -place)
    return out


def _loser_feeds(m: MatchState) -> list[str]:
    """The matches whose losers play on in `m` (both sides of a losers' first-round match)."""
    return [feed.match for feed in (m.spec.a, m.spec.b) if isinstance(feed, Loser)]


def _next_is_void(p: Progress, m: MatchState) -> bool:
    """The grand final's loser is out when its reset is not played."""
    return any(x.spec.phase == "reset" and x.status == "void" for x in p.matches) and m.spec.phase == "final"


def _group_order(p: Progress, players: Sequence[int]) -> list[int]:
    rows = []
    for m in p.matches:
        if m.spec.phase == "group" and m.status == "done" and m.players and m.result and m.players[0] in players:
            rows.append((m.players[0], m.players[1], *m.result.scores_for(m.players[0])))
    return [s.entrant for s in group_standings(players, rows)]


def club_share(fees_cents: int, share_percent: int) -> int:
    """The club's part of the entry fees (whole cents, rounded half up)."""
    if not 0 <= share_percent <= 100:
        raise TournamentRefused(N_("The club's share is between 0 and 100 %."))
    return (fees_cents * share_percent + 50) // 100


def payouts(places: Sequence[Place], pot_cents: int, shares: Sequence[int]) -> dict[int, int]:
    """Each paid entrant's money: `shares` are the weights of places 1, 2, 3… (e.g. 50, 30, 20);
    those who share places share those places' weights equally. The amounts sum to `pot_cents`
    exactly; an odd cent goes to the better place (then the draw's order)."""
    if pot_cents < 0 or any(s < 0 for s in shares) or not any(shares):
        raise TournamentRefused(N_("The payout shares must be positive numbers for the first places."))
    # A common denominator keeps a shared range's equal split in whole numbers.
    common = math.lcm(*(len(p.entrants) for p in places)) if places else 1
    order: list[tuple[int, int]] = []
    for place in places:
        covered = sum(shares[i - 1] for i in range(place.first, place.last + 1) if i <= len(shares))
        order.extend((e, covered * common // len(place.entrants)) for e in place.entrants)
    if not any(w for _, w in order):
        if pot_cents:
            raise TournamentRefused(N_("No paid place was reached: the payout shares name only places nobody holds."))
        return {}
    # allocate() gives a tied cent to the larger key: number the entrants from the end.
    got = allocate(pot_cents, {len(order) - i: w for i, (_, w) in enumerate(order)})
    return {order[len(order) - key][0]: cents for key, cents in got.items() if cents}


def season_points(places: Sequence[Place], table: Mapping[int, int]) -> dict[int, int]:
    """Points for a season's ranking: each entrant the points of the best place in their range
    (`table`: place -> points; a place not in it gives the points of the nearest place above
    it that is listed, 0 if none is)."""
    out: dict[int, int] = {}
    for place in places:
        listed = [k for k in table if k <= place.first]
        pts = table[max(listed)] if listed else 0
        for e in place.entrants:
            out[e] = pts
    return out
