"""Closing time: a manager stops every game in the hall at once (issue 19, item 10).

One command, `StopAllGames`, with its one handler here, on the hub's writer. Each game stops
exactly as `StopGame` stops one (broker.floor.games: its own transaction, the light off, the bill
final, the live push), one after the other within this one writer item, so no game starts or stops
in between. What the guests owe is not taken here: each game's tab stays open to be paid at the
bar (the unpaid list on the bills page leads with them), and a tab paid while its game ran is
settled by the stop itself (broker.till.Till.game_billed). Nobody's money is taken without
them, so the confirmation offers one thing: stop them all, their tabs left open or, if already
paid, paid. A tournament's called match is left playing: its game stops with its result, a
walkover or the director's recall (broker.floor.games), never under the players.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field
from sqlalchemy import select

from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.floor import game_ops
from broker.domain.json_shape import json_name
from broker.floor.games import Games, StopGame
from broker.storage.models import Tab
from broker.till.tabs import bill_of_tab

CLOSING_REASON = "closing"


@dataclass(frozen=True)
class ClosedGame:
    """One game stopped at closing and where its money stands."""

    game: Annotated[int, json_name("session_id")]
    table: str
    tab_id: int | None  # the tab it is paid on (the one it was merged into, if so); None: a game from before the till
    owed_cents: Annotated[int, Field(description="What its tab still owes (0: paid); it stays open to be paid")]
    total_cents: Annotated[int, Field(description="The game's own bill")]


@dataclass(frozen=True)
class StoppedAll:
    """The games stopped at closing (the answer of POST /api/sessions/stop-all)."""

    games: Annotated[tuple[ClosedGame, ...], json_name("stopped")]

    @property
    def left_open(self) -> tuple[ClosedGame, ...]:
        return tuple(g for g in self.games if g.owed_cents > 0)


@command
class StopAllGames(Command[StoppedAll]):
    """Stop every running or paused game at once (closing time, a manager's): each stops as StopGame
    stops one; its tab is left open to be paid, or settled if it was paid already (a tournament's
    called match plays on). Answers what stopped."""

    reason: str = CLOSING_REASON


class Closing(Part):
    def __init__(self, hall: HallState, games: Games) -> None:
        self.h = hall
        self._games = games

    @handles(StopAllGames)
    def stop_all(self, c: StopAllGames) -> StoppedAll:
        reason = " ".join(str(c.reason).split())[:200] or CLOSING_REASON
        stopped = []
        for table, game in sorted(self.h.games.view().items(), key=lambda kv: kv[1].id):
            if self._games.matches is not None and self._games.matches.carries_match(game.id):
                continue
            state = self._games.stop(StopGame(game=game.id, reason=reason, actor=c.actor))
            stopped.append((game.id, table, state))
        now = self.h.clock()
        out = []
        with self.h.store.reader() as db:
            for game_id, table, state in stopped:
                tab = db.scalar(select(Tab).where(Tab.session_id == game_id))
                while tab is not None and tab.merged_into is not None:  # merges are one hop; the loop says so
                    tab = db.get(Tab, tab.merged_into)
                owed = bill_of_tab(db, self.h, tab.id, now).owed_cents if tab is not None else 0
                total = game_ops.bill(state, self.h.venue, now).total_cents
                out.append(ClosedGame(game_id, table, tab.id if tab is not None else None, owed, total))
        return StoppedAll(tuple(out))
