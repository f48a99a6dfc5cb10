"""The season's ranking of a Lavosliga group: points per place of every finished tournament of the
group in a calendar year (each tournament's own points table), summed per player. A player is the
same across tournaments by their member record, a walk-in by their name; a pair by both.
Read-only: any session. The seeded draw ranks its entrants by these points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.domain.tariffs import local
from broker.domain.tournaments.standings import season_points, standings
from broker.domain.venue import Venue
from broker.storage.models import Tournament, TournamentEntrant
from broker.tournaments.state import entrant_name, load

__all__ = ["SeasonRow", "season_ranking", "season_ratings"]


def player_key(e: TournamentEntrant) -> str:
    """Who an entrant is across tournaments."""
    one = f"m{e.member_id}" if e.member_id is not None else f"n:{e.name.casefold()}"
    if not e.name2:
        return one
    two = f"m{e.member2_id}" if e.member2_id is not None else f"n:{e.name2.casefold()}"
    return "+".join(sorted((one, two)))


@dataclass(frozen=True)
class SeasonRow:
    place: int
    name: str
    points: int
    tournaments: int


def _season_points(db: Db, group: str, year: int, venue: Venue, before: datetime | None = None) -> dict[str, tuple[str, int, int]]:
    """player key -> (name, points, tournaments played) over the group's finished tournaments of `year`."""
    out: dict[str, tuple[str, int, int]] = {}
    ids = db.scalars(
        select(Tournament.id)
        .where(Tournament.league_group == group, Tournament.finished_at.is_not(None))
        .order_by(Tournament.starts_at, Tournament.id)
    ).all()
    for tid in ids:
        loaded = load(db, tid)
        t = loaded.t
        if local(t.starts_at, venue).year != year or (before is not None and t.starts_at >= before) or loaded.progress is None:
            continue
        table = {int(k): int(v) for k, v in (t.options or {}).get("season_points", {}).items()}
        points = season_points(standings(loaded.progress), table)
        by_id = {e.id: e for e in loaded.entrants}
        for entrant, pts in points.items():
            e = by_id[entrant]
            key = player_key(e)
            _name, total, played = out.get(key, (entrant_name(e), 0, 0))
            out[key] = (entrant_name(e), total + pts, played + 1)
    return out


def season_ranking(db: Db, group: str, year: int, venue: Venue) -> list[SeasonRow]:
    """The ranking, best first; equal points share a place."""
    rows = sorted(_season_points(db, group, year, venue).values(), key=lambda r: (-r[1], r[0].casefold()))
    out: list[SeasonRow] = []
    for n, (name, points, played) in enumerate(rows, start=1):
        place = out[-1].place if out and out[-1].points == points else n
        out.append(SeasonRow(place, name, points, played))
    return out


def season_ratings(db: Db, t: Tournament, entrants: Sequence[TournamentEntrant], venue: Venue | None = None) -> dict[int, int]:
    """Each entrant's season points before this tournament (its group, its year): the seeded draw's order."""
    if not t.league_group or venue is None:
        return {}
    points = _season_points(db, t.league_group, local(t.starts_at, venue).year, venue, before=t.starts_at)
    return {e.id: points.get(player_key(e), ("", 0, 0))[1] for e in entrants}
