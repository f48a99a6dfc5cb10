"""A tournament's table time: the games its calls started (the light, the time at the tournament's
rate), for its own report and for the Z report of the day they were played on. Read-only, any
session; it imports nothing of the till, so the close-out can read it without an import circle.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session as Db

from broker.core.ports import HallState
from broker.domain.floor import game_ops
from broker.domain.floor.game_log import replay_row
from broker.domain.schedule import business_day, business_day_bounds
from broker.domain.till.zreport import TournamentTime
from broker.storage.models import Game, Tournament, TournamentCall

__all__ = ["table_time", "table_time_on"]


def _games(db: Db, tournament_ids: Iterable[int]) -> dict[int, list[Game]]:
    rows = db.execute(
        select(TournamentCall.tournament_id, Game)
        .join(Game, Game.id == TournamentCall.game_id)
        .where(TournamentCall.tournament_id.in_(list(tournament_ids)))
        .order_by(Game.id)
    ).all()
    out: dict[int, dict[int, Game]] = {}
    for tid, game in rows:
        out.setdefault(tid, {})[game.id] = game
    return {tid: list(games.values()) for tid, games in out.items()}


def _time(hall: HallState, t: Tournament, games: list[Game], now: datetime) -> TournamentTime:
    venue = hall.venue
    seconds = 0
    billed = 0
    for game in games:
        state = replay_row(game, venue)
        end = now if state.is_open else state.last_at
        seconds += sum(int((s.end - s.start).total_seconds()) for s in game_ops.segments(state, venue, end))
        billed += game_ops.bill(state, venue, max(end, state.last_at)).total_cents
    minutes = seconds // 60
    rate = venue.tariff(venue.billing.default_tariff).rate_cents_per_hour
    return TournamentTime(t.id, t.name, len(games), minutes, billed, (minutes * rate + 30) // 60)


def table_time(db: Db, hall: HallState, tournament: Tournament, now: datetime) -> TournamentTime:
    """One tournament's table time so far (its games running up to `now`)."""
    return _time(hall, tournament, _games(db, [tournament.id]).get(tournament.id, []), now)


def table_time_on(db: Db, hall: HallState, day: date, now: datetime) -> list[TournamentTime]:
    """The tournaments whose games started on business day `day`, with the time of those games."""
    start, end = business_day_bounds(day, hall.venue)
    rows = db.execute(
        select(TournamentCall.tournament_id)
        .join(Game, Game.id == TournamentCall.game_id)
        .where(Game.started_at >= start, Game.started_at < end)
    ).all()
    ids = sorted({tid for (tid,) in rows})
    if not ids:
        return []
    games = _games(db, ids)
    tournaments = {t.id: t for t in db.scalars(select(Tournament).where(Tournament.id.in_(ids)))}
    out = []
    for tid in ids:
        mine = [g for g in games.get(tid, []) if business_day(g.started_at, hall.venue) == day]
        out.append(_time(hall, tournaments[tid], mine, now))
    return out
