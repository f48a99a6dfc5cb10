"""Issue 21, must-show: the demo can run a Sunday afternoon (`lavos demo --tournament`): 16 players,
double elimination on 8 tables, with its printed results.

In-process on the real hub (SQLite) and its fake clock, the afternoon stepped along by hand rather
than in real time: what the demo's loop does between its looks at the tables, minus the waiting."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from broker.domain.venue import load_venue
from broker.people.members import ImportMembers
from sim.demo import MEMBERS_CSV, VENUE
from sim.till import Bar
from sim.tournament import PLAYERS, TABLES, DemoTournament, sunday_start
from tests.support.sqlite_template import migrated_sqlite
from tests.support.till_days import FakeClock, day_hub, local

if TYPE_CHECKING:
    from pathlib import Path


def test_a_demo_sunday_plays_16_players_on_8_tables_to_the_printed_standings(tmp_path: Path) -> None:
    venue = load_venue(VENUE)
    assert sunday_start(venue, datetime(2026, 12, 9, 10, tzinfo=UTC)) == local(2026, 12, 6, 14), "14:00 on the last Sunday"
    assert sunday_start(venue, local(2026, 12, 6, 20)) == local(2026, 12, 6, 14)
    clock = FakeClock(local(2026, 12, 6, 14))
    said: list[str] = []

    def say(where: str, text: str, style: str = "") -> None:
        said.append(f"{where}: {text}")

    with day_hub(migrated_sqlite(tmp_path / "lavos.db"), clock, venue) as (hub, facade):
        facade.execute(ImportMembers(data=MEMBERS_CSV.read_bytes(), actor="demo"))
        bar = Bar(facade, say, "staff", "manager")
        bar.open()
        sunday = DemoTournament(facade, clock, say, random.Random(7), bar)
        tid = sunday.set_up()
        view = facade.reads.tournaments.tournament(tid)
        assert len(view.entrants) == PLAYERS and sum(1 for e in view.entrants if e.member_id) == 10
        assert len(view.on_tables) == TABLES and len(hub.open) == TABLES, "the draw calls a match to each of the 8 tables: lit"
        for _ in range(200):  # the demo looks every 0.2 s; here the clock jumps to the players' next move
            view = sunday.step()
            if view.finished_at is not None:
                break
            at = sunday.next_at()  # None: a match called by the last result, seen at the next look
            clock.set(max(at or clock(), clock()))
        sunday.pay_fees(lambda n: "cash")  # the late payers
        view = facade.reads.tournaments.tournament(tid)
        assert view.finished_at is not None and not hub.open, "every match played, every light off"
        played = [m for m in view.matches if m.status == "done"]
        assert len(played) in (2 * PLAYERS - 2, 2 * PLAYERS - 1), "30 matches, the grand final's reset only when the losers' side won it"
        assert all(e.fee_paid for e in view.entrants)
        assert sum(p.payout_cents * len(p.names) for p in view.places) == view.pot_cents > 0
        text = sunday.results(view)
        bar.close(None)
    assert any(s.startswith("bar: day 2026-12-06 closed, Z report") for s in said), said[-3:]
    assert text[0] == "Lavosliga II: final standings" and text[1].split()[:1] == ["1."] and f" {view.champion}" in text[1]
    assert "Entry fees" in text[-1] and "table time" in text[-1]
    assert sum(1 for s in said if " called: " in s) == len(played) and sum(1 for s in said if " wins" in s) == len(played)
