"""The tournament's pages (issue 21) as a browser sees them, in-process: the manager creates one,
staff enter and check in players, draw, score a match a tap a rack and confirm it; the floor card
and the table's page show the call; the TV link works without a login, only while not revoked."""

from __future__ import annotations

import re

from httpx import Response

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
