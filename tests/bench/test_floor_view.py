"""bench/floor_view.py keeps running: its busy evening is made through the hub as it is today, and
the floor view it times shows every table (it stopped once, on the 100-table hall, when the hub began
refusing a member's card on a second table, and nobody ran it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.floor_view import LAVOS_VENUE, measure, venue_file

if TYPE_CHECKING:
    from pathlib import Path


pytestmark = pytest.mark.slow  # two halls migrated, seeded and started: about 7 s


def test_the_floor_view_bench_measures_the_shipped_hall_and_a_large_one(tmp_path: Path) -> None:
    (tmp_path / "small").mkdir()
    (tmp_path / "large").mkdir()
    small = measure(LAVOS_VENUE, tmp_path / "small", 3)
    large = measure(venue_file(tmp_path / "venue.toml", 100), tmp_path / "large", 3)
    assert (small["tables"], large["tables"]) == (14, 100)
    assert small["n"] == large["n"] == 3  # the server timer saw each request
    assert small["card_p50"] > 0 and large["card_p50"] > 0  # and the one card the live floor re-fetches
    assert large["sessions"] >= 50 and large["alerts"] > 0  # a busy evening, not an empty hall
