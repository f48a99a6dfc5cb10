"""The one composition root: how a hub is put together from a venue, a store and its links.

`lavos server`, the demo, the tests and the benchmarks all build their hub here, so a new part
of the hub (or a new constructor argument) is wired once. The web app is not made here: the
dashboard sits above the hub, so `dashboard/cli.py` builds it from the hub this returns.

    hub = build_hub(venue, store, mqtt_url=url, metrics=writer)   # loads state from the database
    hub.start()                                                  # ingest, MQTT, timers
    ...
    hub.close()                                                  # also closes `metrics`

or, when the caller has nothing else to do in between:

    with running_hub(venue, "sqlite:///lavos.db", mqtt_url=url) as hub: ...
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher

from broker.adapters.box_sensors import BoxSensors
from broker.adapters.heap import settle_heap
from broker.adapters.hub_link import HUB_CLIENT_ID, MqttUrl
from broker.domain.venue import Venue
from broker.hall.hub import Hub
from broker.outbox.records import CentralSettings
from broker.storage.engine import Store, default_data_dir, default_db_url, open_store
from broker.storage.errors import StoreError

__all__ = [
    "BoxSensors",
    "CentralSettings",
    "Store",
    "StoreError",
    "build_hub",
    "default_data_dir",
    "default_db_url",
    "metrics_writer",
    "open_store",
    "running_hub",
    "settle_heap",
]

METRICS_SPOOL = "metrics-spool"  # under the data directory: points kept while the metrics server is away


def build_hub(
    venue: Venue,
    store: Store,
    *,
    mqtt_url: MqttUrl | None = None,
    metrics: Any = None,
    clock: Callable[[], datetime] | None = None,
    client_id: str | None = None,
    share_group: str | None = None,
    inbox_bound: int | None = None,
    link_process: bool = False,
    home_assistant: bool = False,
    data_dir: Path | None = None,
    password_hasher: PasswordHasher | None = None,
    central: CentralSettings | None = None,
    box: BoxSensors | None = None,
) -> Hub:
    """A hub over `store`, its state loaded from the database, not started yet.

    `client_id` matters only for a login-less MQTT URL: with the shipped broker config the client
    id is the login, so the login names the hub's persistent session (`lavos-hub` for the hall's
    hub; a standby that takes over logs in as the same user and resumes that session).
    `home_assistant=True`: MQTT discovery for Home Assistant (broker.floor.home_assistant), read-only.
    `mqtt_url=None`: no MQTT at all (tools, page benchmarks, in-process tests of the API).
    `central`: send the hall's records to the central reporting hub (broker.outbox.records).
    `box`: the hub box watches its clock, backups and certificates (broker.floor.box_watch).
    `link_process=True`: the MQTT link runs in a child process (what `lavos server` does; see
    broker.adapters.link_process), so receiving does not compete with the writer for one core.
    """
    kwargs: dict[str, Any] = {"clock": clock} if clock is not None else {}
    if password_hasher is not None:  # the login's argon2 costs (default: the library's recommended)
        kwargs["password_hasher"] = password_hasher
    if inbox_bound is not None:  # how many received messages may wait unacked (back-pressure beyond)
        kwargs["inbox_bound"] = inbox_bound
    return Hub(
        venue,
        store,
        mqtt_url=mqtt_url,
        metrics=metrics,
        share_group=share_group,
        link_process=link_process,
        home_assistant=home_assistant,
        data_dir=data_dir,  # the push notifications' spool (None: kept in memory)
        central=central,
        box=box,
        client_id=client_id or (mqtt_url.username if mqtt_url and mqtt_url.username else HUB_CLIENT_ID),
        **kwargs,
    )


@contextlib.contextmanager
def running_hub(venue: Venue, db: str | Store, **options: Any) -> Iterator[Hub]:
    """A started hub for the block; `db` is a URL (opened here and closed after) or an open Store
    (left open). `options` are build_hub's."""
    store = open_store(db, venue=venue) if isinstance(db, str) else db
    try:
        hub = build_hub(venue, store, **options)
        hub.start()
        try:
            yield hub
        finally:
            hub.close()
    finally:
        if isinstance(db, str):
            store.close()


def metrics_writer(url: str, token: str | None, org: str, bucket: str, data_dir: Path, **options: Any) -> Any:
    """The hub's metrics writer (InfluxDB line protocol), spooling under `data_dir` while the
    metrics server is away; ValueError for a bad URL. `options` are MetricsWriter's tuning knobs."""
    from broker.adapters.metrics import (
        MetricsWriter,  # httpx and the spool only when metrics are on
    )

    return MetricsWriter(url, token, org, bucket, data_dir / METRICS_SPOOL, **options)
