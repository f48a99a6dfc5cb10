"""`lavos demo --tournament`: a Lavosliga Sunday afternoon instead of the evening (issue 21).

16 players (members of the club's registry and walk-ins) are entered and checked in, each entry
fee paid at the bar; the draw is a double elimination on 8 pool tables. From then on the hub does
what it does on a real Sunday: it calls the longest-waiting match to each free table (the light
comes on, the time is the tournament's). This module only plays the players' part, as the
clock (`--speed`) runs: they come to a called table within a few minutes (StartMatch), play a rack
every 4-7 minutes and the result is confirmed at the race (RecordResult). At the end it prints the
standings with the payouts (to the cent of the pot) and the season points.

Everything goes through the hub's commands and reads, as the pages and the API do.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from datetime import time as clock_time

from broker.core.errors import ServiceError
from broker.domain.venue import Venue
from broker.hall.facade import HubFacade
from broker.tournaments.calls import StartMatch
from broker.tournaments.results import RecordResult
from broker.tournaments.setup import AddEntrant, CreateTournament, DrawTournament, NewTvLink
from broker.tournaments.views import CallView, TournamentView
from sim.till import Bar, eur

PLAYERS = 16
TABLES = 8
MEMBERS = 10  # from the registry; the others are walk-ins, entered by name
WALK_INS = ("Tomáš Kováč", "Lukáš Horváth", "Marek Varga", "Jakub Tóth", "Samuel Nagy", "Adam Baláž", "Filip Molnár")
ARRIVE_MIN = (1.0, 4.0)  # minutes from the call to the first break
RACK_MIN = (4.0, 7.0)  # minutes a rack takes
POLL_S = 0.2  # real seconds between looks at the tables

Say = Callable[[str, str, str], None]


def sunday_start(venue: Venue, now: datetime) -> datetime:
    """The Lavosliga's start: 14:00 (venue time) on the last Sunday up to today."""
    day = now.astimezone(venue.tz).date()
    sunday = day - timedelta(days=(day.weekday() + 1) % 7)
    return datetime.combine(sunday, clock_time(14), venue.tz).astimezone(UTC)


@dataclass
class Match:
    """A called match as the players play it: when they begin, when the last rack is potted, how it ends."""

    begins: datetime
    ends: datetime
    score_a: int
    score_b: int
    started: bool = False


@dataclass
class DemoTournament:
    hub: HubFacade
    clock: Callable[[], datetime]
    say: Say
    rng: random.Random
    bar: Bar | None = None
    staff: str = "staff"
    manager: str = "manager"
    id: int | None = None
    token: str = ""
    playing: dict[str, Match] = field(default_factory=dict)

    def set_up(self) -> int:
        """The manager creates it, staff enter and check in the 16 (the bar takes each fee), then the draw."""
        venue = self.hub.reads.venue
        tables = tuple(t.id for t in venue.tables if t.kind.value == "pool")[:TABLES]
        tid = self.hub.execute(
            CreateTournament(
                name="Lavosliga II",
                starts_at=self.clock(),
                league_group="II",
                discipline="10-ball",
                format="double",
                race_winners=4,
                race_losers=3,
                race_final=5,
                tables=tables,
                club_share_percent=20,
                season_points={1: 25, 2: 18, 3: 15, 4: 12, 5: 10, 7: 8},
                actor=self.manager,
            )
        )
        self.id = tid
        self.say("hall", f"Lavosliga II: double elimination on {len(tables)} tables, race to 4 (losers' side 3, final 5)", "bold")
        members = self.hub.reads.people.search_members("", MEMBERS)
        entries: list[AddEntrant] = [AddEntrant(tournament=tid, member_id=m.id, check_in=True, actor=self.staff) for m in members]
        entries += [AddEntrant(tournament=tid, name=name, check_in=True, actor=self.staff) for name in WALK_INS[: PLAYERS - len(entries)]]
        for entry in entries:
            self.hub.execute(entry)
        if self.bar is not None:  # most pay at once (cash or card), every fourth at the end of the day
            self.pay_fees(lambda n: None if n % 4 == 3 else "card" if n % 3 == 0 else "cash")
        view = self.hub.reads.tournaments.tournament(tid)
        self.say("hall", f"{view.checked_in} players checked in, entry fees {eur(view.fees_cents)} paid so far", "blue")
        self.hub.execute(DrawTournament(tournament=tid, actor=self.staff))
        # The TV link: the players follow on the TV and their phones, and so does this module (the
        # TV's view reads no money: the cheapest look at the tables).
        self.token = self.hub.execute(NewTvLink(tournament=tid, actor=self.staff))
        self.say("hall", "drawn: the first matches go to the tables", "bold")
        return tid

    def pay_fees(self, method: Callable[[int], str | None]) -> None:
        """The bar takes the entry fees still owed: `method(n)` for the n-th entrant, None: not yet."""
        assert self.bar is not None and self.id is not None
        for n, e in enumerate(self.hub.reads.tournaments.tournament(self.id).entrants):
            how = method(n)
            if how is not None and e.fee_tab_id is not None and e.fee_owed_cents > 0:
                self.bar.pay(e.fee_tab_id, "bar", how)

    def step(self) -> TournamentView:
        """One look at the tournament's tables: a called match begins, a finished one is confirmed."""
        view = self.hub.reads.tournaments.tournament_by_token(self.token)
        assert view is not None, "the TV link is the demo's own: nobody revokes it"
        now = self.clock()
        for call in view.on_tables:
            m = self.playing.get(call.match) or self._called(call)
            try:
                if not m.started and call.started_at is None and now >= m.begins:
                    self.hub.execute(StartMatch(tournament=view.id, match=call.match, actor=self.staff))
                    m.started = True
                if now >= m.ends:
                    self.hub.execute(
                        RecordResult(tournament=view.id, match=call.match, score_a=m.score_a, score_b=m.score_b, actor=self.staff)
                    )
                    del self.playing[call.match]
                    winner = call.a_name if m.score_a > m.score_b else call.b_name
                    self.say(
                        call.table_name, f"no. {call.number}: {call.a_name} – {call.b_name} {m.score_a}:{m.score_b}, {winner} wins", "green"
                    )
            except ServiceError as e:
                self.say(call.table_name, f"staff could not enter no. {call.number}: {e}", "yellow")
        return view

    def next_at(self) -> datetime | None:
        """When the players next do something at a table (a match begins or ends); None: nothing on."""
        return min((m.ends if m.started else m.begins for m in self.playing.values()), default=None)

    def _called(self, call: CallView) -> Match:
        self.say(
            call.table_name, f"no. {call.number} called: {call.a_name} – {call.b_name} (race to {call.race_to}), the light is on", "cyan"
        )
        race = call.race_to
        lost = self.rng.randrange(race)
        score_a, score_b = (race, lost) if self.rng.random() < 0.5 else (lost, race)
        begins = call.called_at + timedelta(minutes=self.rng.uniform(*ARRIVE_MIN))
        racks = race + lost - call.score_a - call.score_b
        ends = begins + timedelta(minutes=sum(self.rng.uniform(*RACK_MIN) for _ in range(racks)))
        self.playing[call.match] = m = Match(begins, ends, score_a, score_b)
        return m

    def run(self, stop: threading.Event, deadline: float | None) -> TournamentView:
        """Play the afternoon out (or until stopped, or the --seconds are up); the last view."""
        view = self.step()
        while view.finished_at is None and not stop.wait(POLL_S):
            if deadline is not None and time.monotonic() >= deadline:
                break
            view = self.step()
        if self.bar is not None:
            self.pay_fees(lambda n: "cash")  # the late payers, before the bar closes the day
        assert self.id is not None
        return self.hub.reads.tournaments.tournament(self.id)  # with the money: the standings' payouts

    def results(self, view: TournamentView) -> list[str]:
        """The standings as printed at the end: places, payouts, season points; the money and the table time."""
        lines = [f"{view.name}: {'final standings' if view.finished_at else 'standings so far (not finished)'}"]
        for p in view.places:
            place = f"{p.first}." if p.first == p.last else f"{p.first}.-{p.last}."
            money = (
                f"  {eur(p.payout_cents)} each"
                if p.payout_cents and len(p.names) > 1
                else f"  {eur(p.payout_cents)}"
                if p.payout_cents
                else ""
            )
            points = f"  {p.points} points" if p.points else ""
            lines.append(f"  {place:<7} {', '.join(p.names)}{money}{points}")
        t = view.table_time
        lines.append(
            f"Entry fees {eur(view.fees_cents)}, the club's share {eur(view.club_cents)}, paid out {eur(view.pot_cents)}; "
            f"table time {t.minutes} min on {t.games} games, billed {eur(t.billed_cents)} (worth {eur(t.list_cents)} at the standard rate)"
        )
        return lines
