"""What a tournament is played as: its format, races, break and handicap. Pure.

The club's Lavosliga (shared/DOMAIN.md, the seed text): every second Sunday at 14:00, two groups
(I: the public, 8-ball; II: registered league players, 10-ball), SBiZ rules: race-to-N, the break,
a shot clock when set, a 15-minute late-start forfeit (rule 1.7).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from broker.domain.refusals import N_, Refusal

__all__ = [
    "BREAK_RULES",
    "DISCIPLINES",
    "FORMATS",
    "MAX_ENTRANTS",
    "BreakRule",
    "Discipline",
    "Format",
    "Races",
    "Rules",
    "TournamentRefused",
]

Format = Literal["single", "double", "groups", "swiss"]
Discipline = Literal["8-ball", "9-ball", "10-ball", "14-1", "carom"]
BreakRule = Literal["alternate", "winner"]
FORMATS: tuple[str, ...] = get_args(Format)
DISCIPLINES: tuple[str, ...] = get_args(Discipline)
BREAK_RULES: tuple[str, ...] = get_args(BreakRule)

MAX_ENTRANTS = 128  # a Sunday in one hall; more is a typing mistake
MAX_RACE = 50  # 14/1 is played to 50, 75 or 100 points: below 100 for a Sunday
MAX_RACE_14_1 = 150


class TournamentRefused(Refusal):
    """A tournament, a draw or a result that cannot be as asked; nothing is stored."""


@dataclass(frozen=True)
class Races:
    """Race-to per phase: the winners' side (and every match of a single-elimination, group or
    Swiss round), the losers' side, and the final(s)."""

    winners: int
    losers: int
    final: int


@dataclass(frozen=True)
class Rules:
    """How a tournament is played. `grand_final_reset`: in double elimination, a second final is
    played only if the losers' side wins the first one. `group_size`/`advance`: round-robin groups
    of about that size, whose best `advance` go on to a knockout. `swiss_rounds`: None plays
    ceil(log2(entrants)). `handicap`: an entrant's start score (below the race) by entrant id."""

    format: Format
    races: Races
    discipline: Discipline = "8-ball"
    break_rule: BreakRule = "alternate"
    grand_final_reset: bool = True
    group_size: int = 4
    advance: int = 2
    swiss_rounds: int | None = None
    handicap: Mapping[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_rules(self)

    def start_score(self, entrant: int) -> int:
        return self.handicap.get(entrant, 0)


def check_rules(r: Rules) -> None:
    if r.format not in FORMATS:
        raise TournamentRefused(N_("Unknown tournament format %(format)s."), format=r.format)
    if r.discipline not in DISCIPLINES:
        raise TournamentRefused(N_("Unknown discipline %(discipline)s."), discipline=r.discipline)
    if r.break_rule not in BREAK_RULES:
        raise TournamentRefused(N_("Unknown break rule %(rule)s."), rule=r.break_rule)
    top = MAX_RACE_14_1 if r.discipline == "14-1" else MAX_RACE
    for race in (r.races.winners, r.races.losers, r.races.final):
        if not 1 <= race <= top:
            raise TournamentRefused(N_("A race must be to between 1 and %(top)d."), top=top)
    if not 2 <= r.group_size <= 16:
        raise TournamentRefused(N_("A group has between 2 and 16 players."))
    if not 1 <= r.advance <= r.group_size:
        raise TournamentRefused(N_("Between 1 and the group's size go on from each group."))
    if r.swiss_rounds is not None and not 1 <= r.swiss_rounds <= 15:
        raise TournamentRefused(N_("A Swiss tournament has between 1 and 15 rounds."))
    lowest = min(r.races.winners, r.races.losers, r.races.final)
    for start in r.handicap.values():
        if not 0 <= start < lowest:
            raise TournamentRefused(N_("A handicap start score must be below the race (to %(race)d)."), race=lowest)
