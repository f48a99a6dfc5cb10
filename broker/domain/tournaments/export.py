"""A tournament's matches as files: CSV for a spreadsheet, JSON in the shape CueScore's tournament
files use. Pure: the caller gives the names (entrants, rounds already in the reader's language,
tables) and the times.

CueScore publishes no schema. The shape here follows what programs that read CueScore's public
tournament API use (api.cuescore.com/tournament/?id=…: a tournament with `tournamentId`, `name`,
`status` and `matches`, each with `matchId`, `matchno`, `round`, `roundName`, `matchstatus`,
`playerA`/`playerB` {`playerId`, `name`}, `scoreA`, `scoreB`, `raceTo`, `table` {`tableId`,
`name`}, `starttime`, `stoptime`). What CueScore does not say is ours, named in its style:
`winnerNext`/`loserNext` (the match number the winner and the loser go to) and `walkover`.
`matchstatus` is the state the API gives the match (broker.tournaments.views: "waiting",
"ready", "called", "playing"), with CueScore's own word for a match over, "finished" (its public
files say "playing" and "finished"; it documents no list of states, nor its numeric
`matchstatusCode`, which is left out). Byes and matches with no one in them are left out, as
CueScore's lists do.

The CSV is for a person's spreadsheet: its header is message ids (the caller translates them,
Slovak first) and its cells are values (numbers, aware times, the walkover as a bool) that the
caller writes as the project's Slovak-Excel file (broker.domain.csv_cells.excel_csv).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from broker.domain.refusals import N_
from broker.domain.tournaments.labels import is_played, match_numbers, next_played
from broker.domain.tournaments.progress import MatchState, Progress

__all__ = ["CSV_HEADER", "CSV_YES", "ExportNames", "csv_rows", "cuescore_json"]

CSV_HEADER = (
    N_("Match no."),
    N_("Round"),
    N_("Race to"),
    N_("Player A"),
    N_("Player B"),
    N_("Score A"),
    N_("Score B"),
    N_("Walkover"),
    N_("Winner"),
    N_("Table"),
    N_("Started"),
    N_("Finished"),
    N_("Winner goes to no."),
    N_("Loser goes to no."),
)
CSV_YES = N_("yes")  # the walkover column's word


@dataclass(frozen=True)
class ExportNames:
    """What the files call things: entrants by id, each match's round (translated), its table's
    name, when it began at the table and its state as the API says it (by match id)."""

    entrants: Mapping[int, str]
    rounds: Mapping[str, str]
    tables: Mapping[str, tuple[str, str]]  # match -> (table id, table name)
    started: Mapping[str, datetime]
    states: Mapping[str, str]  # match -> the API's state ("waiting", "ready", "called", "playing", "done")


def _status(m: MatchState, names: ExportNames) -> str:
    """The API's state, "finished" (CueScore's word) for "done"."""
    state = names.states.get(m.id, m.status)
    return "finished" if state == "done" else state


def _shown(p: Progress) -> list[MatchState]:
    return [m for m in p.matches if is_played(m) and m.status != "void"]


def _player(entrant: object, names: ExportNames) -> dict[str, Any] | None:
    return {"playerId": entrant, "name": names.entrants.get(entrant, "")} if isinstance(entrant, int) else None


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


def cuescore_json(tournament_id: int, name: str, discipline: str, starts_at: datetime, p: Progress, names: ExportNames) -> dict[str, Any]:
    numbers = match_numbers(p.matches)
    nxt = next_played(p.matches)
    matches = []
    for m in _shown(p):
        win_next, lose_next = nxt.get(m.id, (None, None))
        table = names.tables.get(m.id)
        scores = m.result.scores_for(m.a) if m.result is not None and isinstance(m.a, int) else (None, None)
        matches.append(
            {
                "matchId": m.id,
                "matchno": numbers.get(m.id),
                "tournamentId": tournament_id,
                "round": m.spec.round,
                "roundName": names.rounds.get(m.id, ""),
                "matchstatus": _status(m, names),
                "playerA": _player(m.a, names),
                "playerB": _player(m.b, names),
                "scoreA": scores[0],
                "scoreB": scores[1],
                "raceTo": m.spec.race_to,
                "walkover": bool(m.result and m.result.walkover),
                "winner": m.winner if isinstance(m.winner, int) else None,
                "table": {"tableId": table[0], "name": table[1]} if table else None,
                "starttime": _iso(names.started.get(m.id)),
                "stoptime": _iso(m.result.finished_at if m.result else None),
                "winnerNext": numbers.get(win_next) if win_next else None,
                "loserNext": numbers.get(lose_next) if lose_next else None,
            }
        )
    return {
        "tournamentId": tournament_id,
        "name": name,
        "discipline": discipline,
        "starttime": starts_at.isoformat(),
        "status": "finished" if p.finished else "playing",
        "winner": _player(p.champion, names) if p.champion is not None else None,
        "matches": matches,
    }


def csv_rows(p: Progress, names: ExportNames) -> list[list[object]]:
    """One row per match (CSV_HEADER's columns) as values, the match numbers as staff see them:
    numbers as int, times as aware datetimes, the walkover as a bool, "" where there is nothing."""
    rows: list[list[object]] = []
    by_id = p.by_id
    for m in cuescore_json(0, "", "", p.plan.start, p, names)["matches"]:
        a, b = m["playerA"], m["playerB"]
        result = by_id[m["matchId"]].result
        rows.append(
            [
                m["matchno"] or "",
                m["roundName"],
                m["raceTo"],
                a["name"] if a else "",
                b["name"] if b else "",
                "" if m["scoreA"] is None else m["scoreA"],
                "" if m["scoreB"] is None else m["scoreB"],
                bool(m["walkover"]),
                names.entrants.get(m["winner"], "") if m["winner"] is not None else "",
                m["table"]["name"] if m["table"] else "",
                names.started.get(m["matchId"], ""),
                result.finished_at if result is not None else "",
                m["winnerNext"] or "",
                m["loserNext"] or "",
            ]
        )
    return rows
