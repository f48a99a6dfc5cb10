"""A tournament's matches on the hall's tables (issue 29, items 21-23, 27, 28), on the real hub and
API (SQLite and PostgreSQL): a called match's game is the tournament's (staff cannot stop or pause
it, moving it moves the match), nobody is called to two tables across tournaments, a player who
withdraws after the draw loses every later match by walkover at once, and two directors entering
one result are told whose result is there.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from broker.hall.read_models import HallReads
from broker.people.members import AddMember
from broker.storage.models import BookingBlock
from tests.dashboard.conftest import Api, sqlite_only
from tests.support.hub import on_writer
from tests.tournaments.test_tournament_hub import hub_of, make, view


def match(v: dict[str, Any], mid: str) -> dict[str, Any]:
    return next(m for m in v["matches"] if m["id"] == mid)


def on_table(v: dict[str, Any]) -> dict[str, str]:
    return {c["match"]: c["table"] for c in v["on_tables"]}


def test_a_called_matchs_game_is_stopped_only_by_its_result_a_walkover_or_the_directors_recall(api: Api) -> None:
    tid = make(api, 4, tables=2, format="single", race_winners=3, race_final=3)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    hub = hub_of(api)
    game = hub.open["pool-01"].id
    # Staff cannot stop or pause it (the table would go dark with the match called there), nor start
    # a walk-in there; the manager's stop-all at closing leaves it playing.
    for action in ("stop", "pause"):
        detail = api.refused("POST", f"/api/sessions/{game}/{action}", 409, as_manager=False)
        assert "match no. 1 of Lavosliga II" in detail and "takes the match off the table" in detail, detail
    assert api.refused("POST", "/api/sessions", 409, json={"table": "pool-01"})
    stopped = api.ok("POST", "/api/sessions/stop-all", as_manager=True, json={"confirm": True})
    assert (
        stopped["stopped"] == []
        and hub.light_commands()["pool-01"].on
        and on_table(view(api, tid)) == {"W1-1": "pool-01", "W1-2": "pool-02"}
    )
    # The director's recall: the match leaves its table (nothing waits: the light goes off) and waits
    # for a call by hand; the watchdog does not call it back by itself.
    out = api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/recall")
    assert out["match"]["status"] == "ready" and out["match"]["recalled"]
    assert "pool-01" not in hub.open and not hub.light_commands()["pool-01"].on
    hub.watchdog.tick()
    v = view(api, tid)
    assert "W1-1" not in on_table(v) and [m["id"] for m in v["next_up"]] == ["W1-1"]
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/call", json={"table": "pool-01"})
    assert on_table(view(api, tid))["W1-1"] == "pool-01" and hub.light_commands()["pool-01"].on
    # Its result ends it: the final waits for W1-2, so the table goes dark.
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/result", json={"score_a": 3, "score_b": 0})
    assert "pool-01" not in hub.open and not hub.light_commands()["pool-01"].on


@sqlite_only  # (one transaction of the games part's: the storage is the other tests')
def test_moving_a_matchs_game_moves_the_match_and_its_result_frees_the_new_table(api: Api) -> None:
    tid = make(api, 4, tables=2, format="single", race_winners=3, race_final=3)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    hub = hub_of(api)
    game = hub.open["pool-01"].id
    api.ok("POST", f"/api/sessions/{game}/transfer", json={"table": "pool-05"})  # the light on Pool 1 broke
    v = view(api, tid)
    assert on_table(v) == {"W1-1": "pool-05", "W1-2": "pool-02"} and match(v, "W1-1")["table_name"] == "Pool 5"
    card = HallReads(hub).tournaments.tournament_call_on("pool-05")
    assert card is not None and card.match == "W1-1", "the floor card says the match is on Pool 5"
    assert HallReads(hub).tournaments.tournament_call_on("pool-01") is None
    # Nor onto a table that has a match on it (its game is busy there).
    assert "Pool 2 is busy" in api.refused("POST", f"/api/sessions/{game}/transfer", 409, json={"table": "pool-02"})
    # The result ends the game on Pool 5 (not a tournament table, nothing waits for it): dark.
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/result", json={"score_a": 3, "score_b": 1})
    assert "pool-05" not in hub.open and not hub.light_commands()["pool-05"].on
    assert match(view(api, tid), "W1-1")["table"] == "pool-05"


def test_a_player_entered_in_two_running_tournaments_is_never_called_to_two_tables(api: Api) -> None:
    hub = hub_of(api)
    novak = hub.execute(AddMember(name="Novák Peter", actor="boss"))
    common = {"starts_at": api.clock().isoformat(), "format": "single", "free_entry": True}
    first = api.ok("POST", "/api/tournaments", 201, as_manager=True, json={"name": "Lavosliga I", "tables": ["pool-01"], **common})["id"]
    second = api.ok(
        "POST", "/api/tournaments", 201, as_manager=True, json={"name": "Lavosliga II", "tables": ["pool-03", "pool-04"], **common}
    )["id"]
    for tid, others in ((first, ["Kováč"]), (second, ["Horváth", "Varga", "Tóth"])):
        api.ok("POST", f"/api/tournaments/{tid}/entrants", 201, json={"member_id": novak.id, "check_in": True})
        for name in others:
            api.ok("POST", f"/api/tournaments/{tid}/entrants", 201, json={"name": name, "check_in": True})
    api.ok("POST", f"/api/tournaments/{first}/draw")
    assert on_table(view(api, first)) == {"W1-1": "pool-01"}, "Novák plays Kováč on Pool 1"
    api.ok("POST", f"/api/tournaments/{second}/draw")
    v = view(api, second)
    him = next(e["id"] for e in v["entrants"] if e["member_id"] == novak.id)
    mine = next(m["id"] for m in v["matches"] if him in (m["a"], m["b"]))
    assert list(on_table(v)) != [mine] and mine not in on_table(v), "Novák is at Pool 1: his match here waits"
    assert mine not in [m["id"] for m in v["next_up"]]
    free = next(t for t in ("pool-03", "pool-04") if t not in on_table(v).values())
    assert "another table" in api.refused("POST", f"/api/tournaments/{second}/matches/{mine}/call", 409, json={"table": free})
    # His match in the first tournament ends: the watchdog's next round calls the one that waited.
    api.ok("POST", f"/api/tournaments/{first}/matches/W1-1/result", json={"score_a": 5, "score_b": 1})
    hub.watchdog.tick()
    assert on_table(view(api, second))[mine] == free


def test_a_player_withdrawn_after_the_draw_loses_every_later_match_by_walkover_at_once(api: Api) -> None:
    tid = make(api, 4, tables=2, format="double", race_winners=3, race_losers=3, race_final=3)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    hub = hub_of(api)
    v = view(api, tid)
    w11 = match(v, "W1-1")
    gone = w11["a"]
    # Withdrawn while called to a table: the match there is a walkover for the other, the table is free.
    api.ok("DELETE", f"/api/tournaments/{tid}/entrants/{gone}", 204)
    v = view(api, tid)
    w11 = match(v, "W1-1")
    assert (w11["status"], w11["walkover"], w11["winner"]) == ("done", True, w11["b"])
    assert "W1-1" not in on_table(v) and not hub.light_commands()["pool-01"].on, "the winners' final waits for W1-2: dark"
    assert next(e for e in v["entrants"] if e["id"] == gone)["withdrawn_at"]
    # W1-2 ends: the losers' match the withdrawn player dropped to is a walkover at once, never called.
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-2/result", json={"score_a": 3, "score_b": 2})
    v = view(api, tid)
    l11 = match(v, "L1-1")
    assert (l11["status"], l11["walkover"]) == ("done", True) and l11["winner"] != gone
    assert "L1-1" not in on_table(v) and "W2-1" in on_table(v)
    # Twice is once; the end standings place them last.
    api.ok("DELETE", f"/api/tournaments/{tid}/entrants/{gone}", 204)
    for mid in ("W2-1", "L2-1", "GF"):
        m = match(view(api, tid), mid)
        api.ok("POST", f"/api/tournaments/{tid}/matches/{mid}/result", json={"score_a": 3, "score_b": 0})
        assert gone not in (m["a"], m["b"])
    v = view(api, tid)
    assert v["finished_at"] and v["places"][-1]["names"] == [next(e["name"] for e in v["entrants"] if e["id"] == gone)]


@sqlite_only  # (refusals before any write: the storage is the other tests')
def test_a_second_result_without_a_reason_says_whose_result_is_there_and_a_rack_past_the_race_is_refused(api: Api) -> None:
    tid = make(api, 2, tables=1, format="single", race_winners=3, race_final=3)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    here = f"/api/tournaments/{tid}/matches/W1-1"
    for side in "aaba":
        if side == "a" and api.ok("GET", f"/api/tournaments/{tid}")["on_tables"][0]["score_a"] == 3:
            break
        api.ok("POST", f"{here}/rack", json={"side": side})
    assert api.ok("GET", f"/api/tournaments/{tid}")["on_tables"][0]["score_a"] == 3
    # The race is won: another +1 changes nothing, and says so; a rack below the start cannot be taken back.
    detail = api.refused("POST", f"{here}/rack", 409, json={"side": "b"})
    assert "won already (3 : 1)" in detail and "confirm the result" in detail
    assert api.ok("GET", f"/api/tournaments/{tid}")["on_tables"][0]["score_b"] == 1
    api.ok("POST", f"{here}/rack", json={"side": "b", "delta": -1})
    assert "no rack to take back" in api.refused("POST", f"{here}/rack", 409, json={"side": "b", "delta": -1})
    # Jana confirms 3 : 0 at 18:00; the boss, on another tablet, types 3 : 1: told whose result is there.
    api.ok("POST", f"{here}/result", json={"score_a": 3, "score_b": 0})
    detail = api.refused("POST", f"{here}/result", 409, json={"score_a": 3, "score_b": 1})
    assert "already has a result, 3 : 0, entered by jana at 18:00" in detail and "write why" in detail, detail


@sqlite_only  # (the calls' rule; the storage is the other tests')
def test_a_draw_before_the_start_waits_for_it_and_start_now_moves_the_start_and_the_block(api: Api) -> None:
    """Issue 29, item 1 (the tester's Pool 6): a tournament drawn before its start calls nothing to a
    table (no light, no game, not even by hand) until the start, where its tables' block begins;
    at the start the watchdog's round calls the matches. A director who begins earlier starts it
    now: the start and the block move to now (the same length), a booking on its tables moves to a
    free table of its kind as under any block, and the matches are called at once."""
    hub = hub_of(api)
    soon = api.clock() + timedelta(hours=1)
    first = _planned(api, "Večerný turnaj", soon, ["pool-08"])
    api.ok("POST", f"/api/tournaments/{first}/draw")
    assert not view(api, first)["on_tables"] and "pool-08" not in hub.open
    assert view(api, first)["calls_from"] is not None
    hub.watchdog.tick()
    assert not view(api, first)["on_tables"] and "pool-08" not in hub.open
    api.clock.advance(hours=1)  # its start: the round calls the match, the table lights
    hub.watchdog.tick()
    assert on_table(view(api, first)) == {"W1-1": "pool-08"} and hub.light_commands()["pool-08"].on
    assert view(api, first)["calls_from"] is None

    # Pool 6 is booked tonight at 21:00; the Lavosliga starts on Thursday at 16:00 and is drawn now.
    booking = api.ok(
        "POST",
        "/api/bookings",
        201,
        json={"table": "pool-06", "start": "2026-11-10T21:00", "end": "2026-11-10T22:00", "party_size": 2, "name": "Kováč"},
    )["id"]
    thursday = datetime(2026, 11, 12, 15, 0, tzinfo=UTC)  # 16:00 in Bratislava
    tid = _planned(api, "Lavosliga II", thursday, ["pool-06", "pool-07"], players=4)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    v = view(api, tid)
    assert not v["on_tables"] and v["calls_from"] == "2026-11-12T15:00:00Z" and [m["id"] for m in v["next_up"]] == ["W1-1", "W1-2"]
    lit = hub.light_commands()
    assert "pool-06" not in hub.open and not ("pool-06" in lit and lit["pool-06"].on), "no light, no 0 €/h game tonight"
    refused = api.refused("POST", f"/api/tournaments/{tid}/matches/W1-1/call", 409, json={"table": "pool-06"})
    assert "from then on" in refused, refused
    hub.watchdog.tick()
    assert not view(api, tid)["on_tables"]
    # The director begins now: the start and the block move (6 h from now), the booking moves off Pool 6.
    started = api.ok("POST", f"/api/tournaments/{tid}/start-now")
    now = api.clock()
    assert datetime.fromisoformat(started["starts_at"]) == now and started["tournament"]["calls_from"] is None
    assert [m["booking"] for m in started["moved"]] == [booking] and started["to_call"] == []
    moved_to = started["moved"][0]["to_table"]
    assert moved_to not in ("pool-06", "pool-07", "pool-08")
    assert on_table(view(api, tid)) == {"W1-1": "pool-06", "W1-2": "pool-07"} and hub.light_commands()["pool-06"].on
    blocks = on_writer(
        hub,
        lambda db: [
            (b.start_at, b.end_at, b.removed_at is None)
            for b in db.scalars(select(BookingBlock).where(BookingBlock.label == "Lavosliga II").order_by(BookingBlock.id))
        ],
    )
    assert blocks == [(thursday, thursday + timedelta(hours=6), False), (now, now + timedelta(hours=6), True)]
    assert "started already" in api.refused("POST", f"/api/tournaments/{tid}/start-now", 409)


def _planned(api: Api, name: str, at: datetime, tables: list[str], *, players: int = 2) -> int:
    body = {
        "name": name,
        "starts_at": at.isoformat(),
        "format": "single",
        "tables": tables,
        "free_entry": True,
        "race_winners": 3,
        "race_final": 3,
    }
    tid = api.ok("POST", "/api/tournaments", 201, as_manager=True, json=body)["id"]
    for i in range(1, players + 1):
        api.ok("POST", f"/api/tournaments/{tid}/entrants", 201, json={"name": f"{name} {i}", "check_in": True})
    return int(tid)


@sqlite_only
def test_a_late_tap_on_a_won_race_is_told_the_race_is_won(api: Api) -> None:
    """Issue 29, item 28 again: a +1 on a won race tapped on an older score (a second phone) gets
    the same 409 as one without `seen`, never a silent 200; a stale take-back still changes nothing."""
    tid = make(api, 2, tables=1, format="single", race_winners=2, race_final=2)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    rack = f"/api/tournaments/{tid}/matches/W1-1/rack"
    api.ok("POST", rack, json={"side": "a", "seen": [0, 0]})
    assert api.ok("POST", rack, json={"side": "a", "seen": [1, 0]})["score_a"] == 2  # the race is won
    for body in ({"side": "a"}, {"side": "a", "seen": [1, 0]}, {"side": "b", "seen": [1, 0]}):
        assert "is won already (2 : 0)" in api.refused("POST", rack, 409, json=body), body
    assert api.ok("POST", rack, json={"side": "a", "delta": -1, "seen": [1, 0]})["score_a"] == 2, "a stale take-back changes nothing"


@sqlite_only
def test_the_cuescore_file_says_what_the_api_says_a_match_is(api: Api) -> None:
    """Issue 29: the export's `matchstatus` is the API's state ("called" for a match called to its
    table, then "playing"), with CueScore's "finished" for a match over."""
    tid = make(api, 2, tables=1, format="single", race_winners=2, race_final=2)
    api.ok("POST", f"/api/tournaments/{tid}/draw")

    def state() -> tuple[str, str]:
        exported = api.ok("GET", f"/api/tournaments/{tid}/export.json", as_manager=True)["matches"]
        return match(view(api, tid), "W1-1")["status"], next(m for m in exported if m["matchId"] == "W1-1")["matchstatus"]

    assert state() == ("called", "called")
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/start")
    assert state() == ("playing", "playing")
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/result", json={"score_a": 2, "score_b": 0})
    assert state() == ("done", "finished")
