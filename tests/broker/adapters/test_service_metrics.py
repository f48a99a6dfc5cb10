"""Issue 3, must show 5, through the whole service: drops, lights and node health reach
VictoriaMetrics; with it stopped they spool, and after it returns every point arrives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from broker.adapters.metrics import MetricsWriter
from broker.floor.games import StartGame
from tests.broker.floor.test_service_e2e import drop_balls
from tests.support.hub import link_of, running_node, running_service
from tests.support.victoria import stat_count
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto
    from tests.support.victoria import VictoriaMetrics


def pocket_points(victoria: Any, table: str) -> int:
    return sum(1 for name, labels, _, _ in victoria.samples("pocket_count") if labels.get("table") == table)


def test_drops_reach_victoria_metrics_even_across_an_outage(mosquitto: Mosquitto, victoria: VictoriaMetrics, tmp_path: Path) -> None:
    metrics = MetricsWriter(
        victoria.url, "token", "lavos", "lavos", tmp_path / "spool", flush_interval=0.2, retry_initial=0.2, retry_max=1.0
    )
    with (
        running_service(mosquitto, tmp_path / "hub.db", metrics=metrics) as svc,
        running_node(mosquitto, tmp_path, "pool-10") as (node, factory),
    ):
        wait_until(lambda: link_of(node).connected)
        svc.execute(StartGame(table="pool-10", actor="anna"))
        drop_balls(factory, node, 0, 10)
        wait_until(lambda: pocket_points(victoria, "pool-10") == 10, timeout=20, what="10 points in VictoriaMetrics")
        victoria.stop()
        drop_balls(factory, node, 3, 15)
        wait_until(lambda: svc.runtime["pool-10"].drops == 25, what="25 drops applied")
        wait_until(lambda: stat_count(metrics.stats(), "spooled") > 0, timeout=20, what="points spooled while it is down")
        victoria.start()
        wait_until(lambda: pocket_points(victoria, "pool-10") == 25, timeout=60, what="all 25 points after the outage")
        assert metrics.stats()["dropped"] == 0
