"""The player model: one seeded evening at the hall, as a list of timed actions.

Pure: no I/O, no clock, no threads. Times are simulated seconds since the doors opened, so the
same seed gives the same evening at any speed; the demo (sim/demo.py) divides them by its speed
and carries each action out on the real system (games through the hub as staff
would, ball drops and goals as beam pulses on a node's pins, cards on its reader).

What the evening holds:
* Guests take free billiard tables (a queue at the doors, then a trickle) for 40-150 minutes,
  some with prepaid time that runs out (the hub stops those, not the model), some with a
  club card on the club-card tables. Every game ends before closing.
* On a pool table they play racks: 8-ball and 14/1 are racked with 15 balls, 9-ball with 9.
  A rack never sees more drops than it has balls (8-ball ends when the 8 drops, 9-ball on the 9,
  14/1 re-racks after 14). Shots take 10-45 s (the shot clock allows 45) and about half drop a
  ball, so a table sees a drop every half minute or so, never two within a few seconds.
* Members check in at foosball with a card tap and play to ten goals.
* Early on, on purpose, each thing staff must be able to see happens once: a prepaid game
  runs out, foosball is played without a card, an unpaid card is refused, a node drops offline
  during a game and comes back, a pocket beam stays broken long enough to count as stuck.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

# Balls in a rack, per game (DOMAIN.md, "Games and what a pocket sensor sees").
RACK_BALLS = {"8-ball": 15, "9-ball": 9, "14-1": 15}
GAME_WEIGHTS = {"8-ball": 45, "9-ball": 40, "14-1": 15}
# Pockets in the pin-map order: corner, side, corner on one rail, then the other rail. Corners
# take most of the balls.
POCKET_WEIGHTS = (3, 2, 3, 3, 2, 3)
SHOT_S = (10.0, 45.0)  # lining up and playing one shot; 45 s is the shot clock's limit
POT_CHANCE = 0.55  # a shot that drops a ball (amateurs at a bar, scratches included)
RERACK_S = (60.0, 150.0)  # collecting the balls, racking, the break
GOAL_GAP_S = (8.0, 60.0)
GOALS_TO_WIN = 10
PULSE_MS = (10.0, 60.0)  # how long a ball takes to cross the beam

# The scripted incidents, in simulated minutes after the doors open: early enough that a
# sped-up demo shows every one within its first minute of real time.
PREPAID_MINUTES = 10
FOOS_CHECKIN_AT = 1.0
FOOS_NO_CARD_AT = 2.5
UNPAID_TAP_AT = 3.5
OFFLINE_AT = 4.0
OFFLINE_FOR_S = 150.0
STUCK_AT = 5.0
STUCK_MIN_HOLD_S = 90.0
SCRIPTED_BY_MIN = 15.0  # every incident has happened by then (at any speed): tested


class Do(str, Enum):
    START = "start"  # staff start a game (prepaid `minutes`, club card `uid`)
    STOP = "stop"  # staff stop it
    DROP = "drop"  # a ball drops into `pocket`
    TAP = "tap"  # a card `uid` on a foosball table's reader
    GOAL = "goal"  # a goal at `side`
    OFFLINE = "offline"  # the table's node goes away (power cut)
    ONLINE = "online"  # and comes back
    BEAM_BREAK = "beam_break"  # something sits in `pocket`'s beam...
    BEAM_CLEAR = "beam_clear"  # ...until it is taken out


@dataclass(frozen=True)
class Table:
    id: str
    kind: str  # devices.kinds.Kind value: pool, carom, foosball, darts
    club_card: bool = False


@dataclass(frozen=True)
class Card:
    uid: str
    name: str
    paid: bool  # this year's fee


@dataclass(frozen=True)
class Action:
    at: float  # simulated seconds since the doors opened
    do: Do
    table: str
    party: int = 0  # links a game's start, drops and stop
    pocket: int | None = None
    side: str | None = None
    uid: str | None = None
    minutes: int | None = None
    pulse_ms: float | None = None
    game: str | None = None
    rack: int | None = None
    note: str = ""


@dataclass
class _Planner:
    rng: random.Random
    tables: list[Table]
    cards: list[Card]
    minutes: float
    actions: list[Action] = field(default_factory=list)
    free_at: dict[str, float] = field(default_factory=dict)
    card_free_at: dict[str, float] = field(default_factory=dict)  # one card, one table at a time
    parties: int = 0

    @property
    def end_s(self) -> float:
        return self.minutes * 60.0

    def add(self, at: float, do: Do, table: str, **kw: Any) -> None:
        self.actions.append(Action(at=round(at, 3), do=do, table=table, **kw))

    def of_kind(self, kind: str) -> list[Table]:
        return [t for t in self.tables if t.kind == kind]

    def paid_cards(self) -> list[Card]:
        return [c for c in self.cards if c.paid]

    # -- billiards ---------------------------------------------------------------------

    def play(
        self,
        table: Table,
        start: float,
        length_s: float,
        *,
        prepaid: int | None = None,
        card: Card | None = None,
        quiet: tuple[float, float] | None = None,
        game: str | None = None,
    ) -> None:
        """A party at a table from `start` for `length_s` (prepaid: until the time runs out)."""
        self.parties += 1
        party = self.parties
        end = start + (prepaid * 60.0 if prepaid else length_s)
        if card is not None and self.card_free_at.get(card.uid, 0.0) > start:
            card = None  # the card is on another table: the hub would refuse it, so they play without
        if card is not None:
            self.card_free_at[card.uid] = end
        self.add(start, Do.START, table.id, party=party, minutes=prepaid, uid=card.uid if card else None, note=card.name if card else "")
        if table.kind == "pool":
            # They stop playing a little before the time is up, to put the cues away.
            self.play_pool(table, party, start + self.rng.uniform(30, 90), end - self.rng.uniform(30, 60), quiet, game)
        if not prepaid:
            self.add(end, Do.STOP, table.id, party=party)
        self.free_at[table.id] = end + self.rng.uniform(60, 300)  # the next guests come a while later

    def play_pool(self, table: Table, party: int, t: float, until: float, quiet: tuple[float, float] | None, game: str | None) -> None:
        game = game or self.rng.choices(list(GAME_WEIGHTS), weights=list(GAME_WEIGHTS.values()))[0]
        balls = RACK_BALLS[game]
        rack = 0
        while t < until:
            rack += 1
            if game == "14-1":
                drops = balls - 1  # the 15th ball stays for the break of the next rack
            elif game == "8-ball":
                drops = self.rng.randint(9, balls)  # one group and the 8, plus some of the other
            else:
                drops = self.rng.randint(4, balls)  # combinations end a 9-ball rack early
            for _ in range(drops):
                t += self.shots_to_pot()
                if t >= until:
                    return
                if quiet and quiet[0] <= t < quiet[1]:
                    continue  # the node is down: nothing sees this ball
                pocket = self.rng.choices(range(len(POCKET_WEIGHTS)), weights=POCKET_WEIGHTS)[0]
                self.add(
                    t, Do.DROP, table.id, party=party, pocket=pocket, pulse_ms=round(self.rng.uniform(*PULSE_MS), 1), game=game, rack=rack
                )
            t += self.rng.uniform(*RERACK_S)

    def shots_to_pot(self) -> float:
        t = self.rng.uniform(*SHOT_S)
        while self.rng.random() > POT_CHANCE:
            t += self.rng.uniform(*SHOT_S)
        return t

    def guests(self, reserved: dict[str, float]) -> None:
        """The rest of the evening: parties arrive and take a free table if there is one."""
        billiards = [t for t in self.tables if t.kind in ("pool", "carom")]
        t = 8 * 60.0
        last_start = self.end_s - 45 * 60
        while True:
            t += self.rng.expovariate(1 / (7 * 60.0))
            if t >= last_start:
                return
            free = [tb for tb in billiards if self.free_at.get(tb.id, 0.0) <= t and reserved.get(tb.id, 0.0) <= t]
            if not free:
                continue
            table = self.rng.choice(free)
            length = min(self.rng.uniform(40, 150) * 60, self.end_s - 10 * 60 - t)
            fits = [m for m in (30, 60) if m * 60 <= length]  # prepaid time never runs past closing
            prepaid = self.rng.choice(fits) if fits and self.rng.random() < 0.2 else None
            card = None
            if table.club_card and self.paid_cards() and self.rng.random() < 0.3:
                card = self.rng.choice(self.paid_cards())
            self.play(table, t, length, prepaid=prepaid, card=card)

    # -- foosball ------------------------------------------------------------------------

    def foosball_game(self, table: Table, t: float) -> float:
        """Goals until one side has ten; returns when the game ended."""
        score = {"home": 0, "away": 0}
        while max(score.values()) < GOALS_TO_WIN:
            t += self.rng.uniform(*GOAL_GAP_S)
            side = self.rng.choice(("home", "away"))
            score[side] += 1
            self.add(t, Do.GOAL, table.id, side=side, pulse_ms=round(self.rng.uniform(*PULSE_MS), 1))
        return t

    def foosball_evening(self, tables: list[Table], after: float) -> None:
        cards = self.paid_cards()
        if not cards:
            return
        t = after
        while True:
            t += self.rng.expovariate(1 / (25 * 60.0))
            if t >= self.end_s - 30 * 60:
                return
            table = self.rng.choice(tables)
            if self.free_at.get(table.id, 0.0) > t:
                continue
            card = self.rng.choice(cards)
            self.add(t, Do.TAP, table.id, uid=card.uid, note=card.name)
            end = t
            for _ in range(self.rng.randint(1, 3)):
                end = self.foosball_game(table, end + self.rng.uniform(20, 90))
            self.free_at[table.id] = end + 60


def plan_evening(
    tables: list[Table],
    cards: list[Card],
    *,
    seed: int,
    speed: float = 1.0,
    minutes: float = 480.0,
    stuck_after_s: float = 10.0,
) -> list[Action]:
    """The evening's actions in time order.

    `speed` and `stuck_after_s` (the nodes' real-time stuck threshold) size the stuck beam:
    pulses and their filter run in real time, so the beam must stay broken past the threshold
    in real seconds, which is more simulated time the faster the demo runs.
    """
    rng = random.Random(seed)
    p = _Planner(rng, tables, cards, minutes)
    pools, caroms, foos = p.of_kind("pool"), p.of_kind("carom"), p.of_kind("foosball")
    paid = p.paid_cards()
    reserved: dict[str, float] = {}

    if pools:
        # Opening: a queue at the doors takes the first tables within the first minute.
        order = rng.sample(pools, len(pools))
        offline_table = order[0]
        stuck_table = order[-1] if len(order) > 4 else None
        first = [tb for tb in order[:4] if tb is not stuck_table]
        # The first tables show every game, so both rack sizes appear in the first minutes.
        games = rng.sample(["9-ball", "8-ball", "14-1", "9-ball"], 4)
        for i, table in enumerate(first):
            start = rng.uniform(5, 60)
            game = games[i]
            if table is offline_table:
                quiet = (OFFLINE_AT * 60, OFFLINE_AT * 60 + OFFLINE_FOR_S)
                p.play(table, start, rng.uniform(60, 120) * 60, quiet=quiet, game=game)
                p.add(quiet[0], Do.OFFLINE, table.id, note="power cut at the table")
                p.add(quiet[1], Do.ONLINE, table.id)
            elif i == 1:
                p.play(table, start, 0, prepaid=PREPAID_MINUTES, game=game)
            else:
                club = table.club_card and paid and i == 2
                p.play(table, start, rng.uniform(45, 120) * 60, card=rng.choice(paid) if club else None, game=game)
        if stuck_table is not None:
            hold = max(STUCK_MIN_HOLD_S, (stuck_after_s + 2.0) * speed)
            at = STUCK_AT * 60
            pocket = rng.randrange(len(POCKET_WEIGHTS))
            p.add(at, Do.BEAM_BREAK, stuck_table.id, pocket=pocket, note="a ball wedged in the pocket")
            p.add(at + hold, Do.BEAM_CLEAR, stuck_table.id, pocket=pocket)
            reserved[stuck_table.id] = at + hold + 60
    for table in caroms:
        p.play(table, rng.uniform(60, 120), rng.uniform(60, 120) * 60)
    if foos:
        member_table, guest_table = foos[0], foos[-1]
        if paid:
            card = rng.choice(paid)
            p.add(FOOS_CHECKIN_AT * 60, Do.TAP, member_table.id, uid=card.uid, note=card.name)
            p.free_at[member_table.id] = p.foosball_game(member_table, FOOS_CHECKIN_AT * 60 + 10) + 60
        # Two guests without a card start playing on the other table; the bar is told.
        end = FOOS_NO_CARD_AT * 60
        for _ in range(3):
            end += rng.uniform(*GOAL_GAP_S)
            p.add(
                end, Do.GOAL, guest_table.id, side=rng.choice(("home", "away")), pulse_ms=round(rng.uniform(*PULSE_MS), 1), note="no card"
            )
        unpaid = [c for c in cards if not c.paid]
        if unpaid:
            p.add(UNPAID_TAP_AT * 60, Do.TAP, guest_table.id, uid=unpaid[0].uid, note=unpaid[0].name)
        p.free_at[guest_table.id] = max(end, UNPAID_TAP_AT * 60) + 300
        p.foosball_evening(foos, SCRIPTED_BY_MIN * 60)
    p.guests(reserved)
    return sorted(p.actions, key=lambda a: a.at)
