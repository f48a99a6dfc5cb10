"""The player model: a seeded evening whose drops, racks and incidents look like a real one."""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from broker.domain.venue import load_venue
from sim.players import (
    GOAL_GAP_S,
    PULSE_MS,
    RACK_BALLS,
    SCRIPTED_BY_MIN,
    SHOT_S,
    Action,
    Card,
    Do,
    Table,
    plan_evening,
)

VENUE = Path(__file__).resolve().parents[2] / "deploy" / "venues" / "lavos.toml"
TABLES = [Table(t.id, t.kind.value, t.club_card) for t in load_venue(VENUE).tables]
CARDS = [Card("04a3f1c2", "Bača Lubo", True), Card("04b71e90", "Ceman Peter", True), Card("04e05f33", "Richter Martin", False)]
SPEEDS = (1, 10, 20, 60)
STUCK_AFTER_S = 3.0


def plan(seed: int = 7, speed: float = 20, **kw: Any) -> list[Action]:
    return plan_evening(TABLES, CARDS, seed=seed, speed=speed, stuck_after_s=STUCK_AFTER_S, **kw)


def sessions(actions: list[Action]) -> dict[int, tuple[Action, float]]:
    """party -> (start action, end time: its stop, or when its prepaid time runs out)."""
    starts = {a.party: a for a in actions if a.do is Do.START}
    stops = {a.party: a.at for a in actions if a.do is Do.STOP}
    return {p: (s, stops.get(p, s.at + (s.minutes or 0) * 60)) for p, s in starts.items()}


def _game(a: Action) -> str:
    """The game of a drop (the planner gives every drop its session's game)."""
    assert a.game is not None, f"{a} has no game"
    return a.game


def _uid(a: Action) -> str:
    """The card of a tap."""
    assert a.uid is not None, f"{a} has no card"
    return a.uid


def test_same_seed_same_evening_and_another_seed_another() -> None:
    assert plan(3) == plan(3)
    assert plan(3) != plan(4)


def test_actions_are_in_time_order_within_the_evening() -> None:
    actions = plan(minutes=480)
    assert [a.at for a in actions] == sorted(a.at for a in actions)
    assert actions[0].at >= 0 and actions[-1].at <= 480 * 60


@pytest.mark.parametrize("seed", range(8))
def test_racks_hold_15_or_9_balls_and_one_game_per_session(seed: Any) -> None:
    racks: dict[tuple[int, int | None], int] = defaultdict(int)
    games: dict[int, set[str]] = defaultdict(set)
    for a in plan(seed):
        if a.do is Do.DROP:
            racks[(a.party, a.rack)] += 1
            games[a.party].add(_game(a))
    assert racks, "nobody dropped a ball all evening"
    for (party, _rack), drops in racks.items():
        (game,) = games[party]
        assert drops <= RACK_BALLS[game], f"{drops} drops in one {game} rack"
        if game == "14-1":
            assert drops <= 14, "14/1 re-racks when 14 balls have dropped"


def test_both_rack_sizes_occur_over_a_few_evenings() -> None:
    sizes = {RACK_BALLS[_game(a)] for seed in range(5) for a in plan(seed) if a.do is Do.DROP}
    assert sizes == {15, 9}


@pytest.mark.parametrize("seed", range(5))
def test_balls_drop_at_human_rates_and_only_during_sessions(seed: Any) -> None:
    actions = plan(seed)
    spans = sessions(actions)
    drops: dict[int, list[Action]] = defaultdict(list)
    for a in actions:
        if a.do is Do.DROP:
            drops[a.party].append(a)
            start, end = spans[a.party]
            assert start.table == a.table and start.at < a.at < end, "a ball dropped outside its session"
            assert a.pocket is not None and a.pulse_ms is not None
            assert 0 <= a.pocket < 6 and PULSE_MS[0] <= a.pulse_ms <= PULSE_MS[1]
    for party, ds in drops.items():
        gaps = [b.at - a.at for a, b in itertools.pairwise(ds)]
        assert all(g >= SHOT_S[0] for g in gaps), "two drops faster than one shot"
        start, end = spans[party]
        hours = (end - start.at) / 3600
        if hours >= 0.75:  # long enough for a rate to mean something
            assert 15 <= len(ds) / hours <= 150, f"{len(ds) / hours:.0f} drops an hour"


@pytest.mark.parametrize("seed", range(5))
def test_sessions_never_overlap_on_a_table_and_end_before_closing(seed: Any) -> None:
    by_table: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for start, end in sessions(plan(seed, minutes=480)).values():
        assert end <= 480 * 60
        by_table[start.table].append((start.at, end))
    for spans in by_table.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_goals_come_at_human_rates() -> None:
    goals: dict[str, list[float]] = defaultdict(list)
    for a in plan():
        if a.do is Do.GOAL:
            goals[a.table].append(a.at)
    assert goals
    for times in goals.values():
        assert all(b - a >= GOAL_GAP_S[0] for a, b in itertools.pairwise(times))


@pytest.mark.parametrize("speed", SPEEDS)
@pytest.mark.parametrize("seed", range(3))
def test_every_scripted_incident_happens_early_at_any_speed(seed: Any, speed: Any) -> None:
    actions = plan(seed, speed)
    by = SCRIPTED_BY_MIN * 60
    early = [a for a in actions if a.at <= by]
    spans = sessions(actions)
    card_paid = {c.uid: c.paid for c in CARDS}

    # Sessions start, and one prepaid session runs out (nobody stops it: the hub does).
    prepaid = [(s, end) for s, end in spans.values() if s.minutes and end <= by]
    assert prepaid and all(not any(a.do is Do.STOP and a.party == s.party for a in actions) for s, _ in prepaid)
    assert sum(a.do is Do.DROP for a in early) >= 10
    assert {RACK_BALLS[_game(a)] for a in early if a.do is Do.DROP} == {15, 9}, "both rack sizes show early"

    # A member checks in at foosball and scores; someone else plays foosball with no card first.
    taps = [a for a in early if a.do is Do.TAP]
    member_tap = next(a for a in taps if card_paid[_uid(a)])
    assert any(a.do is Do.GOAL and a.table == member_tap.table and a.at > member_tap.at for a in early)
    no_card = next(a for a in early if a.do is Do.GOAL and not any(t.table == a.table and t.at < a.at for t in taps))
    assert no_card.table != member_tap.table
    assert any(not card_paid[_uid(a)] for a in taps), "an unpaid card is tapped"

    # A node drops offline during a session (so staff get an alert) and comes back.
    off = next(a for a in early if a.do is Do.OFFLINE)
    on = next(a for a in early if a.do is Do.ONLINE and a.table == off.table)
    assert any(s.table == off.table and s.at < off.at and on.at < end for s, end in spans.values())
    assert not any(a.do is Do.DROP and a.table == off.table and off.at <= a.at <= on.at for a in actions)

    # A beam stays broken past the nodes' real-time stuck threshold, on a table nobody plays on.
    brk = next(a for a in early if a.do is Do.BEAM_BREAK)
    clr = next(a for a in early if a.do is Do.BEAM_CLEAR and a.table == brk.table and a.pocket == brk.pocket)
    assert (clr.at - brk.at) / speed >= STUCK_AFTER_S + 1
    assert not any(s.table == brk.table and s.at < clr.at and end > brk.at for s, end in spans.values())


@pytest.mark.parametrize("seed", range(8))
def test_a_card_is_never_on_two_tables_at_once(seed: Any) -> None:
    # The hub refuses a member's card on a second open session (issue 9, item 19).
    with_card = [(s.uid, s.at, end) for s, end in sessions(plan(seed)).values() if s.uid]
    for i, (uid, start, end) in enumerate(with_card):
        assert not any(u == uid and s < end and start < e for u, s, e in with_card[i + 1 :]), (uid, start, end)
