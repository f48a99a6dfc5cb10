"""The tournament's pages (issue 21) as a browser sees them, in-process: the manager creates one,
staff enter and check in players, draw, score a match a tap a rack and confirm it; the floor card
and the table's page show the call; the TV link works without a login, only while not revoked."""

from __future__ import annotations

import re

from httpx import Response

from broker.hall.hub import Hub
from broker.hall.read_models import HallReads
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import Pages, pages  # noqa: F401  (fixture)

pytestmark = sqlite_only


def _tid(location: str) -> int:
    m = re.match(r"/tournaments/(\d+)", location)
    assert m, location
    return int(m.group(1))


def staff_follow(p: Pages, r: Response) -> str:
    """The page a staff user's POST lands on (with its message)."""
    assert r.status_code == 303, f"{r.status_code} {r.text[:2000]}"
    return p.page(r.headers["location"], client=p.staff)


def create(p: Pages, **extra: str) -> int:
    form = {
        "name": "Lavosliga II",
        "starts_at": "2026-11-10T18:00",
        "league_group": "II",
        "discipline": "10-ball",
        "format": "single",
        "seeding": "random",
        "race_winners": "3",
        "race_losers": "3",
        "race_final": "3",
        "break_rule": "alternate",
        "group_size": "4",
        "advance": "2",
        "club_share_percent": "0",
        "payout_shares": "60 40",
        "season_points": "1:25 2:18",
        "tariff": "tournament",
        "tables": "pool-07",
        **extra,
    }
    r = p.post("/tournaments", form)
    assert r.status_code == 303, r.text[:3000]
    return _tid(r.headers["location"])


def test_a_tournament_day_on_the_pages(pages: Pages) -> None:
    p = pages
    # Creating one is the manager's; staff see the list without the form.
    assert 'id="new-tournament"' not in p.page("/tournaments", client=p.staff)
    assert p.post("/tournaments", {"name": "X"}, client=p.staff).status_code == 403
    bad = p.post("/tournaments", {"name": "Lavosliga", "starts_at": "zajtra"})
    assert bad.status_code == 400 and "Zadajte dátum a čas začiatku turnaja." in bad.text
    tid = create(p, free_entry="1")
    # Staff enter and check in two walk-ins, draw; the match is called to Stôl 7 (Pool 7) at once.
    for name in ("Novák", "Kováč"):
        r = p.post(f"/tournaments/{tid}/entrants", {"name": name, "check_in": "1"}, client=p.staff)
        assert r.status_code == 303
    again = staff_follow(p, p.post(f"/tournaments/{tid}/entrants", {"name": "novák"}, client=p.staff))
    assert "Novák je už prihlásený." in again, re.findall(r"flash[^<]*<", again)
    staff_follow(p, p.post(f"/tournaments/{tid}/draw", client=p.staff))
    page = p.page(f"/tournaments/{tid}", client=p.staff)
    assert "Pool 7: Novák – Kováč (na 3)" in page or "Pool 7: Kováč – Novák (na 3)" in page
    floor = p.page("/", client=p.staff)
    assert re.search(r"Pool 7: (Novák – Kováč|Kováč – Novák) \(na 3\)", floor), "the floor card says the call"
    table = p.page("/tables/pool-07", client=p.staff)
    assert 'id="tournament-call"' in table
    # Three taps for the first racks, a tap back, then a+1 and the confirmation: ≤ 3 taps a rack.
    here = f"/tournaments/{tid}/matches/W1-1"
    for side in ("a", "a", "b"):
        assert p.post(f"{here}/rack", {"side": side, "next": here}, client=p.staff).status_code == 303
    p.post(f"{here}/rack", {"side": "b", "delta": "-1", "next": here}, client=p.staff)
    p.post(f"{here}/rack", {"side": "a", "next": here}, client=p.staff)
    # A double tap: the second +1 was made on the score the first already changed, and changes nothing.
    for _ in range(2):
        p.post(f"{here}/rack", {"side": "b", "seen_a": "3", "seen_b": "0", "next": here}, client=p.staff)
    p.post(f"{here}/rack", {"side": "b", "delta": "-1", "seen_a": "3", "seen_b": "1", "next": here}, client=p.staff)
    score = p.page(here, client=p.staff)
    assert 'id="confirm-result"' in score and "3 : 0" in score
    done = staff_follow(p, p.post(f"{here}/result", {"score_a": "3", "score_b": "0", "next": f"/tournaments/{tid}"}, client=p.staff))
    assert 'id="champion"' in done and "Konečné poradie" in done
    # A wrong score is refused in Slovak and changes nothing; a forced correction is the manager's.
    assert (
        p.post(f"{here}/result", {"score_a": "2", "score_b": "3", "reason": "zlý zápis", "force": "1"}, client=p.staff).status_code == 403
    )
    wrong = staff_follow(p, p.post(f"{here}/result", {"score_a": "4", "score_b": "1", "reason": "preklep"}, client=p.staff))
    assert "Hrá sa na 3 víťazných hier" in wrong
    assert "card-tournament" not in p.page("/", client=p.staff), "the match is over: the floor card no longer shows it"
    day = p.page("/day", client=p.staff)
    assert 'id="z-tournaments"' in day and "Turnaje: čas ich stolov" in day and "Lavosliga II" in day


def test_the_tv_link_needs_no_login_and_stops_working_when_revoked(pages: Pages) -> None:
    p = pages
    tid = create(p, free_entry="1")
    r = p.post(f"/tournaments/{tid}/tv-link", client=p.staff)
    page = staff_follow(p, r)
    link = re.search(r"(http://[^\s<]+/tv/[A-Za-z0-9_-]+)", page)
    assert link, page[:2000]
    path = "/tv/" + link.group(1).rsplit("/tv/", 1)[1]
    tv = p.page(path, client=p.anon)
    assert "Lavosliga II" in tv and 'data-events="' in tv and "csrf" not in tv
    assert p.page(path + "/board", client=p.anon).count("tv-head") == 1
    staff_follow(p, p.post(f"/tournaments/{tid}/tv-link/revoke", client=p.staff))
    assert p.anon.get(path).status_code == 404
    assert p.anon.get(path + "/board").status_code == 404
    assert p.anon.get("/tv/" + "x" * 32).status_code == 404


def test_after_the_draw_the_pages_show_the_tables_first_a_walkover_any_time_a_withdrawal_and_the_match_on_its_table(pages: Pages) -> None:
    """Issue 29, items 21, 27, 33 and 34 on the pages: a called match's table shows the match, not
    a stop button; the board offers a walkover and the recall before the 15-minute offer; a player
    withdraws after the draw (walkovers); staff print the A4 bracket."""
    p = pages
    tid = create(p, free_entry="1", tables="pool-07")
    for name in ("Novák", "Kováč", "Horváth", "Varga"):
        p.post(f"/tournaments/{tid}/entrants", {"name": name, "check_in": "1"}, client=p.staff)
    staff_follow(p, p.post(f"/tournaments/{tid}/draw", client=p.staff))
    page = p.page(f"/tournaments/{tid}", client=p.staff)
    assert page.index('id="on-tables"') < page.index('id="tv"') < page.index('id="entrants"'), "the tables come first"
    assert "walkover-a" in page and "/matches/W1-1/recall" in page, "a walkover before the 15-minute offer, and the recall"
    assert 'id="print-link"' in page and 'id="export-csv"' not in page, "staff print the bracket; the CSV is the manager's"
    assert "Víťaz č." in p.page(f"/tournaments/{tid}/print", client=p.staff)
    table = p.page("/tables/pool-07", client=p.staff)
    assert 'id="match-game"' in table and 'id="stop"' not in table and 'id="pause"' not in table
    # A player of the waiting match withdraws: their match is a walkover at once, and the page says so.
    assert isinstance(p.service, Hub)
    reads = HallReads(p.service)
    w12 = reads.tournaments.tournament(tid).match("W1-2")
    assert w12 is not None and w12.a is not None
    done = staff_follow(p, p.post(f"/tournaments/{tid}/entrants/{w12.a}/remove", client=p.staff))
    assert "každý jeho neodohratý zápas je kontumácia" in done and "odhlásil sa o" in done
    after = reads.tournaments.tournament(tid).match("W1-2")
    assert after is not None and after.walkover


def test_the_page_says_when_the_calls_begin_and_the_director_can_start_now(pages: Pages) -> None:
    """Issue 29, item 1 on the pages: drawn before its start, the tournament's page says that the
    matches are called from the start (and when); "Start now" begins at once."""
    p = pages
    tid = create(p, free_entry="1", tables="pool-07", starts_at="2026-11-12T16:00")
    for name in ("Novák", "Kováč"):
        p.post(f"/tournaments/{tid}/entrants", {"name": name, "check_in": "1"}, client=p.staff)
    before = p.page(f"/tournaments/{tid}", client=p.staff).replace("\u00a0", " ")  # (a date never breaks)
    assert 'id="calls-from"' in before and "od začiatku, 12. 11. 2026 16:00;" in before and 'id="start-now"' in before
    drawn = staff_follow(p, p.post(f"/tournaments/{tid}/draw", client=p.staff)).replace("\u00a0", " ")
    assert "Zápasy sa začnú vyvolávať k stolom od začiatku, 12. 11. 2026 16:00." in drawn
    assert 'id="calls-from"' in drawn and 'id="on-tables"' not in drawn
    started = staff_follow(p, p.post(f"/tournaments/{tid}/start-now", client=p.staff))
    assert 'id="calls-from"' not in started and 'id="on-tables"' in started and "Turnaj sa začal" in started


def test_a_called_matchs_table_is_not_darkened_by_hand_on_the_api_or_its_page(pages: Pages) -> None:
    """Issue 29, item 21 (the light): switching off the light of a table a match is called to is
    refused as stopping its game is (409 naming the match), over the API and from the table's page,
    which shows the match instead of the switch; the light stays on."""
    p = pages
    tid = create(p, free_entry="1", tables="pool-07")
    for name in ("Novák", "Kováč"):
        p.post(f"/tournaments/{tid}/entrants", {"name": name, "check_in": "1"}, client=p.staff)
    staff_follow(p, p.post(f"/tournaments/{tid}/draw", client=p.staff))
    assert isinstance(p.service, Hub)
    hub = p.service
    assert hub.light_commands()["pool-07"].on
    r = p.staff.post("/api/tables/pool-07/light", json={"on": False}, headers={"X-CSRF-Token": p.token(p.staff)})
    assert r.status_code == 409 and "match no. 1 of Lavosliga II" in r.json()["detail"], r.text
    page = staff_follow(p, p.post("/tables/pool-07/light", {"on": "false"}, client=p.staff))
    assert "zápas č. 1 turnaja Lavosliga II" in page, "the refusal, in Slovak"
    assert 'id="light-match"' in page and 'id="light-off"' not in page and 'id="light-on"' not in page
    assert hub.light_commands()["pool-07"].on, "the light stayed on"
    # Its result ends the call (nothing waits): the table's light is the staff's again.
    staff_follow(p, p.post(f"/tournaments/{tid}/matches/W1-1/result", {"score_a": "3", "score_b": "1"}, client=p.staff))
    assert not hub.light_commands()["pool-07"].on
    assert 'id="light-match"' not in p.page("/tables/pool-07", client=p.staff)


def test_the_tournament_csv_is_the_slovak_excel_file(pages: Pages) -> None:
    """Issue 29, item 35: ';' between cells, UTF-8 with a BOM, a Slovak header and round names, as
    the members' and the reports' files; the API's file too."""
    p = pages
    tid = create(p, free_entry="1")
    for name in ("Novák", "Kováč"):
        p.post(f"/tournaments/{tid}/entrants", {"name": name, "check_in": "1"}, client=p.staff)
    staff_follow(p, p.post(f"/tournaments/{tid}/draw", client=p.staff))
    p.post(f"/tournaments/{tid}/matches/W1-1/result", {"walkover": "a"}, client=p.staff)
    for path in (f"/tournaments/{tid}/export.csv", f"/api/tournaments/{tid}/export.csv"):
        r = p.manager.get(path)
        assert r.status_code == 200 and r.content.startswith(b"\xef\xbb\xbf"), path
        lines = r.content.decode("utf-8-sig").splitlines()
        assert lines[0].startswith("Zápas č.;Kolo;Na víťazné hry;Hráč A;Hráč B"), lines[0]
        row = lines[1].split(";")
        assert row[:3] == ["1", "Finále", "3"] and row[7] == "áno", row
    assert p.staff.get(f"/tournaments/{tid}/export.csv").status_code == 403
