"""bench/tournament.py keeps running: a draw and results through the hub, each timed to the TV's board."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.tournament import measure
from tests.support.sqlite_template import migrated_sqlite

if TYPE_CHECKING:
    from pathlib import Path


pytestmark = pytest.mark.slow  # a hub, 16 entrants checked in, a draw and 10 results: a few seconds


def test_the_tournament_bench_times_the_draw_and_each_result_to_the_tv_board(tmp_path: Path) -> None:
    f = measure(migrated_sqlite(tmp_path / "bench.db"), entrants=16, tables=4, limit=10)
    assert f.results == 10 and len(f.board_ms) == 10 and len(f.push_ms) == 10, "every result was pushed and its board served"
    assert f.draw_ms > 0 and all(ms > 0 for ms in f.board_ms)
