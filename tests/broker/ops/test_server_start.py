"""`lavos server` becoming the hub (broker/ops/server.py HubPlan.become_hub): the order of its start.

Issue 29, item 42: the server started its hub (the MQTT link, the writer) and only then built the
dashboard's web app, seconds of CPU (imports, FastAPI's routes) in the same interpreter. A server
restarted with a backlog queued for its session drained it while that ran, the two taking turns
on one interpreter lock: a third of a bare subscriber's rate, against 0.7 and more for the same
hub without the web app (bench/hub_ingest.py now drives the shipped process and shows both).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench.hub_ingest import make_session
from broker.domain.venue import load_venue
from broker.ops.server import HubPlan, Web
from tests.support.hub import VENUE, hub_url
from tests.support.mqtt import publish_events
from tests.support.sqlite_template import migrated_sqlite
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


def test_the_hub_receives_nothing_until_the_web_app_is_built(mosquitto: Mosquitto, tmp_path: Path) -> None:
    url = hub_url(mosquitto, "lavos-hub-start-order")
    assert url.username is not None
    make_session(mosquitto.port, url.username)  # the hub's persistent session, offline,
    publish_events(mosquitto.port, "pool-01", "start-order", 3)  # with a backlog queued for it
    seen: dict[str, int] = {}
    hubs: list[Any] = []

    def app_for(hub: Any, data_dir: Any, https_cookies: Any) -> Callable[..., Any]:
        hubs.append(hub)
        seen["connects"], seen["received"], seen["applied"] = hub.link.stats.connects, hub.link.stats.received, hub.handlers.applied
        return lambda scope, receive, send: None  # the dashboard itself is not the subject here

    def never(*args: object) -> Any:
        raise AssertionError("become_hub serves nothing: serve_now and serve_standby do")

    web = Web(app_for=app_for, standby=never, http_server=never)
    plan = HubPlan(
        load_venue(VENUE),
        migrated_sqlite(tmp_path / "lavos.db"),
        url,
        tmp_path,
        False,
        "WARNING",
        lambda: None,
        web,
        link_process=False,  # the order is the plan's; the link's own process is test_link_process.py's
    )
    threshold = gc.get_threshold()
    try:
        plan.become_hub()
        assert seen == {"connects": 0, "received": 0, "applied": 0}, seen
        wait_until(lambda: hubs[0].handlers.applied == 3, what="the backlog applied once the hub started")
    finally:
        plan.close()
        gc.unfreeze()  # become_hub settles the heap for a process that is the hub for life; this one is pytest's
        gc.set_threshold(*threshold)
