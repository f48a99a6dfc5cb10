"""A Lavosliga with 64 entrants on 10 tables (issue 21): the draw, and a result → the TV page.

    .venv/bin/python -m bench.tournament [--entrants 64] [--tables 10] [--format double] [--db URL]

A real Hub (SQLite file by default, or --db, e.g. PostgreSQL; no MQTT: the lights' commands go
nowhere, the rest is the same) with the web app over it, its clock moved by the bench. The entrants
are entered and checked in (each entry fee on its tab), then drawn: the draw is timed from the
command to its answer, the first ten matches called to the tables (their games started) included.
Then every match is played to the end, the one longest on a table first; for each result, timed:
- the command (RecordResult: the result stored, the table's next match called or its game stopped);
- to the push: the tournament's change as the TV's stream hears it (the hub's listener, after commit);
- to the board: GET /tv/{token}/board, the fragment the TV fetches on that push, served through the
  ASGI app in this process (server time, no HTTP client), i.e. the TV's new board is ready.
Printed: the draw, and p50/p95/max of result → push and result → board. Targets: draw < 200 ms,
result → TV board < 1 s p95. The browser's own part (the stream's delivery, the fetch, the DOM) is
measured end to end in tests/dashboard/browser/test_tournament_day.py.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from broker.compose import running_hub
from broker.domain.venue import load_venue
from broker.hall.hub import Hub
from broker.tournaments.results import RecordResult
from broker.tournaments.setup import AddEntrant, CreateTournament, DrawTournament, NewTvLink
from broker.tournaments.state import live_calls, load
from dashboard.api import create_app
from dashboard.web.app import mount_web

LAVOS_VENUE = Path(__file__).resolve().parents[1] / "deploy" / "venues" / "lavos.toml"
START = datetime(2026, 12, 6, 13, 0, tzinfo=UTC)  # Sunday 14:00 in Bratislava


class Clock:
    def __init__(self) -> None:
        self._now = START
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, minutes: float) -> None:
        with self._lock:
            self._now += timedelta(minutes=minutes)


@dataclass
class Figures:
    draw_ms: float = 0.0
    results: int = 0
    push_ms: list[float] = field(default_factory=list)
    board_ms: list[float] = field(default_factory=list)
    matches: int = 0
    finished: bool = False


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def measure(db: str, entrants: int = 64, tables: int = 10, fmt: str = "double", limit: int | None = None) -> Figures:
    """Run one tournament on a fresh hub over `db`; `limit` stops after that many results."""
    clock = Clock()
    out = Figures()
    with running_hub(load_venue(LAVOS_VENUE), db, clock=clock) as hub:
        hub.watchdog.stop()  # the bench calls the rounds' work itself, by the results
        app = mount_web(create_app(hub), hub)
        tid = hub.execute(
            CreateTournament(
                name="Lavosliga II",
                starts_at=clock(),
                league_group="II",
                discipline="10-ball",
                format=fmt,
                race_winners=5,
                race_losers=4,
                race_final=6,
                tables=tuple(f"pool-{i:02d}" for i in range(1, tables + 1)),
                actor="bench",
            )
        )
        for n in range(1, entrants + 1):
            hub.execute(AddEntrant(tournament=tid, name=f"Hráč {n:02d}", check_in=True, actor="bench"))
        token = hub.execute(NewTvLink(tournament=tid, actor="bench"))
        t0 = time.perf_counter()
        hub.execute(DrawTournament(tournament=tid, actor="bench"))
        out.draw_ms = (time.perf_counter() - t0) * 1000
        pushed: list[float] = []

        def hear(topic: str, data: dict[str, Any]) -> None:
            if topic == "tournament" and data.get("tournament") == tid and "match" in data:
                pushed.append(time.perf_counter())

        hub.subscribe(hear)
        with TestClient(app) as client:
            assert client.get(f"/tv/{token}/board").status_code == 200  # the app's first request builds its routes
            while limit is None or out.results < limit:
                progress, on_tables = _state(hub, tid)
                if progress.finished:
                    out.finished = True
                    break
                ready = {m.id: m for m in progress.ready()}
                todo = [ready[m] for m in on_tables if m in ready] or list(ready.values())
                m = todo[0]
                race = m.spec.race_to
                a_wins = out.results % 3 != 0
                pushed.clear()
                t0 = time.perf_counter()
                hub.execute(
                    RecordResult(tournament=tid, match=m.id, score_a=race if a_wins else 1, score_b=2 if a_wins else race, actor="bench")
                )
                r = client.get(f"/tv/{token}/board")
                done = time.perf_counter()
                assert r.status_code == 200
                out.board_ms.append((done - t0) * 1000)
                if pushed:
                    out.push_ms.append((pushed[0] - t0) * 1000)
                out.results += 1
                clock.advance(6)
        hub.unsubscribe(hear)
        out.matches = out.results
    return out


def _state(hub: Hub, tid: int) -> tuple[Any, list[str]]:
    def read() -> tuple[Any, list[str]]:
        with hub.store.reader() as db:
            return load(db, tid).progress, [c.match for c in live_calls(db, tid)]

    return read()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=64)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--format", default="double", choices=("single", "double", "groups", "swiss"))
    parser.add_argument("--db", default=None, help="a database URL (default: a new SQLite file)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or f"sqlite:///{Path(tmp) / 'bench.db'}"
        f = measure(db, args.entrants, args.tables, args.format)
    print(f"{args.entrants} entrants, {args.format}, {args.tables} tables: {f.results} results, finished: {f.finished}")
    print(f"draw (with the first {args.tables} calls): {f.draw_ms:.0f} ms (target < 200 ms)")
    for name, values in (("result → push", f.push_ms), ("result → TV board ready", f.board_ms)):
        print(
            f"{name}: p50 {statistics.median(values):.0f} ms, p95 {_pct(values, 0.95):.0f} ms, max {max(values):.0f} ms"
            + (" (target p95 < 1000 ms)" if "board" in name else "")
        )


if __name__ == "__main__":
    main()
