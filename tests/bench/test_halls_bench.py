"""bench/halls.py keeps running: a few halls' brokers bridged into the centre's with the shipped files,
the centre (its live subscriber and its records API on HTTPS) and the bare subscriber both receive every
message once, published straight to the centre (the baseline) and through the bridges, the halls'
payments reach the centre, and the report prints the target's line. Times are
not asserted: the machine is shared; `python -m bench.halls` runs the 20 halls for a minute."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.halls import PHASES, lost, report, run

if TYPE_CHECKING:
    from pathlib import Path

    from tests.support.postgres import PostgresCluster


# Starts 4 Mosquitto brokers, the centre and the baseline and the halls' hubs as processes of their
# own (multiprocessing), on a PostgreSQL database: about 15 s.
pytestmark = pytest.mark.slow


def test_the_halls_bench_sees_every_message_at_the_centre_and_the_baseline(
    tmp_path: Path, postgres_cluster: PostgresCluster, postgres_template: str
) -> None:
    url = postgres_cluster.create_database(template=postgres_template)
    try:
        r = run(3, 3, 2, tmp_path, url, record_every_s=0.5)
    finally:
        postgres_cluster.drop_database(url)
    for phase in PHASES:
        assert r.results[f"publisher:{phase}"]["sent"] == r.expected == 18, phase
    for consumer in ("bare", "centre"):
        assert r.results[consumer]["received"] == dict.fromkeys(PHASES, r.expected) and r.results[consumer]["duplicates"] == 0, consumer
    assert lost(r) == 0
    assert r.results["records"]["paid"] >= 3 and r.results["records"]["undelivered"] == 0
    assert len(r.results["centre"]["record_lags"]) == r.results["records"]["paid"]  # each payment applied once
    lines = report(r)
    assert any(line.startswith("target: the centre's lag p99 < 2 s") for line in lines)
    assert any(line.startswith("what the bridges cost") for line in lines) and any("hall brokers" in line for line in lines)
