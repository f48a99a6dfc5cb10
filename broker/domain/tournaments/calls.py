"""Which match goes to a table next, and when a called match is forfeited for a late start. Pure.

A table of the tournament that frees gets the ready match that has waited longest (its last player
known first: Progress.ready), skipping a match one of whose players is at another table now (in a
round-robin group or a Swiss round, one player can be in several ready matches at once).

SBiZ rule 1.7: a player must be ready to play within 15 minutes of the match's start, the start
being when it was called (or announced, whichever is later), else the opponent wins by walkover.
The hub offers the walkover; staff confirm it (who was late is their call, not the clock's).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from broker.domain.tournaments.progress import MatchState, Progress

__all__ = ["LATE_START", "callable_matches", "walkover_due"]

LATE_START = timedelta(minutes=15)  # SBiZ 1.7


def callable_matches(p: Progress, called: Collection[str], busy: Collection[int]) -> list[MatchState]:
    """The matches that may be called to a table now, longest-waiting first: ready, not called
    already, and none of whose players is playing (or called to) another match (`busy`)."""
    out: list[MatchState] = []
    taken = set(busy)
    for m in p.ready():
        if m.id in called or m.players is None:
            continue
        a, b = m.players
        if a in taken or b in taken:
            continue
        out.append(m)
        taken.update((a, b))  # each player once: the next free table takes the next pair
    return out


def walkover_due(called_at: datetime, started_at: datetime | None, now: datetime) -> bool:
    """A called match nobody began within LATE_START of its call: its walkover is to be offered."""
    return started_at is None and now - called_at >= LATE_START
