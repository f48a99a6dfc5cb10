"""The tournament's pure rules (broker.domain.tournaments): brackets, byes, the losers' side, the
draw, corrections, standings and payouts, for every format and 2-64 entrants."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from broker.domain.tournaments.bracket import Bye, Seat, seed_order
from broker.domain.tournaments.draw import make_draw
from broker.domain.tournaments.pace import expected_finish
from broker.domain.tournaments.progress import BYE, Plan, Progress, Result, affected_by, check_result, progress
from broker.domain.tournaments.rules import FORMATS, Format, Races, Rules, TournamentRefused
from broker.domain.tournaments.standings import payouts, season_points, standings
from tests.support.examples import few

T0 = datetime(2026, 12, 6, 13, 0, tzinfo=UTC)


def plan(fmt: str, n: int, *, reset: bool = True, races: Races = Races(5, 4, 7), **kw: Any) -> Plan:
    return Plan(Rules(format=cast(Format, fmt), races=races, grand_final_reset=reset, **kw), tuple(range(1, n + 1)), T0)


def play_out(p: Plan, rng: random.Random, *, a_wins: bool | None = None) -> tuple[Progress, dict[str, Result]]:
    """Play every ready match, wave after wave (tables in parallel), until the tournament is over;
    fails if a match waits forever (nothing ready, not over) or it takes more waves than matches."""
    results: dict[str, Result] = {}
    for wave in range(1, 300):
        now = progress(p, results)
        if now.finished:
            return now, results
        ready = now.ready()
        assert ready, f"nothing to play and not over: {[(m.id, m.status) for m in now.matches if m.status != 'done']}"
        for m in ready:
            race = m.spec.race_to
            win_a = rng.random() < 0.5 if a_wins is None else a_wins
            sa, sb = (race, rng.randrange(race)) if win_a else (rng.randrange(race), race)
            results[m.id] = check_result(p.rules, m, sa, sb, T0 + timedelta(minutes=wave))
    raise AssertionError("the tournament never ended")


# Each example plays a whole tournament: no per-example deadline (a 64-player Swiss takes ~0.1 s).
@settings(deadline=None)
@given(fmt=st.sampled_from(FORMATS), n=st.integers(2, 64), seed=st.integers(0, 10_000))
def test_every_format_ends_with_one_winner_and_everyone_placed(fmt: str, n: int, seed: int) -> None:
    p = plan(fmt, n)
    done, _ = play_out(p, random.Random(seed))
    places = standings(done)
    placed = [e for place in places for e in place.entrants]
    assert sorted(placed) == list(range(1, n + 1)), "every entrant has exactly one place"
    assert places[0].entrants == (done.champion,) and places[0].first == places[0].last == 1
    assert [pl.first for pl in places] == sorted(pl.first for pl in places)
    assert places[-1].last == n
    assert all(m.status != "ready" and m.status != "waiting" for m in done.matches), "no match is left waiting"


@settings(deadline=None)
@given(fmt=st.sampled_from(("single", "double")), n=st.integers(2, 64), seed=st.integers(0, 10_000))
def test_in_elimination_everyone_plays_until_out_and_the_winner_never_loses_out(fmt: str, n: int, seed: int) -> None:
    done, _ = play_out(plan(fmt, n), random.Random(seed))
    losses: dict[int, int] = {}
    for m in done.matches:
        if m.status == "done" and isinstance(m.loser, int):
            losses[m.loser] = losses.get(m.loser, 0) + 1
    allowed = 1 if fmt == "single" else 2
    for entrant in range(1, n + 1):
        if entrant == done.champion:
            assert losses.get(entrant, 0) <= allowed - 1, "the champion lost out"
        else:
            assert losses.get(entrant, 0) == allowed, f"{entrant} out after {losses.get(entrant, 0)} losses"


def test_32_double_elimination_has_62_matches_and_the_reset_only_when_the_losers_side_wins() -> None:
    # The winners' side's champion wins the first final: 62 matches, the reset is not played.
    done, _ = play_out(plan("double", 32), random.Random(1), a_wins=True)
    assert len([m for m in done.matches if m.status == "done"]) == 62
    assert done.by_id["GF2"].status == "void"
    # The losers' side wins the first final: the reset is played, 63 in all.
    rng = random.Random(2)
    p = plan("double", 32)
    results: dict[str, Result] = {}
    while not (now := progress(p, results)).finished:
        m = now.ready()[0]
        win_a = m.id != "GF"  # side b of the grand final is the losers' side's champion
        race = m.spec.race_to
        sa, sb = (race, rng.randrange(race)) if win_a else (rng.randrange(race), race)
        results[m.id] = check_result(p.rules, m, sa, sb, T0)
    assert len([m for m in now.matches if m.status == "done"]) == 63
    assert now.champion == now.by_id["GF2"].winner
    # Without a reset in the rules the first final decides.
    done, _ = play_out(plan("double", 32, reset=False), random.Random(3))
    assert len([m for m in done.matches if m.status == "done"]) == 62 and "GF2" not in done.by_id


def test_27_players_byes_never_meet_a_bye_and_nothing_waits_on_one() -> None:
    p = plan("double", 27)
    start = progress(p, {})
    first = [m for m in start.matches if m.spec.phase == "winners" and m.spec.round == 1]
    assert len(first) == 16 and sum(isinstance(m.spec.a, Bye) or isinstance(m.spec.b, Bye) for m in first) == 5
    assert not any(isinstance(m.spec.a, Bye) and isinstance(m.spec.b, Bye) for m in first)
    # A bye's player goes through at once: its match is decided before anything is played.
    for m in first:
        if m.status == "bye":
            assert isinstance(m.winner, int) and m.decided_at == T0
    # Nothing waits only on a bye: every waiting match has a feed that is a real, unplayed match.
    rng = random.Random(4)
    results: dict[str, Result] = {}
    while not (now := progress(p, results)).finished:
        for m in now.matches:
            if m.status == "waiting":
                assert BYE not in (m.a, m.b) or None in (m.a, m.b)
        m = now.ready()[0]
        race = m.spec.race_to
        sa, sb = (race, rng.randrange(race)) if rng.random() < 0.5 else (rng.randrange(race), race)
        results[m.id] = check_result(p.rules, m, sa, sb, T0)


@settings(deadline=None)
@given(n=st.integers(8, 64), seed=st.integers(0, 10_000))
def test_no_rematch_in_the_first_losers_rounds(n: int, seed: int) -> None:
    done, _ = play_out(plan("double", n), random.Random(seed))
    met_in_winners_round_1: set[frozenset[int]] = set()
    for m in done.matches:
        if m.spec.phase == "winners" and m.players:
            met_in_winners_round_1.add(frozenset(m.players))
    for m in done.matches:
        if m.spec.phase == "losers" and m.spec.round <= 2 and m.players:
            assert frozenset(m.players) not in met_in_winners_round_1, f"{m.id} is a rematch"


def test_the_standard_seeding_keeps_the_top_seeds_apart() -> None:
    assert seed_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    start = progress(plan("single", 6), {})
    assert [(m.spec.a, m.spec.b) for m in start.matches if m.spec.round == 1] == [
        (Seat(1), Bye()),
        (Seat(4), Seat(5)),
        (Seat(2), Bye()),
        (Seat(3), Seat(6)),
    ]


def test_the_draw_is_repeatable_and_ignores_the_order_entrants_come_in() -> None:
    entrants = [14, 3, 27, 8, 9, 1]
    assert make_draw(entrants, 7) == make_draw(list(reversed(entrants)), 7)
    assert make_draw(entrants, 7) != make_draw(entrants, 8)
    seeded = make_draw(entrants, 7, ratings={27: 50, 3: 40})
    assert seeded[:2] == (27, 3)


def test_a_corrected_first_round_result_moves_winner_and_loser_and_names_the_started_matches() -> None:
    p = plan("double", 8)
    rng = random.Random(5)
    results: dict[str, Result] = {}
    # Play the winners' first round and the second round's first match.
    for mid in ("W1-1", "W1-2", "W1-3", "W1-4", "W2-1"):
        m = progress(p, results).by_id[mid]
        results[mid] = check_result(p.rules, m, 5, rng.randrange(5), T0)
    now = progress(p, results)
    w11 = now.by_id["W1-1"]
    assert w11.players is not None
    old_winner, old_loser = w11.winner, w11.loser
    assert old_winner in (now.by_id["W2-1"].a, now.by_id["W2-1"].b)
    # The correction of W1-1 changes who played W2-1 (finished) and L1-1 (started at a table).
    fixed = check_result(p.rules, w11, 2, 5, T0)
    assert affected_by(p, results, fixed, started={"L1-1"}) == ["W2-1", "L1-1"]
    assert affected_by(p, results, fixed) == ["W2-1"]
    # Forced: the affected result is reset; the corrected winner now stands in W2-1.
    corrected = {k: v for k, v in results.items() if k != "W2-1"} | {"W1-1": fixed}
    after = progress(p, corrected)
    assert after.by_id["W2-1"].status == "ready" and old_loser in (after.by_id["W2-1"].a, after.by_id["W2-1"].b)
    assert old_winner in (after.by_id["L1-1"].a, after.by_id["L1-1"].b)
    # Kept instead, the stale result no longer counts for other players.
    stale = progress(p, results | {"W1-1": fixed}).by_id["W2-1"]
    assert stale.status == "ready" and stale.stale == results["W2-1"]


def test_results_are_checked_against_the_race_and_the_handicap() -> None:
    rules = Rules(format="single", races=Races(5, 5, 5), handicap={2: 2})
    p = Plan(rules, (1, 2), T0)
    m = progress(p, {}).by_id["W1-1"]
    for sa, sb in ((5, 5), (4, 3), (6, 2), (5, 1)):
        with pytest.raises(TournamentRefused):
            check_result(rules, m, sa, sb, T0)
    assert check_result(rules, m, 3, 5, T0).winner == 2
    walkover = check_result(rules, m, 0, 5, T0, walkover=True)
    assert (walkover.score_a, walkover.score_b, walkover.walkover) == (0, 5, True)
    with pytest.raises(TournamentRefused):
        Rules(format="single", races=Races(5, 5, 5), handicap={2: 5})


def test_groups_are_snake_seeded_and_their_best_go_on_crossed() -> None:
    p = plan("groups", 8, group_size=4, advance=2)
    start = progress(p, {})
    assert start.groups == {"A": (1, 4, 5, 8), "B": (2, 3, 6, 7)}
    assert len([m for m in start.matches if m.spec.phase == "group"]) == 12
    done, _ = play_out(p, random.Random(6))
    semi = [m for m in done.matches if m.spec.phase == "knockout" and m.spec.round == 1]
    groups = {e: g for g, members in done.groups.items() for e in members}
    for m in semi:
        assert m.players and groups[m.players[0]] != groups[m.players[1]], "a group's winner meets the other group's runner-up"


def test_swiss_pairs_equal_scores_without_rematches() -> None:
    p = plan("swiss", 16)
    done, _ = play_out(p, random.Random(7))
    assert done.swiss_rounds == 4
    pairs = [frozenset(m.players) for m in done.matches if m.players]
    assert len(pairs) == len(set(pairs)) == 32
    odd, _ = play_out(plan("swiss", 7), random.Random(8))
    byes = [m.winner for m in odd.matches if m.status == "bye"]
    assert len(byes) == 3 and len(set(byes)) == 3, "a different player sits out each round"


@settings(deadline=None)
@given(
    n=st.integers(2, 64),
    pot=st.integers(0, 100_000),
    shares=st.lists(st.integers(0, 100), min_size=1, max_size=8).filter(any),
    seed=st.integers(0, 1000),
)
def test_payouts_sum_to_the_pot_to_the_cent(n: int, pot: int, shares: list[int], seed: int) -> None:
    done, _ = play_out(plan("double", n), random.Random(seed))
    places = standings(done)
    if not any(shares[: len(places)]) and pot:
        with pytest.raises(TournamentRefused):
            payouts(places, pot, shares)
        return
    paid = payouts(places, pot, shares)
    assert sum(paid.values()) == pot
    assert all(v >= 0 for v in paid.values())


def test_shared_places_share_their_money_and_their_points() -> None:
    done, _ = play_out(plan("single", 8), random.Random(9))
    places = standings(done)
    third = next(pl for pl in places if pl.first == 3)
    assert (third.last, len(third.entrants)) == (4, 2)
    paid = payouts(places, 10_001, [50, 30, 20])
    assert paid[done.champion or 0] == 5001 and sorted(paid[e] for e in third.entrants) == [1000, 1000]
    points = season_points(places, {1: 25, 2: 18, 3: 15, 5: 12})
    assert [points[e] for e in third.entrants] == [15, 15]
    assert all(points[e] == 12 for pl in places if pl.first == 5 for e in pl.entrants)


def test_the_expected_finish_follows_the_pace_and_the_tables() -> None:
    p = plan("single", 8, races=Races(3, 3, 3))
    start = progress(p, {})
    one_table = expected_finish(start, T0, 1, {})
    four_tables = expected_finish(start, T0, 4, {})
    assert one_table is not None and four_tables is not None and four_tables < one_table
    done, _ = play_out(p, random.Random(10))
    assert expected_finish(done, T0, 4, {}) is None


def test_rounds_are_named_and_say_where_winner_and_loser_go() -> None:
    from broker.domain.tournaments.labels import next_matches, round_label

    single = [m.spec for m in progress(plan("single", 8), {}).matches]
    assert [round_label(s, single)[0] for s in single if s.index == 1] == ["Quarter-final", "Semi-final", "Final"]
    double = [m.spec for m in progress(plan("double", 8), {}).matches]
    names = {s.id: round_label(s, double) for s in double}
    assert names["W1-1"] == ("Winners' round %(n)d", {"n": 1}) and names["W3-1"] == ("Winners' final", {})
    assert names["L4-1"] == ("Losers' final", {}) and names["GF"] == ("Grand final", {}) and names["GF2"] == ("Grand final reset", {})
    nxt = next_matches(double)
    assert nxt["W1-1"] == ("W2-1", "L1-1") and nxt["W2-1"][1] in {"L2-1", "L2-2"} and nxt["GF"] == ("GF2", "GF2")


def test_a_champion_from_the_losers_side_is_placed_once() -> None:
    # 3 entrants: seed 1's bye, 2 loses the first round to 3, then wins the losers' side and both
    # grand finals. Only the first of a losers' first-round match's two feeds counted as "plays on",
    # so 2 was also placed 4th for the first-round loss.
    p = plan("double", 3)
    results: dict[str, Result] = {}
    for mid, sa, sb in (("W1-2", 1, 5), ("W2-1", 5, 1), ("L2-1", 4, 1), ("GF", 1, 7), ("GF2", 1, 7)):
        m = progress(p, results).by_id[mid]
        results[mid] = check_result(p.rules, m, sa, sb, T0)
    done = progress(p, results)
    assert done.champion == 2
    assert [(pl.first, pl.entrants) for pl in standings(done)] == [(1, (2,)), (2, (1,)), (3, (3,))]


def byes_of(p: Progress) -> dict[int, list[str]]:
    """Who went through which bye matches."""
    out: dict[int, list[str]] = {}
    for m in p.matches:
        if m.status == "bye" and isinstance(m.winner, int):
            out.setdefault(m.winner, []).append(m.id)
    return out


def test_the_losers_bye_goes_to_a_player_who_has_had_none_where_the_bracket_allows() -> None:
    """Issue 29, item 26. 11 entrants: 16 places, seeds 1-5 have first-round byes. Seed 2 (a bye)
    loses W2-3, whose loser drops to an empty place (both its losers' first-round feeders were
    byes); seed 3 wins W2-4, whose loser (6, no bye) drops to a real one: they change places, so
    the losers' bye goes to 6 and seed 2 plays."""
    p = plan("double", 11, races=Races(3, 3, 3))
    results: dict[str, Result] = {}
    for mid, sa, sb in (("W1-2", 3, 0), ("W1-6", 3, 0), ("W1-8", 3, 0), ("W2-3", 0, 3), ("W2-4", 3, 0)):
        results[mid] = check_result(p.rules, progress(p, results).by_id[mid], sa, sb, T0)
    now = progress(p, results)
    assert (now.by_id["W2-3"].loser, now.by_id["W2-4"].loser) == (2, 6)
    assert now.by_id["L2-2"].status == "bye" and now.by_id["L2-2"].winner == 6, "the bye goes to the one without one"
    assert 2 in (now.by_id["L2-1"].a, now.by_id["L2-1"].b), "seed 2 (had a bye) plays"
    assert not [e for e, byes in byes_of(now).items() if len(byes) > 1]
    # Where every player who could take the empty place has had a bye, a second one is unavoidable:
    # 5 entrants, seeds 1-3 have byes and the loser of 4-5 a losers' bye; seed 1 loses W2-1.
    p5 = plan("double", 5, races=Races(3, 3, 3))
    results = {}
    for mid, sa, sb in (("W1-2", 3, 0), ("W2-1", 0, 3), ("W2-2", 3, 0)):
        results[mid] = check_result(p5.rules, progress(p5, results).by_id[mid], sa, sb, T0)
    assert byes_of(progress(p5, results))[1] == ["W1-1", "L2-2"]


def test_the_losers_bye_rule_holds_over_the_whole_drop_not_only_a_pair() -> None:
    """Issue 29, item 26 (the tester's i26b_targeted.py): 11 entrants, races to 2, seeds 1-5 have
    first-round byes. Seed 8 (no bye) loses W2-1 and drops to a real place; seed 2 (a bye) loses
    W2-3, whose loser drops to the empty place; seed 3 (a bye) loses W2-4, the place the pairwise
    rule paired with the empty one. All four winners' results are in before any losers' match:
    seed 8 takes the empty place (his first bye), seed 2 plays. Places the rule cannot change
    never wait for it, and a place once decided stays."""
    p = plan("double", 11, races=Races(2, 2, 2))
    results: dict[str, Result] = {}

    def enter(mid: str, a_wins: bool) -> Progress:
        m = progress(p, results).by_id[mid]
        results[mid] = check_result(p.rules, m, 2 if a_wins else 0, 0 if a_wins else 2, T0 + timedelta(minutes=len(results)))
        return progress(p, results)

    for w1 in ("W1-2", "W1-6", "W1-8"):  # the first-named wins: 8, 7 and 6 go on
        enter(w1, True)
    now = enter("W2-4", False)  # 6 beats seed 3 (a bye): 3 drops to a real place and can only keep it
    assert now.by_id["W2-4"].loser == 3 and 3 in (now.by_id["L2-1"].a, now.by_id["L2-1"].b), "decided at once"
    now = enter("W2-2", True)  # seed 4 beats seed 5: both had byes, a place the rule never touches
    assert now.by_id["L2-3"].status == "ready" and 5 in (now.by_id["L2-3"].a, now.by_id["L2-3"].b)
    now = enter("W2-3", False)  # 7 beats seed 2 (a bye), who drops to the empty place
    assert now.by_id["L2-2"].status == "waiting", "the empty place waits for W2-1, the one that may bring a player without a bye"
    now = enter("W2-1", True)  # seed 1 beats 8 (no bye)
    assert now.by_id["L2-2"].status == "bye" and now.by_id["L2-2"].winner == 8, "the bye goes to the one without one"
    assert 2 in (now.by_id["L2-4"].a, now.by_id["L2-4"].b), "seed 2 (had a bye) plays"
    assert not [e for e, byes in byes_of(now).items() if len(byes) > 1]
    assert now.by_id["W2-1"].id in {m.id for m in now.matches} and feed_of(now, "L2-2").startswith("Loser of no. ")


def feed_of(p: Progress, mid: str) -> str:
    from broker.domain.tournaments.labels import feed_label, match_numbers

    label = feed_label(p.by_id[mid].spec.b, p.by_id, match_numbers(p.matches), {})
    assert label is not None
    return label[0] % label[1]


@settings(deadline=None, max_examples=few(20))
@given(n=st.integers(5, 64), seed=st.integers(0, 10_000))
@example(n=11, seed=26)  # brackets the pairwise rule got wrong (about 1 in 13 random ones)
@example(n=22, seed=2)
def test_a_second_bye_goes_to_a_player_only_when_no_player_without_one_could_take_it(n: int, seed: int) -> None:
    """Over the first drop (the only one that can meet an empty place): a winners' second-round
    loser who had a bye ends in an empty place only if every such loser in a real place had one too;
    and what the rule decided on the results known then never changes as more come in."""
    p = plan("double", n)
    done, results = play_out(p, random.Random(seed))
    had_bye = {m.winner for m in done.matches if m.status == "bye" and m.spec.phase == "winners"}
    dropped = {m.loser for m in done.matches if m.spec.phase == "winners" and m.spec.round == 2}
    second = [m.id for m in done.matches if m.spec.phase == "losers" and m.status == "bye" and m.winner in had_bye & dropped]
    without = [m.id for m in done.matches if m.spec.phase == "losers" and m.status == "done" and {m.a, m.b} & (dropped - had_bye)]
    first_drop = [m.id for m in done.matches if m.spec.phase == "losers" and m.spec.round == 2]
    assert not (second and set(without) & set(first_drop)), f"second byes in {second} while {without} holds a player without one"
    order = sorted(results, key=lambda mid: results[mid].finished_at)
    for k in range(len(order)):
        then = progress(p, {mid: results[mid] for mid in order[:k]}).by_id
        for mid in first_drop:
            for side in ("a", "b"):
                known = getattr(then[mid], side)
                assert not isinstance(known, int) or known == getattr(done.by_id[mid], side), f"{mid} changed after it was decided"
        if all(then[mid].status != "waiting" for mid in first_drop):
            break  # the whole drop is placed
