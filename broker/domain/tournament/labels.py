"""What a match's round is called, and where its winner and loser go next. Pure.

Round names are message ids (pages translate them: "Semifinále", "Finále"…); the export to
CueScore-style files and the bracket pages name rounds with them.
"""

from __future__ import annotations

from collections.abc import Sequence

from broker.domain.refusals import N_
from broker.domain.tournament.bracket import Loser, MatchSpec, Winner
from broker.domain.tournament.progress import BYE, MatchState

__all__ = ["is_played", "match_numbers", "next_matches", "round_label"]

# The last rounds of a knockout by how far from its end they are.
_KNOCKOUT_ENDS = {0: N_("Final"), 1: N_("Semi-final"), 2: N_("Quarter-final")}


def round_label(spec: MatchSpec, specs: Sequence[MatchSpec]) -> tuple[str, dict[str, object]]:
    """The round's name as a message id with its parameters."""
    last = max((s.round for s in specs if s.phase == spec.phase), default=spec.round)
    double = any(s.phase == "losers" for s in specs) or any(s.phase == "final" for s in specs)
    if spec.phase == "final":
        return N_("Grand final"), {}
    if spec.phase == "reset":
        return N_("Grand final reset"), {}
    if spec.phase == "losers":
        return (N_("Losers' final"), {}) if spec.round == last else (N_("Losers' round %(n)d"), {"n": spec.round})
    if spec.phase == "group":
        return N_("Group %(group)s, round %(n)d"), {"group": spec.group or "", "n": spec.round}
    if spec.phase == "swiss":
        return N_("Round %(n)d"), {"n": spec.round}
    if double:  # the winners' side of a double elimination
        return (N_("Winners' final"), {}) if spec.round == last else (N_("Winners' round %(n)d"), {"n": spec.round})
    from_end = last - spec.round
    if from_end in _KNOCKOUT_ENDS:
        return _KNOCKOUT_ENDS[from_end], {}
    return N_("Round %(n)d"), {"n": spec.round}


def next_matches(specs: Sequence[MatchSpec]) -> dict[str, tuple[str | None, str | None]]:
    """For each match: the match its winner goes to and the one its loser goes to (None: out, or
    the end)."""
    out: dict[str, tuple[str | None, str | None]] = {s.id: (None, None) for s in specs}
    for s in specs:
        for feed in (s.a, s.b):
            if isinstance(feed, Winner):
                out[feed.match] = (s.id, out[feed.match][1])
            elif isinstance(feed, Loser):
                out[feed.match] = (out[feed.match][0], s.id)
    return out


def is_played(m: MatchState) -> bool:
    """A match that is (or will be) played: no one's bye and not empty. Which side is no one is
    known from the draw (a bye's loser, an empty match's winner), even while the other side is not,
    so this never changes as results come; the grand final's reset counts (played or not, it is
    the last)."""
    return m.spec.phase == "reset" or (m.a is not BYE and m.b is not BYE)


def match_numbers(matches: Sequence[MatchState]) -> dict[str, int]:
    """What staff and players call the matches: 1, 2, 3… in the plan's order, over the matches that
    are played (byes and matches with no one in them are not numbered), so the numbers do not change
    as results come."""
    numbered = [m for m in matches if is_played(m)]
    return {m.id: n for n, m in enumerate(sorted(numbered, key=lambda m: m.spec.order), start=1)}
