"""The pure rules the hub adds around the bracket (issue 21): which match goes to a free table, when a
called match is forfeited (SBiZ 1.7), what staff call the matches, and the export files' shape."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

from broker.domain.csv_cells import excel_csv
from broker.domain.tournaments.calls import LATE_START, callable_matches, walkover_due
from broker.domain.tournaments.export import CSV_HEADER, ExportNames, csv_rows, cuescore_json
from broker.domain.tournaments.labels import match_numbers
from broker.domain.tournaments.progress import Plan, check_result, progress
from broker.domain.tournaments.rules import Races, Rules

T0 = datetime(2026, 12, 6, 13, 0, tzinfo=UTC)


def test_a_player_in_two_ready_matches_is_called_to_one_table_only() -> None:
    # A round-robin group of four: all six matches are ready at once, but each player plays one at a time.
    p = progress(Plan(Rules(format="groups", races=Races(3, 3, 3), group_size=4, advance=1), (1, 2, 3, 4), T0), {})
    assert len(p.ready()) == 6
    first = callable_matches(p, called=(), busy=())
    assert [m.players for m in first] == [(1, 4), (2, 3)], "two tables' worth: each player once"
    # With 1 and 4 at a table already, only the match of the other two is callable.
    assert [m.players for m in callable_matches(p, called={first[0].id}, busy={1, 4})] == [(2, 3)]


def test_the_walkover_is_due_15_minutes_after_the_call_and_never_once_begun() -> None:
    assert timedelta(minutes=15) == LATE_START
    assert not walkover_due(T0, None, T0 + timedelta(minutes=14, seconds=59))
    assert walkover_due(T0, None, T0 + timedelta(minutes=15))
    assert not walkover_due(T0, T0 + timedelta(minutes=1), T0 + timedelta(hours=1))


def test_matches_are_numbered_without_the_byes_and_the_numbers_stay() -> None:
    plan = Plan(Rules(format="double", races=Races(3, 3, 3)), tuple(range(1, 6)), T0)
    start = progress(plan, {})
    numbers = match_numbers(start.matches)
    assert "W1-1" not in numbers and numbers["W1-2"] == 1, "seed 1's bye is no match; seeds 4 and 5 play no. 1"
    m = start.by_id["W1-2"]
    later = progress(plan, {"W1-2": check_result(plan.rules, m, 3, 1, T0)})
    assert match_numbers(later.matches) == numbers


def test_the_cuescore_file_and_the_csv_name_every_played_match_with_where_its_players_go() -> None:
    plan = Plan(Rules(format="single", races=Races(3, 3, 5)), (11, 12, 13, 14), T0)
    m = progress(plan, {}).by_id["W1-1"]
    results = {"W1-1": check_result(plan.rules, m, 3, 1, T0 + timedelta(minutes=30))}
    p = progress(plan, results)
    names = ExportNames(
        entrants={11: "Novák", 12: "Kováč", 13: "=HYPERLINK(1)", 14: "Tóth"},
        rounds={"W1-1": "Semifinále", "W1-2": "Semifinále", "W2-1": "Finále"},
        tables={"W1-1": ("pool-07", "Pool 7")},
        started={"W1-1": T0},
        states={"W1-1": "done", "W1-2": "called"},
    )
    doc = json.loads(json.dumps(cuescore_json(5, "Lavosliga", "8-ball", T0, p, names)))
    assert [x["matchId"] for x in doc["matches"]] == ["W1-1", "W1-2", "W2-1"]
    first = doc["matches"][0]
    assert first["playerA"] == {"playerId": 11, "name": "Novák"} and first["playerB"]["name"] == "Tóth"
    assert (first["scoreA"], first["scoreB"], first["raceTo"]) == (3, 1, 3)
    assert first["table"] == {"tableId": "pool-07", "name": "Pool 7"} and first["matchstatus"] == "finished"
    assert doc["matches"][1]["matchstatus"] == "called", "the API's state of the match (issue 29)"
    assert (first["winnerNext"], first["loserNext"]) == (3, None) and first["roundName"] == "Semifinále"
    final = doc["matches"][2]
    assert final["playerA"]["name"] == "Novák" and final["playerB"] is None and final["raceTo"] == 5 and final["matchstatus"] == "waiting"
    rows = csv_rows(p, names)  # values: the caller writes them as the Slovak-Excel file
    assert rows[0][:9] == [1, "Semifinále", 3, "Novák", "Tóth", 3, 1, False, "Novák"] and rows[0][10] == T0
    read = list(csv.reader(io.StringIO(excel_csv([list(CSV_HEADER), *rows]).decode("utf-8-sig")), delimiter=";"))
    assert read[0][0] == "Match no." and read[1][:3] == ["1", "Semifinále", "3"]
    assert read[2][4] == "'=HYPERLINK(1)", "a name is never a formula in the spreadsheet"


def test_where_a_player_comes_from_and_goes_next_is_followed_through_the_bye_matches() -> None:
    """Issue 29, items 24 and 25: a 27-player double elimination's bye matches have no number, so
    "Winner of no. 0" stood where the player who had the losers' bye comes from, and the losers of
    the winners' first-round matches next to a bye had no next match (loserNext null)."""
    from broker.domain.tournaments.labels import feed_label, is_played, match_numbers

    plan = Plan(Rules(format="double", races=Races(3, 3, 3)), tuple(range(1, 28)), T0)
    p = progress(plan, {})
    numbers = match_numbers(p.matches)
    labels = [
        feed_label(feed, p.by_id, numbers, {})
        for m in p.matches
        if is_played(m)
        for feed, who in ((m.spec.a, m.a), (m.spec.b, m.b))
        if not isinstance(who, int)
    ]
    assert labels and all(label is not None and all(v for v in label[1].values()) for label in labels), labels
    # W1-1 is seed 1's bye, so L1-1 is a bye: W1-2's loser goes through it to L2-1.
    assert feed_label(p.by_id["L2-1"].spec.a, p.by_id, numbers, {}) == ("Loser of no. %(n)d", {"n": numbers["W1-2"]})
    names = ExportNames(entrants={}, rounds={}, tables={}, started={}, states={})
    doc = cuescore_json(1, "Lavosliga", "8-ball", T0, p, names)
    winners = [m for m in doc["matches"] if m["matchId"].startswith("W")]
    assert all(m["loserNext"] for m in winners), [m["matchId"] for m in winners if not m["loserNext"]]
    assert next(m for m in winners if m["matchId"] == "W1-2")["loserNext"] == numbers["L2-1"]
