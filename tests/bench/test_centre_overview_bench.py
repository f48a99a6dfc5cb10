"""bench/centre_overview.py keeps running: a few halls' year written as the centre holds it, today's
payments through the records API, and the operator's pages timed; what the pages show adds up to
what was written. Times are not asserted (the machine is shared): `python -m bench.centre_overview`
runs 100 halls × a year and prints the figures against the target."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.centre_overview import PAGES, report, run

if TYPE_CHECKING:
    from tests.support.postgres import PostgresCluster


pytestmark = pytest.mark.slow  # a PostgreSQL database, a few thousand rows, a few pages: about 5 s


def test_the_centre_bench_fills_a_year_ingests_today_and_times_every_page(
    postgres_cluster: PostgresCluster, postgres_template: str
) -> None:
    url = postgres_cluster.create_database(template=postgres_template)
    try:
        made, pages = run(url, halls=3, days=20, per_day=6, requests=3)
    finally:
        postgres_cluster.drop_database(url)
    assert made.records == 3 * 21 * 6 and made.today == 3 * 6  # the year and today, every record held once
    assert made.takings_rows >= 3 * 20  # a sum per hall and day (and method)
    assert set(pages) == set(PAGES) and all(r["n"] == 3 for r in pages.values())
    lines = report(made, pages, 20, 6)
    assert any(line.startswith("target: every page p95 < 300 ms") for line in lines)
