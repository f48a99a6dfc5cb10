"""The tournaments' reads (`reads.tournaments` on the dashboard): the list, one tournament with its
entrants, matches, standings and money (broker.tournaments.views), its TV link, the match on a table,
a group's season. Read-only store sessions, frozen values out.
"""

from __future__ import annotations

from broker.core.errors import NotFound
from broker.core.ports import HallState
from broker.core.store_errors import store_call
from broker.domain.tournaments.progress import Progress
from broker.tournaments import views
from broker.tournaments.calls import TournamentCalls
from broker.tournaments.season import SeasonRow, season_ranking
from broker.tournaments.setup import tournament_by_token
from broker.tournaments.state import TournamentMissing, load


class TournamentReads:
    """Queries over the tournaments; none of them writes."""

    def __init__(self, hall: HallState, calls: TournamentCalls) -> None:
        self._hall = hall
        self._store = hall.store
        self._calls = calls

    @store_call
    def summaries(self) -> list[views.TournamentSummary]:
        """Tournaments, the latest first."""
        with self._store.reader() as db:
            return views.summaries(db)

    @store_call
    def tournament(self, tournament_id: int) -> views.TournamentView:
        """One tournament with its entrants, matches, tables, standings and money; NotFound."""
        with self._store.reader() as db:
            try:
                return views.view_of(db, self._hall, tournament_id)
            except TournamentMissing as e:
                raise NotFound.like(e) from None

    @store_call
    def tournament_progress(self, tournament_id: int) -> Progress | None:
        """Its matches' state as the rules see it (None before the draw): for the exports."""
        with self._store.reader() as db:
            try:
                return load(db, tournament_id).progress
            except TournamentMissing as e:
                raise NotFound.like(e) from None

    @store_call
    def tournament_by_token(self, token: str) -> views.TournamentView | None:
        """The tournament whose TV link this is (None: no such link, or revoked)."""
        with self._store.reader() as db:
            t = tournament_by_token(db, token)
            return views.view_of(db, self._hall, t.id, public=True) if t is not None else None

    @store_call
    def tournament_call_on(self, table: str) -> views.CallView | None:
        """The tournament's match on `table` now, if any."""
        if not self._calls.has_call(table):
            return None  # the common case, every floor card: no query
        with self._store.reader() as db:
            return views.call_on_table(db, self._hall, table)

    @store_call
    def season(self, group: str, year: int) -> list[SeasonRow]:
        """A Lavosliga group's season ranking in a calendar year."""
        with self._store.reader() as db:
            return season_ranking(db, group, year, self._hall.venue)
