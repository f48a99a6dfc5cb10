"""When a running game's bill next shows another amount, with no one doing anything.

Pages draw a running game's amount once; it grows with the clock alone (a carom table has no
pockets, so nothing at the table ever announces anything). The server is the clock: it says when
the amount it drew will change, and the page fetches it again then, so what a page shows is what
the API says, never a guess made in the browser. Pure: a state, the venue and a moment in, an
instant out.

The bill changes only where a time line bills one more unit (`billing.billed_seconds`: every
started unit counts, so just after the line's played time passes a whole number of units) or
where a rate change opens a new line (a band, the end of a tariff's hours, a new fee year). Those
instants are the candidates; the bill itself decides, at each in turn, whether the amount moved
there (a minimum charge not reached yet, or a rate too small to add a cent per unit, does not).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from itertools import groupby

from broker.domain.floor import game_ops
from broker.domain.tariffs import Segment, as_utc
from broker.domain.venue import Venue

# Looked ahead at most this far: a page whose amount does not move sooner (the minimum charge
# covers the first half hour) looks again then, and is told the next time.
HORIZON = timedelta(minutes=15)
MAX_LOOKS = 40  # bills worked out per question (a 15-minute horizon has 15 minute units)
_US = timedelta(microseconds=1)  # billing counts whole microseconds: the unit is billed just after its start


def amount_moves_at(state: game_ops.GameState, venue: Venue, now: datetime, horizon: timedelta = HORIZON) -> datetime | None:
    """The first instant after `now` at which the game's bill shows another total; `now + horizon`
    when it does not change before then (ask again then); None when it never changes by itself
    (a paused or stopped game)."""
    if state.state != "running":
        return None
    now = as_utc(now, "now")
    end = now + horizon
    before = game_ops.bill(state, venue, now).total_cents
    for n, at in enumerate(_unit_starts(game_ops.segments(state, venue, end), venue.billing.unit_s, now, end)):
        if n >= MAX_LOOKS:
            break
        if game_ops.bill(state, venue, at).total_cents != before:
            return at
    return end


def _unit_starts(segments: Iterable[Segment], unit_s: int, after: datetime, until: datetime) -> list[datetime]:
    """Each instant in (after, until] at which a time line starts billing one more unit, in order."""
    return sorted(_each_unit_start(segments, timedelta(seconds=unit_s), after, until))


def _each_unit_start(segments: Iterable[Segment], unit: timedelta, after: datetime, until: datetime) -> Iterator[datetime]:
    # One line per run of segments with the same key, as billing.time_lines groups them. Within a
    # segment the line's played time runs from `played` to `played + duration`; it bills one more
    # unit just after each whole number of units m in [played, played + duration), at
    # start + (m - played). Only the m whose instant is after `after` are counted.
    for _, run in groupby(segments, key=lambda s: s.key):
        played = timedelta()
        for s in run:
            k = -(-max(played, played + (after - s.start)) // unit)  # ceiling: the first such m, in units
            while k * unit < played + s.duration:
                at = s.start + (k * unit - played) + _US
                if at > until:
                    break
                if at > after:
                    yield at
                k += 1
            played += s.duration
