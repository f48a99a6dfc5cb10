"""bench/failover.py keeps running, cheaply: one takeover after a SIGKILL (on the suite's PostgreSQL),
timed, with its check that Mosquitto never saw two hubs. Times are not asserted here (the machine is
shared): the bench prints them, and the README's Performance section gives them with the command."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from bench.failover import main

if TYPE_CHECKING:
    from tests.support.postgres import PostgresCluster


def test_the_failover_bench_times_a_takeover(postgres_cluster: PostgresCluster, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--rounds", "1", "--kinds", "kill", "--standby-poll", "0.5"], cluster=postgres_cluster) == 0  # 1: two hubs at once
    out = capsys.readouterr().out
    assert "kill: the standby leads (/api/health 200)      n=1" in out and "kill: the hub's MQTT session resumed" in out, out
    assert "never two hubs" in out, out
