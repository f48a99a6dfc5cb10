"""What a match's round is called, where its players come from and where its winner and loser go
next. Pure.

Round names are message ids (pages translate them: "Semifinále", "Finále"…); the export to
CueScore-style files and the bracket pages name rounds with them. A bye match is nobody's match
and has no number: where a player comes from and where one goes next are followed through it, to
the match before it (or the player who had the bye) and to the match its one player goes on to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from broker.domain.refusals import N_
from broker.domain.tournaments.bracket import Bye, Dropped, Feed, Loser, MatchSpec, Placed, Seat, Winner
from broker.domain.tournaments.progress import BYE, MatchState

__all__ = ["feed_label", "is_played", "match_numbers", "next_matches", "next_played", "round_label", "source"]

Label = tuple[str, dict[str, object]]

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


def source(feed: Feed, by_id: Mapping[str, MatchState]) -> Feed:
    """Where a side really comes from: the winner of a bye match is whoever is on its other side,
    followed back through as many bye matches as there are (a losers' bye's player is the loser
    of a winners' match); a match with no one in it gives no one."""
    seen = 0
    while isinstance(feed, Winner) and seen < len(by_id):
        m = by_id.get(feed.match)
        if m is None or is_played(m):
            break
        if m.a is BYE and m.b is BYE:
            return Bye()
        feed = m.spec.b if m.a is BYE else m.spec.a
        seen += 1
    return feed


def feed_label(feed: Feed, by_id: Mapping[str, MatchState], numbers: Mapping[str, int], names: Mapping[int, str]) -> Label | None:
    """Where a side not known yet comes from, as a message id with its parameters ("Winner of no.
    7"), always naming a numbered match (or the player who had the bye); None for no one."""
    feed = source(feed, by_id)
    if isinstance(feed, Dropped):  # the bye rule may bring another loser of the same drop here
        others = [numbers[m] for m in feed.others if m in numbers]
        if len(others) == 1:
            return N_("Loser of no. %(n)d or no. %(m)d"), {"n": numbers.get(feed.match, 0), "m": others[0]}
        if others:
            return N_("Loser of no. %(n)d or of one of no. %(others)s"), {
                "n": numbers.get(feed.match, 0),
                "others": ", ".join(str(n) for n in sorted(others)),
            }
    if isinstance(feed, Winner | Loser) and feed.match in numbers:
        word = N_("Winner of no. %(n)d") if isinstance(feed, Winner) else N_("Loser of no. %(n)d")
        return word, {"n": numbers[feed.match]}
    if isinstance(feed, Placed):
        return N_("%(place)d. of group %(group)s"), {"place": feed.place, "group": feed.group}
    if isinstance(feed, Seat) and feed.entrant in names:
        return N_("%(name)s (a bye)"), {"name": names[feed.entrant]}
    return None


def next_played(matches: Sequence[MatchState]) -> dict[str, tuple[str | None, str | None]]:
    """Where each match's winner and loser play next (next_matches), through the bye matches on
    the way (a bye's one player goes on at once, to where its winner goes), and, once the bye rule
    has placed the first drop's losers, where each of them really went."""
    by_id = {m.id: m for m in matches}
    raw = next_matches([m.spec for m in matches])

    def played(mid: str | None) -> str | None:
        for _ in range(len(by_id)):
            if mid is None or is_played(by_id[mid]):
                return mid
            mid = raw[mid][0]
        return mid

    out = {mid: (played(w), played(lo)) for mid, (w, lo) in raw.items()}
    for m in matches:
        for feed, player in ((m.spec.a, m.a), (m.spec.b, m.b)):
            if isinstance(feed, Dropped) and isinstance(player, int):
                came = next((x for x in feed.others if by_id[x].loser == player), None)
                if came is not None:
                    out[came] = (out[came][0], played(m.id))
    return out
