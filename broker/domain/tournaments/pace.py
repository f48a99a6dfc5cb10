"""When the tournament will be over, from the pace of its matches so far. Pure.

A match raced to R takes about 1.7 R racks (evenly matched players: the loser wins most of R - 1);
a rack takes what the finished matches took per rack (their duration from the call's start to the
result over the racks played), or the discipline's usual time before any match has finished.
The rest is laid on the tournament's tables in order, each match as soon as its players can be
known and a table is free.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from broker.domain.tournaments.bracket import Dropped, Feed, Loser, MatchSpec, Placed, Winner
from broker.domain.tournaments.progress import MatchState, Progress

__all__ = ["RACK_S", "expected_finish", "seconds_per_rack"]

# A rack (a point in 14/1, carom) before the day has shown its own pace: the club's evenings.
RACK_S = {"8-ball": 330.0, "9-ball": 240.0, "10-ball": 270.0, "14-1": 35.0, "carom": 60.0}
RACKS_PER_RACE = 1.7


def seconds_per_rack(p: Progress, started: Mapping[str, datetime]) -> float:
    """The pace so far: seconds per rack over the finished matches that were started at a table."""
    spent = 0.0
    racks = 0
    for m in p.matches:
        if m.status == "done" and m.result and not m.result.walkover and m.id in started:
            spent += max(0.0, (m.result.finished_at - started[m.id]).total_seconds())
            racks += m.result.score_a + m.result.score_b
    return spent / racks if racks else RACK_S[p.plan.rules.discipline]


def _deps(spec: MatchSpec, groups: Mapping[str, list[str]]) -> list[str]:
    out: list[str] = []
    feeds: tuple[Feed, Feed] = (spec.a, spec.b)
    for f in feeds:
        if isinstance(f, Winner | Loser):
            out.append(f.match)
        if isinstance(f, Dropped):  # the bye rule's drop: known once the losers it consults are
            out.extend(f.others)
        elif isinstance(f, Placed):
            out.extend(groups.get(f.group, []))
    return out


def expected_finish(p: Progress, now: datetime, tables: int, started: Mapping[str, datetime]) -> datetime | None:
    """The expected end of the last match (None once it is over)."""
    if p.finished:
        return None
    rack = seconds_per_rack(p, started)

    def length(m: MatchState) -> timedelta:
        return timedelta(seconds=rack * RACKS_PER_RACE * m.spec.race_to)

    groups: dict[str, list[str]] = {}
    for m in p.matches:
        if m.spec.group:
            groups.setdefault(m.spec.group, []).append(m.id)
    finish: dict[str, datetime] = {}
    free = [now] * max(1, tables)
    heapq.heapify(free)
    pending: list[MatchState] = []
    for m in p.matches:
        if m.status in ("done", "bye", "void"):
            finish[m.id] = min(now, m.decided_at or now)
        elif m.id in started:
            finish[m.id] = max(now, started[m.id] + length(m))
            heapq.heapreplace(free, max(free[0], finish[m.id]))
        else:
            pending.append(m)
    end = max(max(finish.values(), default=now), _lay(pending, finish, groups, free, length, now))
    if p.plan.rules.format == "swiss":
        end += _swiss_rounds_left(p) * _round_length(p, rack, tables)
    return end


def _lay(
    pending: list[MatchState],
    finish: dict[str, datetime],
    groups: Mapping[str, list[str]],
    free: list[datetime],
    length: Callable[[MatchState], timedelta],
    now: datetime,
) -> datetime:
    """Lay the pending matches on the tables (`free`: when each is free, a heap) in order: of those
    whose players' matches are all laid, the earliest ready first (then the plan's order). A heap of
    the ones that can be laid, fed as their last feed is: a 64-entrant bracket's 126 matches in a
    few milliseconds (the TV re-draws at every result). Answers the last one's end (`now` if none)."""
    end = now
    deps = {m.id: _deps(m.spec, groups) for m in pending}
    by_id = {m.id: m for m in pending}
    unlaid = {mid: {d for d in ds if d not in finish} for mid, ds in deps.items()}
    dependents: dict[str, list[str]] = {}
    for mid, ds in unlaid.items():
        for d in ds:
            dependents.setdefault(d, []).append(mid)

    def ready_of(mid: str) -> datetime:
        return max((finish[d] for d in deps[mid]), default=now)

    todo = [(ready_of(mid), by_id[mid].spec.order, mid) for mid, ds in unlaid.items() if not ds]
    heapq.heapify(todo)
    while todo:
        ready, _, mid = heapq.heappop(todo)
        begin = max(heapq.heappop(free), ready)
        finish[mid] = begin + length(by_id[mid])
        heapq.heappush(free, finish[mid])
        end = max(end, finish[mid])
        for later in dependents.get(mid, ()):
            unlaid[later].discard(mid)
            if not unlaid[later]:
                heapq.heappush(todo, (ready_of(later), by_id[later].spec.order, later))
    return end


def _swiss_rounds_left(p: Progress) -> int:
    played = max((m.spec.round for m in p.matches), default=0)
    return max(0, p.swiss_rounds - played)


def _round_length(p: Progress, rack: float, tables: int) -> timedelta:
    per_round = len(p.plan.draw) // 2
    waves = -(-per_round // max(1, tables))
    return timedelta(seconds=waves * rack * RACKS_PER_RACE * p.plan.rules.races.winners)
