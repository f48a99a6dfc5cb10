"""The Lavosliga on the real hub and API (issue 21), on SQLite and PostgreSQL: the draw, the matches
called to the tournament's tables (the light, the tournament's billing), results and a correction,
the walkover after 15 minutes on the hub's clock, the entry fees on the Z report, payouts to the cent.

The rules themselves are tested pure in test_bracket_rules.py; here they meet the storage, the
commands, the tables and the till.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from broker.hall.hub import Hub
from broker.people.members import AddMember, RecordFee
from broker.storage.models import AuditEntry, BookingBlock, Game, Product, Tab
from broker.tournaments.results import RecordResult
from broker.tournaments.state import live_calls, load
from tests.dashboard.conftest import Api, sqlite_only
from tests.support.hub import on_writer

TABLES = [f"pool-{i:02d}" for i in range(1, 11)]


def make(api: Api, players: int, *, tables: int = 10, names: list[str] | None = None, **rules: Any) -> int:
    body = {
        "name": "Lavosliga II",
        "starts_at": api.clock().isoformat(),
        "league_group": "II",
        "discipline": "10-ball",
        "tables": TABLES[:tables],
        "free_entry": True,  # the fees have a test of their own
        **rules,
    }
    t = api.ok("POST", "/api/tournaments", 201, as_manager=True, json=body)
    for name in names or [f"Hráč {i:02d}" for i in range(1, players + 1)]:
        api.ok("POST", f"/api/tournaments/{t['id']}/entrants", 201, json={"name": name, "check_in": True})
    return int(t["id"])


def hub_of(api: Api) -> Hub:
    assert isinstance(api.service, Hub)
    return api.service


def tab_of(api: Api, game: int) -> int:
    tab = on_writer(hub_of(api), lambda db: db.scalar(select(Tab.id).where(Tab.session_id == game)))
    assert tab is not None
    return tab


def view(api: Api, tid: int) -> dict[str, Any]:
    result: dict[str, Any] = api.ok("GET", f"/api/tournaments/{tid}")
    return result


def play(api: Api, tid: int, *, side_a_wins: bool | None = None, seed: int = 1, until: int | None = None) -> int:
    """Enter a result for every match on a table (then any ready one) until the tournament is over,
    each as the match's players and race are now (read from the hub, not the page: it is faster)."""
    rng = random.Random(seed)
    done = 0
    while until is None or done < until:
        now, calls = on_writer(hub_of(api), lambda db: (load(db, tid).progress, [c.match for c in live_calls(db, tid)]))
        assert now is not None
        if now.finished:
            break
        ready = {m.id: m for m in now.ready()}
        waiting = [ready[c] for c in calls if c in ready] or list(ready.values())
        assert waiting, f"nothing to play and not over: {[(m.id, m.status) for m in now.matches if m.status != 'done']}"
        m = waiting[0]
        race = m.spec.race_to
        a_wins = rng.random() < 0.5 if side_a_wins is None else side_a_wins
        sa, sb = (race, rng.randrange(race)) if a_wins else (rng.randrange(race), race)
        hub_of(api).execute(RecordResult(tournament=tid, match=m.id, score_a=sa, score_b=sb, actor="jana"))
        api.clock.advance(minutes=7)
        done += 1
    return done


def test_a_32_player_double_elimination_is_drawn_once_plays_62_matches_on_its_tables_and_lights_them(api: Api) -> None:
    tid = make(api, 32)
    first = api.ok("POST", f"/api/tournaments/{tid}/draw")
    again = api.ok("POST", f"/api/tournaments/{tid}/draw")
    assert first["order"] == again["order"] and sorted(first["order"]) == sorted(e["id"] for e in view(api, tid)["entrants"])
    # The draw calls the longest-waiting matches to all ten tables at once: lit, billed to the tournament.
    v = view(api, tid)
    assert sorted(c["table"] for c in v["on_tables"]) == TABLES
    lights = hub_of(api).light_commands()
    assert all(lights[t].on for t in TABLES)
    assert {hub_of(api).open[t].state.tariff for t in TABLES} == {"tournament"}
    # The winners' first round, then: nobody meets in the losers' first round whom they met before.
    play(api, tid, side_a_wins=True, until=16)
    v = view(api, tid)
    met = {frozenset((m["a"], m["b"])) for m in v["matches"] if m["phase"] == "winners" and m["round"] == 1}
    losers_1 = [m for m in v["matches"] if m["phase"] == "losers" and m["round"] == 1]
    assert len(losers_1) == 8 and all(m["a"] and m["b"] and frozenset((m["a"], m["b"])) not in met for m in losers_1)
    # The winners' side wins the grand final: 62 matches, no reset.
    played = 16 + play(api, tid, side_a_wins=True)
    v = view(api, tid)
    assert played == 62 and len([m for m in v["matches"] if m["status"] == "done"]) == 62
    assert "GF2" not in {m["id"] for m in v["matches"]}, "the reset is not played when the winners' side wins"
    assert v["champion"] and [len(p["names"]) for p in v["places"][:3]] == [1, 1, 1]
    # The last match's table went dark; no game of the tournament is left running.
    assert not v["on_tables"] and not any(t in hub_of(api).open for t in TABLES)
    assert not any(hub_of(api).light_commands()[t].on for t in TABLES)


def test_the_grand_final_reset_is_played_when_the_losers_side_wins(api: Api) -> None:
    tid = make(api, 4, tables=2, format="double")
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    play(api, tid, side_a_wins=True, until=5)  # up to the grand final
    v = view(api, tid)
    gf = v["match"] if "match" in v else next(m for m in v["matches"] if m["id"] == "GF")
    assert gf["status"] in ("called", "ready")
    hub_of(api).execute(RecordResult(tournament=tid, match="GF", score_a=1, score_b=5, actor="jana"))
    v = view(api, tid)
    reset = next(m for m in v["matches"] if m["id"] == "GF2")
    assert reset["status"] == "called" and {reset["a"], reset["b"]} == {gf["a"], gf["b"]}
    play(api, tid, side_a_wins=False)
    v = view(api, tid)
    assert len([m for m in v["matches"] if m["status"] == "done"]) == 7 and v["finished_at"]


def test_27_players_byes_go_through_at_once_and_only_real_matches_are_called(api: Api) -> None:
    tid = make(api, 27)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    v = view(api, tid)
    first = [m for m in v["matches"] if m["phase"] == "winners" and m["round"] == 1]
    assert len(first) == 11, "16 places, 5 of them byes: 11 first-round matches are played"
    assert all(m["a"] and m["b"] for m in first)
    # The five with a bye stand in the second round already; ten first-round matches are on the tables.
    second = [m for m in v["matches"] if m["phase"] == "winners" and m["round"] == 2]
    assert sum(1 for m in second for side in ("a", "b") if m[side]) == 5
    assert sorted(c["match"] for c in v["on_tables"]) == sorted(m["id"] for m in first[:10])
    # Issue 29, items 24-25: the bye matches have no number; where a player comes from and where a
    # loser goes next are named through them (never "Winner of no. 0", never a loser going nowhere).
    froms = [m[side] for m in v["matches"] for side in ("a_from", "b_from") if m[side]]
    assert froms and not [f for f in froms if f.endswith("no. 0")], froms
    assert all(m["loser_next"] for m in v["matches"] if m["phase"] == "winners"), "every winners' loser drops somewhere"
    # (Played out to the end, every format and size from 2 to 64: test_bracket_rules.py.)


def test_a_corrected_first_round_result_asks_before_it_resets_a_later_match_and_moves_the_players(api: Api) -> None:
    tid = make(api, 8, tables=4)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    for match in ("W1-1", "W1-2"):
        api.ok("POST", f"/api/tournaments/{tid}/matches/{match}/result", json={"score_a": 5, "score_b": 2})
    v = view(api, tid)
    w11 = next(m for m in v["matches"] if m["id"] == "W1-1")
    w21 = next(m for m in v["matches"] if m["id"] == "W2-1")
    assert w21["status"] == "called" and w11["a"] in (w21["a"], w21["b"])
    api.ok("POST", f"/api/tournaments/{tid}/matches/W2-1/rack", json={"side": "a"})  # it has begun
    # A correction without a reason, and one that would move a begun match without force: refused.
    detail = api.refused("POST", f"/api/tournaments/{tid}/matches/W1-1/result", 400 + 22, as_manager=False, json={"score_a": 2})
    assert detail
    detail = api.refused(
        "POST", f"/api/tournaments/{tid}/matches/W1-1/result", 409, json={"score_a": 2, "score_b": 5, "reason": "zlý zápis"}
    )
    assert f"no. {w21['number']}" in detail and "force" in detail
    assert (
        api.client.post(
            f"/api/tournaments/{tid}/matches/W1-1/result",
            headers=api.staff,
            json={"score_a": 2, "score_b": 5, "reason": "zlý zápis", "force": True},
        ).status_code
        == 403
    ), "forcing is the manager's"
    out = api.ok(
        "POST",
        f"/api/tournaments/{tid}/matches/W1-1/result",
        as_manager=True,
        json={"score_a": 2, "score_b": 5, "reason": "zlý zápis", "force": True},
    )
    assert out["reset"] == ["W2-1"]
    v = view(api, tid)
    w21 = next(m for m in v["matches"] if m["id"] == "W2-1")
    l11 = next(m for m in v["matches"] if m["id"] == "L1-1")
    assert w11["b"] in (w21["a"], w21["b"]) and w11["a"] not in (w21["a"], w21["b"]), "the corrected winner plays on"
    assert w11["a"] in (l11["a"], l11["b"]), "the corrected loser drops to the losers' side"
    assert w21["status"] == "called" and w21["score_a"] == 0, "the reset match is called again, from 0:0"
    audit = on_writer(hub_of(api), lambda db: db.scalars(select(AuditEntry).where(AuditEntry.action == "tournament.correct")).all())
    assert [(a.actor, a.detail["reset"], a.reason) for a in audit] == [("boss", ["W2-1"], "zlý zápis")]
    # The same result again (a double tap) changes nothing.
    assert api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/result", json={"score_a": 2, "score_b": 5})["reset"] == []
    # The exports (the manager's) carry the corrected result, with where winner and loser go next.
    assert api.client.get(f"/api/tournaments/{tid}/export.json", headers=api.staff).status_code == 403
    doc = api.ok("GET", f"/api/tournaments/{tid}/export.json", as_manager=True)
    first = next(m for m in doc["matches"] if m["matchId"] == "W1-1")
    assert (first["scoreA"], first["scoreB"], first["winner"], first["roundName"]) == (2, 5, w11["b"], "Winners' round 1")
    assert (first["winnerNext"], first["loserNext"]) == (w21["number"], l11["number"]) and first["table"]["name"] == "Pool 1"
    # The CSV is the project's Slovak-Excel file (issue 29, item 35): a BOM, ';' between cells
    # (this API has no pages mounted, so no Slovak catalogue: its header is the English message ids).
    data = api.ok("GET", f"/api/tournaments/{tid}/export.csv", as_manager=True).content
    assert data.startswith(b"\xef\xbb\xbf") and data.decode("utf-8-sig").splitlines()[0].startswith("Match no.;Round;Race to;Player A")


@sqlite_only  # what the API lets through; the hub's rule is the same on both databases
def test_a_double_tap_over_the_api_scores_one_rack_the_seen_score_guards_it(api: Api) -> None:
    tid = make(api, 2, tables=1, format="single", race_winners=3, race_final=3)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    match = next(m["id"] for m in view(api, tid)["matches"] if m["status"] == "called")
    rack = f"/api/tournaments/{tid}/matches/{match}/rack"
    # Two phones (or a double tap) send the same tap made on 0:0: the first counts, the second changes nothing.
    assert api.ok("POST", rack, json={"side": "a", "seen": [0, 0]}) == {"match": match, "score_a": 1, "score_b": 0}
    assert api.ok("POST", rack, json={"side": "a", "seen": [0, 0]}) == {"match": match, "score_a": 1, "score_b": 0}
    assert api.ok("POST", rack, json={"side": "b", "seen": [1, 0]}) == {"match": match, "score_a": 1, "score_b": 1}
    # Still JSON integers only: a score as text is refused, as every other number of the API is.
    assert "seen.0" in api.refused("POST", rack, 422, json={"side": "a", "seen": ["1", 1]})


def test_a_match_not_begun_15_minutes_after_its_call_is_offered_as_a_walkover_and_staff_confirm_it(api: Api) -> None:
    tid = make(api, 4, tables=2, format="single", race_winners=3, race_final=3)
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-2/start")  # these two came to the table
    api.clock.advance(minutes=14, seconds=59)
    hub_of(api).watchdog.tick()
    assert not any(m["walkover_offered"] for m in view(api, tid)["matches"])
    api.clock.advance(seconds=1)
    hub_of(api).watchdog.tick()
    offered = {m["id"]: m["walkover_offered"] for m in view(api, tid)["matches"] if m["status"] in ("called", "playing")}
    assert offered == {"W1-1": True, "W1-2": False}, "SBiZ 1.7: 15 minutes after the call, only for a match nobody began"
    # Staff confirm: the one who came gets the race.
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/result", json={"score_a": 0, "score_b": 3, "walkover": True})
    w11 = next(m for m in view(api, tid)["matches"] if m["id"] == "W1-1")
    assert (w11["status"], w11["walkover"], w11["winner"]) == ("done", True, w11["b"])


def test_calls_light_the_tournaments_tables_bill_them_to_the_tournament_and_the_light_goes_off_when_nothing_waits(api: Api) -> None:
    tid = make(api, 4, tables=3, format="single", race_winners=3, race_final=3)
    hub = hub_of(api)
    # Its tables are held on the booking calendar from its start (six hours by default).
    blocks = on_writer(hub, lambda db: [(b.kind, b.tables, b.end_at - b.start_at) for b in db.scalars(select(BookingBlock))])
    assert blocks == [("tournament", ["pool-01", "pool-02", "pool-03"], timedelta(hours=6))]
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    assert {c["table"] for c in view(api, tid)["on_tables"]} == {"pool-01", "pool-02"}
    assert hub.light_commands()["pool-01"].on and hub.light_commands()["pool-02"].on and "pool-03" not in hub.open
    game = hub.open["pool-01"].id
    api.clock.advance(minutes=40)
    # W1-1 ends; the final waits for W1-2: nothing for pool-01, its light goes off, its game is billed.
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-1/result", json={"score_a": 3, "score_b": 1})
    assert "pool-01" not in hub.open and not hub.light_commands()["pool-01"].on
    tab = api.ok("GET", f"/api/tabs/{tab_of(api, game)}")
    assert tab["total_cents"] == 0 and tab["lines"][0]["category"] == "table_time", "the tournament's time is not the players' debt"
    # W1-2 ends: the final goes to the table that just freed, whose game (and light) stays on.
    before = hub.open["pool-02"].id
    api.ok("POST", f"/api/tournaments/{tid}/matches/W1-2/result", json={"score_a": 1, "score_b": 3})
    assert [c["table"] for c in view(api, tid)["on_tables"]] == ["pool-02"] and hub.open["pool-02"].id == before
    api.clock.advance(minutes=30)
    api.ok("POST", f"/api/tournaments/{tid}/matches/W2-1/result", json={"score_a": 3, "score_b": 2})
    assert not hub.open and not any(hub.light_commands()[t].on for t in ("pool-01", "pool-02"))
    # The tournament's table time is on its report and the day's Z report, not in the takings.
    time = view(api, tid)["table_time"]
    assert time["games"] == 2 and time["minutes"] == 40 + 70 and time["billed_cents"] == 0 and time["list_cents"] == 1100
    z = api.ok("GET", f"/api/days/{api.ok('GET', '/api/days/current')['day']}", as_manager=True)  # staff count blind
    assert z["tournaments"] == [{**time, "tournament_id": tid, "name": "Lavosliga II"}] and z["table_time_cents"] == 0
    stopped = on_writer(hub, lambda db: db.scalars(select(Game.table_id).where(Game.stopped_at.is_not(None))).all())
    assert sorted(stopped) == ["pool-01", "pool-02"]
    # The tournament's rate is never staff's to start a game at by hand (it is 0 €/h).
    assert "tournament matches only" in api.refused("POST", "/api/sessions", 409, json={"table": "pool-05", "tariff": "tournament"})


def test_entry_fees_go_on_each_players_tab_show_under_the_tournament_entry_on_the_z_report_and_the_pot_pays_out_to_the_cent(
    api: Api,
) -> None:
    hub = hub_of(api)
    member = hub.execute(AddMember(name="Novák Peter", actor="boss"))
    hub.execute(RecordFee(member_id=member.id, year=api.clock().year, actor="boss"))
    # The manager renames the members' entry: it stays the fee (it stands for the venue's entry_member by its code).
    entry = on_writer(hub, lambda db: db.scalar(select(Product.id).where(Product.code == "entry_member")))
    api.ok("PATCH", f"/api/products/{entry}", as_manager=True, json={"name": "Štartovné Lavosliga (člen)"})
    t = api.ok(
        "POST",
        "/api/tournaments",
        201,
        as_manager=True,
        json={
            "name": "Lavosliga I",
            "starts_at": api.clock().isoformat(),
            "league_group": "I",
            "format": "single",
            "tables": ["pool-01"],
            "club_share_percent": 10,
            "payout_shares": [50, 30, 20],
            "race_winners": 2,
            "race_final": 2,
        },
    )
    tid = t["id"]
    novak = api.ok("POST", f"/api/tournaments/{tid}/entrants", 201, json={"member_id": member.id})
    walk_ins = [api.ok("POST", f"/api/tournaments/{tid}/entrants", 201, json={"name": n})["id"] for n in ("Kováč", "Horváth")]
    assert novak["member_fee_paid"] and novak["checked_in_at"] is None
    tabs = [api.ok("POST", f"/api/tournaments/{tid}/entrants/{e}/check-in")["fee_tab_id"] for e in (novak["id"], *walk_ins)]
    owed = [api.ok("GET", f"/api/tabs/{tab}")["owed_cents"] for tab in tabs]
    assert owed == [300, 500, 500], "3 € for a member whose fee is paid, 5 € for the others"
    for tab, method in zip(tabs, ("cash", "card", "cash"), strict=True):
        api.ok(
            "POST",
            f"/api/tabs/{tab}/payments",
            201,
            json={"method": method, "amount_cents": api.ok("GET", f"/api/tabs/{tab}")["owed_cents"]},
        )
    z = api.ok("GET", f"/api/days/{api.ok('GET', '/api/days/current')['day']}", as_manager=True)  # staff count blind
    assert {c["category"]: c["net_cents"] for c in z["by_category"]}["tournament_entry"] == 1300
    # Late check-in closes with the draw; the pot is the fees less the club's 10 %.
    api.ok("POST", f"/api/tournaments/{tid}/draw")
    assert "draw" in api.refused("POST", f"/api/tournaments/{tid}/entrants", 409, json={"name": "Neskorý"})
    play(api, tid, seed=3)
    v = view(api, tid)
    assert (v["fees_cents"], v["club_cents"], v["pot_cents"]) == (1300, 130, 1170)
    paid = [p["payout_cents"] * len(p["names"]) for p in v["places"]]
    assert sum(paid) == 1170 and paid == [585, 351, 234]


def test_the_season_ranks_a_groups_players_by_their_points_and_a_seeded_draw_puts_the_best_first(api: Api) -> None:
    players = ["Novák", "Kováč", "Horváth", "Varga"]
    first = make(api, 4, tables=2, names=players, format="single", race_winners=2, race_final=2, season_points={1: 25, 2: 18, 3: 15})
    api.ok("POST", f"/api/tournaments/{first}/draw")
    play(api, first, seed=11)
    done = view(api, first)
    season = api.ok("GET", "/api/tournaments/season?group=II&year=2026")
    assert season[0] == {"place": 1, "name": done["champion"], "points": 25, "tournaments": 1}
    assert [r["points"] for r in season] == [25, 18, 15, 15] and [r["place"] for r in season] == [1, 2, 3, 3]
    # The next one, seeded: the season's leader is seed 1, the newcomer last.
    second = make(api, 0, tables=2, names=[*reversed(players), "Nováčik"], format="single", seeding="seeded")
    order = api.ok("POST", f"/api/tournaments/{second}/draw")["order"]
    names = {e["id"]: e["name"] for e in view(api, second)["entrants"]}
    assert names[order[0]] == done["champion"] and names[order[-1]] == "Nováčik"


def test_a_pairs_bracket_enters_two_players_each_paying_their_own_entry(api: Api) -> None:
    hub = hub_of(api)
    member = hub.execute(AddMember(name="Šipoš Ján", actor="boss"))
    hub.execute(RecordFee(member_id=member.id, year=api.clock().year, actor="boss"))
    tid = api.ok(
        "POST",
        "/api/tournaments",
        201,
        as_manager=True,
        json={"name": "Šipoš Memorial", "starts_at": api.clock().isoformat(), "format": "single", "pairs": True, "tables": ["pool-01"]},
    )["id"]
    assert "second" in api.refused("POST", f"/api/tournaments/{tid}/entrants", 409, json={"name": "Sám"})
    pair = api.ok("POST", f"/api/tournaments/{tid}/entrants", 201, json={"member_id": member.id, "name2": "Kováč", "check_in": True})
    assert pair["name"] == "Šipoš Ján / Kováč" and pair["fee_total_cents"] == 300 + 500
    assert "entered already" in api.refused("POST", f"/api/tournaments/{tid}/entrants", 409, json={"name": "kováč", "name2": "Nový"})
