"""Who plays whom now: a tournament's state worked out from its draw and its results. Pure.

Nothing about who plays a match is stored: `progress(plan, results)` follows every match's feeds
(broker.domain.tournaments.bracket) through the results, in the plan's order. So a corrected
result moves its winner and loser through every later match by itself, and `affected_by` tells
which later matches would change players (those already started or finished must be reset, and
the hub asks before it does).

A match is *waiting* (a player not known yet), *ready* (both known, no result), *done*, a *bye*
(one side is no one: its player goes through at once, the moment they are known), or *void* (no
one on either side, or the grand final's reset when the winners' side won the first final).
A stored result counts only for the two players it was played by: after a correction a result
whose players are no longer the match's is *stale* and the match is ready again.

A player withdrawn after the draw (`Plan.withdrawn`) loses every match of theirs without a stored
result by walkover, each the moment its players are known (rule 1.7's score: the race to the one
who is there, their start to the one who left); two withdrawn players meeting: side a goes on.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from broker.domain.refusals import N_
from broker.domain.tournaments.bracket import (
    Bye,
    Dropped,
    Feed,
    Loser,
    MatchSpec,
    Placed,
    Seat,
    Winner,
    double_elimination,
    single_elimination,
)
from broker.domain.tournaments.groups import group_standings, groups_then_knockout
from broker.domain.tournaments.rules import MAX_ENTRANTS, Rules, TournamentRefused
from broker.domain.tournaments.swiss import pair_round, rounds_for, swiss_standings

__all__ = [
    "BYE",
    "MatchState",
    "Plan",
    "Progress",
    "Result",
    "Status",
    "affected_by",
    "check_result",
    "progress",
]


class Empty(enum.Enum):
    BYE = "bye"


BYE = Empty.BYE
Player = int | Empty | None  # an entrant's id, no one (a bye), or not known yet
Status = Literal["waiting", "ready", "done", "bye", "void"]


@dataclass(frozen=True)
class Plan:
    """A drawn tournament: its rules and its entrants in the draw's order (seeds, best first)."""

    rules: Rules
    draw: tuple[int, ...]
    start: datetime
    withdrawn: Mapping[int, datetime] = field(default_factory=dict)  # entrant -> when they withdrew (after the draw)

    def __post_init__(self) -> None:
        if not 2 <= len(self.draw) <= MAX_ENTRANTS:
            raise TournamentRefused(N_("A tournament needs between 2 and %(most)d players."), most=MAX_ENTRANTS)
        if len(set(self.draw)) != len(self.draw):
            raise TournamentRefused(N_("A player is in the draw twice."))


@dataclass(frozen=True)
class Result:
    """A finished match as played: by entrants `a` and `b` with their scores (the race's winner
    reached it), or a walkover (`a` or `b` did not come: rule 1.7)."""

    match: str
    a: int
    b: int
    score_a: int
    score_b: int
    finished_at: datetime
    walkover: bool = False

    @property
    def winner(self) -> int:
        return self.a if self.score_a > self.score_b else self.b

    @property
    def loser(self) -> int:
        return self.b if self.score_a > self.score_b else self.a

    def scores_for(self, a: int) -> tuple[int, int]:
        """The scores with `a`'s first."""
        return (self.score_a, self.score_b) if a == self.a else (self.score_b, self.score_a)


@dataclass(frozen=True)
class MatchState:
    spec: MatchSpec
    a: Player
    b: Player
    status: Status
    winner: Player
    loser: Player
    ready_at: datetime | None  # when its last player became known (the longest-waiting is called first)
    decided_at: datetime | None  # when its winner became known
    result: Result | None
    stale: Result | None = None

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def players(self) -> tuple[int, int] | None:
        return (self.a, self.b) if isinstance(self.a, int) and isinstance(self.b, int) else None


@dataclass(frozen=True)
class Progress:
    plan: Plan
    matches: tuple[MatchState, ...]
    groups: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    champion: int | None = None
    swiss_rounds: int = 0

    @property
    def by_id(self) -> dict[str, MatchState]:
        return {m.id: m for m in self.matches}

    @property
    def finished(self) -> bool:
        return self.champion is not None

    def ready(self) -> list[MatchState]:
        """The matches that can be played now, the longest-waiting first."""
        ready = [m for m in self.matches if m.status == "ready"]
        return sorted(ready, key=lambda m: (m.ready_at or self.plan.start, m.spec.order))

    def played(self) -> list[MatchState]:
        """The matches to be shown as played or to play (not the byes and voids)."""
        return [m for m in self.matches if m.status in ("waiting", "ready", "done")]


def progress(plan: Plan, results: Mapping[str, Result]) -> Progress:
    """The tournament's state after `results` (by match id)."""
    rules = plan.rules
    if rules.format == "swiss":
        return _swiss(plan, results)
    groups: dict[str, list[int]] = {}
    if rules.format == "single":
        specs = single_elimination(plan.draw, rules)
    elif rules.format == "double":
        specs = double_elimination(plan.draw, rules)
    else:
        groups, specs = groups_then_knockout(plan.draw, rules)
    resolver = _Resolver(plan, results, groups)
    for spec in specs:
        resolver.resolve(spec)
    states = tuple(resolver.state.values())
    return Progress(plan, states, {g: tuple(p) for g, p in groups.items()}, _champion(rules, states, resolver))


class _Resolver:
    def __init__(self, plan: Plan, results: Mapping[str, Result], groups: Mapping[str, Sequence[int]]) -> None:
        self.plan = plan
        self.results = results
        self.groups = groups
        self.state: dict[str, MatchState] = {}
        self._placed: dict[str, tuple[list[int], datetime]] = {}
        self._byes: set[int] = set()  # who has gone through a bye so far (in the plan's order)
        # The bye rule's places of the first drop, by (empty, real): the winners' match whose loser
        # drops to each (by the match it is fed from), as far as it is decided (drop_places).
        self._drops: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, str]] = {}

    def who(self, feed: Feed) -> tuple[Player, datetime | None]:
        if isinstance(feed, Seat):
            return feed.entrant, self.plan.start
        if isinstance(feed, Bye):
            return BYE, self.plan.start
        if isinstance(feed, Winner):
            m = self.state[feed.match]
            return m.winner, m.decided_at
        if isinstance(feed, Dropped):
            return self._dropped(feed)
        if isinstance(feed, Loser):
            m = self.state[feed.match]
            return m.loser, m.decided_at
        return self._group_place(feed)

    def _group_place(self, feed: Placed) -> tuple[Player, datetime | None]:
        if feed.group not in self._placed:
            games = [m for m in self.state.values() if m.spec.group == feed.group]
            if any(m.status != "done" for m in games):
                return None, None
            rows = []
            for m in games:
                assert m.result is not None and m.players is not None
                sa, sb = m.result.scores_for(m.players[0])
                rows.append((m.players[0], m.players[1], sa, sb))
            order = [s.entrant for s in group_standings(self.groups[feed.group], rows)]
            done = max((m.decided_at for m in games if m.decided_at), default=self.plan.start)
            self._placed[feed.group] = (order, done)
        order, done = self._placed[feed.group]
        return order[feed.place - 1], done

    def _dropped(self, feed: Dropped) -> tuple[Player, datetime | None]:
        """The bye rule (broker.domain.tournaments.bracket): who drops to this place of the first
        drop, once it is decided. Decided for the whole drop at its first place, before any of its
        places is resolved (a bye given there counts after)."""
        key = (feed.empty, feed.real)
        if key not in self._drops:
            losers = {m: self.state[m].loser for m in feed.empty + feed.real}
            self._drops[key] = drop_places(feed.empty, feed.real, losers, frozenset(self._byes))
        source = self._drops[key].get(feed.match)
        if source is None:
            return None, None
        times = [t for t in (self.state[feed.match].decided_at, self.state[source].decided_at) if t is not None]
        return self.state[source].loser, max(times, default=None)

    def resolve(self, spec: MatchSpec) -> None:
        if spec.phase == "reset":
            state = self._reset(spec)
        else:
            a, ta = self.who(spec.a)
            b, tb = self.who(spec.b)
            state = decide(spec, a, b, ta, tb, self.results.get(spec.id))
        state = withdrawn_walkover(self.plan, state)
        if state.status == "bye" and isinstance(state.winner, int):
            self._byes.add(state.winner)
        self.state[spec.id] = state

    def _reset(self, spec: MatchSpec) -> MatchState:
        """The grand final's reset: the same two, played only if the losers' side won the first."""
        assert isinstance(spec.a, Winner)
        final = self.state[spec.a.match]
        if final.status != "done":
            return MatchState(spec, None, None, "waiting", None, None, None, None, None)
        if final.winner == final.a:
            return MatchState(spec, final.a, final.b, "void", BYE, BYE, None, final.decided_at, None)
        return decide(spec, final.a, final.b, final.decided_at, final.decided_at, self.results.get(spec.id))


def drop_places(empty: Sequence[str], real: Sequence[str], losers: Mapping[str, Player], byes: Collection[int]) -> dict[str, str]:
    """The bye rule over the first drop (broker.domain.tournaments.bracket), as far as the losers
    known (`losers`: of each winners' match, None while not known) decide it: for each decided
    place (by the winners' match it is fed from), the match whose loser drops there. Each empty
    place whose loser has had a bye takes the loser of the first real place, in order, whose loser
    has had none; a place nobody can change is decided as soon as its own loser is known."""

    def known(m: str) -> bool:
        return isinstance(losers[m], int)

    def had_bye(m: str) -> bool:
        return losers[m] in byes

    out = {m: m for m in real if known(m) and had_bye(m)}
    out |= {m: m for m in empty if known(m) and not had_bye(m)}
    candidates = iter(real)
    for e in empty:
        if not known(e):
            return out  # the order waits for it
        if not had_bye(e):
            continue
        r = next((r for r in candidates if not (known(r) and had_bye(r))), None)
        if r is None:  # everyone who could take the empty place has had a bye
            out[e] = e
        elif not known(r):
            return out  # the order waits for it
        else:
            out[e], out[r] = r, e
    out |= {m: m for m in real if m not in out and known(m)}
    return out


def withdrawn_walkover(plan: Plan, m: MatchState) -> MatchState:
    """A ready match one of whose players has withdrawn: lost by them by walkover, decided when
    both its players were known and the player had withdrawn (whichever came later)."""
    if m.status != "ready" or m.players is None or not plan.withdrawn:
        return m
    a, b = m.players
    gone_a, gone_b = plan.withdrawn.get(a), plan.withdrawn.get(b)
    if gone_a is None and gone_b is None:
        return m
    a_wins = gone_a is None or gone_b is not None  # both gone: side a goes on (to lose the next one)
    race = m.spec.race_to
    rules = plan.rules
    score_a, score_b = (race, rules.start_score(b)) if a_wins else (rules.start_score(a), race)
    at = max(t for t in (m.ready_at, gone_a, gone_b) if t is not None)
    result = Result(m.id, a, b, score_a, score_b, at, walkover=True)
    return MatchState(m.spec, a, b, "done", result.winner, result.loser, m.ready_at, at, result)


def decide(spec: MatchSpec, a: Player, b: Player, ta: datetime | None, tb: datetime | None, result: Result | None) -> MatchState:
    """One match's state from its two players and its stored result."""
    if a is BYE and b is BYE:
        at = max(ta, tb) if ta and tb else None
        return MatchState(spec, a, b, "void", BYE, BYE, at, at, None)
    if a is BYE or b is BYE:
        other, t = (b, tb) if a is BYE else (a, ta)
        if other is None:
            return MatchState(spec, a, b, "waiting", None, None, None, None, None)
        return MatchState(spec, a, b, "bye", other, BYE, t, t, None)
    if not isinstance(a, int) or not isinstance(b, int):
        return MatchState(spec, a, b, "waiting", None, None, None, None, None)
    ready_at = max(t for t in (ta, tb) if t is not None) if (ta or tb) else None
    if result is None:
        return MatchState(spec, a, b, "ready", None, None, ready_at, None, None)
    if {result.a, result.b} != {a, b}:
        return MatchState(spec, a, b, "ready", None, None, ready_at, None, None, stale=result)
    return MatchState(spec, a, b, "done", result.winner, result.loser, ready_at, result.finished_at, result)


def _champion(rules: Rules, states: Sequence[MatchState], r: _Resolver) -> int | None:
    if not states:
        return None
    last = states[-1]
    if rules.format == "double" and last.spec.phase == "reset" and last.status == "void":
        last = states[-2]
    if rules.format == "groups" and not any(s.spec.phase == "knockout" for s in states):
        # One group whose one best is the winner: the group's first once it is over.
        only = next(iter(r.groups))
        winner, _ = r.who(Placed(only, 1))
        return winner if isinstance(winner, int) else None
    return last.winner if last.status in ("done", "bye") and isinstance(last.winner, int) else None


def _swiss(plan: Plan, results: Mapping[str, Result]) -> Progress:
    """Swiss rounds, each paired when the one before is over."""
    rules = plan.rules
    total = rounds_for(len(plan.draw), rules.swiss_rounds)
    states: list[MatchState] = []
    met: set[frozenset[int]] = set()
    byes: dict[int, int] = {}
    games: list[tuple[int, int, int, int]] = []
    order = list(plan.draw)
    at = plan.start
    for rnd in range(1, total + 1):
        pairs, bye = pair_round(order, met, set(byes), first=rnd == 1)
        specs = [
            MatchSpec(f"S{rnd}-{i}", "swiss", rnd, i, Seat(a), Seat(b), rules.races.winners, len(states) + i - 1)
            for i, (a, b) in enumerate(pairs, start=1)
        ]
        if bye is not None:
            specs.append(
                MatchSpec(
                    f"S{rnd}-{len(pairs) + 1}",
                    "swiss",
                    rnd,
                    len(pairs) + 1,
                    Seat(bye),
                    Bye(),
                    rules.races.winners,
                    len(states) + len(pairs),
                )
            )
            byes[bye] = byes.get(bye, 0) + 1
        round_states = [withdrawn_walkover(plan, decide(s, *_seats(s), at, at, results.get(s.id))) for s in specs]
        states.extend(round_states)
        if any(m.status != "done" for m in round_states if m.status != "bye"):
            return Progress(plan, tuple(states), swiss_rounds=total)
        for m in round_states:
            if m.status == "done" and m.players and m.result:
                a, b = m.players
                met.add(frozenset((a, b)))
                games.append((a, b, *m.result.scores_for(a)))
        at = max((m.decided_at for m in round_states if m.decided_at), default=at)
        order = [s.entrant for s in swiss_standings(plan.draw, games, byes)]
    return Progress(plan, tuple(states), champion=order[0], swiss_rounds=total)


def _seats(spec: MatchSpec) -> tuple[Player, Player]:
    a = spec.a.entrant if isinstance(spec.a, Seat) else BYE
    b = spec.b.entrant if isinstance(spec.b, Seat) else BYE
    return a, b


def swiss_table(p: Progress) -> list[tuple[int, int, int]]:
    """A Swiss tournament's standings so far: (entrant, points, Buchholz), best first."""
    games: list[tuple[int, int, int, int]] = []
    byes: dict[int, int] = {}
    for m in p.matches:
        if m.status == "done" and m.players and m.result:
            games.append((m.players[0], m.players[1], *m.result.scores_for(m.players[0])))
        elif m.status == "bye" and isinstance(m.winner, int):
            byes[m.winner] = byes.get(m.winner, 0) + 1
    return [(s.entrant, s.points, s.buchholz) for s in swiss_standings(p.plan.draw, games, byes)]


def check_result(rules: Rules, match: MatchState, score_a: int, score_b: int, at: datetime, *, walkover: bool = False) -> Result:
    """A result for `match` as entered (scores in the match's a/b order), or a refusal a person
    can act on: the race is to `race_to`, exactly one side reaches it, nobody below their start."""
    players = match.players
    if players is None or match.status not in ("ready", "done"):
        raise TournamentRefused(N_("Match %(match)s cannot take a result yet: its players are not known."), match=match.id)
    a, b = players
    race = match.spec.race_to
    if score_a == score_b or max(score_a, score_b) != race:
        raise TournamentRefused(N_("The race is to %(race)d: exactly one player reaches it."), race=race)
    if walkover:
        # The player who came gets the race; the other keeps their start (rule 1.7).
        a_won = score_a > score_b
        return Result(match.id, a, b, race if a_won else rules.start_score(a), rules.start_score(b) if a_won else race, at, walkover=True)
    for player, score in ((a, score_a), (b, score_b)):
        if score < rules.start_score(player):
            raise TournamentRefused(N_("A score cannot be below the player's start (handicap %(start)d)."), start=rules.start_score(player))
    return Result(match.id, a, b, score_a, score_b, at)


def affected_by(plan: Plan, results: Mapping[str, Result], change: Result | str, started: Iterable[str] = ()) -> list[str]:
    """The later matches whose players a changed result (or a removed one, by match id) would
    change and that have started (`started`: called to a table and begun) or finished: a
    correction must reset them."""
    new = dict(results)
    if isinstance(change, Result):
        new[change.match] = change
        target = change.match
    else:
        new.pop(change, None)
        target = change
    before = progress(plan, results).by_id
    after = progress(plan, new).by_id
    begun = set(started)
    hit: list[str] = []
    for mid, old in before.items():
        if mid == target:
            continue
        now = after.get(mid)
        moved = now is None or (now.a, now.b) != (old.a, old.b) or (now.status == "void") != (old.status == "void")
        if moved and (old.status == "done" or mid in begun):
            hit.append(mid)
    order = {m: before[m].spec.order for m in hit}
    return sorted(hit, key=order.__getitem__)
