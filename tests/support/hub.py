"""The tests' one hub builder (`started_hub`, `new_hub`), in this process, and nodes on mock pins.

Every test that wants a hub of this process builds it here, so the tests' defaults live in one
place: the shipped venue, argon2 at its cheap costs (tests/support/sqlite_template.py), a SQLite
file given as a path copied from the migrated template instead of migrated again, an MQTT login of
the test broker when there is one, the watchdog's rounds stopped when the test ticks them itself.
`running_service`, `tests.support.till_days.day_hub` and the API fixtures of tests/dashboard and
tests/till are this builder with their module's arguments. A hub in a process of its own is
`lavos server` (tests/support/server.py) or a script calling broker.compose.build_hub.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, TypeVar

from argon2 import PasswordHasher
from gpiozero.pins.mock import MockFactory
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from broker.adapters.hub_link import HubLink, MqttUrl
from broker.adapters.link_process import ProcessLink
from broker.compose import Store, build_hub, running_hub
from broker.domain.venue import Venue, load_venue
from broker.hall.hub import Hub
from broker.storage.engine import open_store
from broker.storage.models import Event
from devices.drivers.cardreader import SimulatedCardReader
from devices.drivers.light import LightRelay
from devices.nodeconfig import node_config_for
from edge import EdgeNode
from edge.mqtt_link import MqttLink
from edge.outbox import Outbox
from sim.mosquitto import Mosquitto
from sim.pins import timed_mock_factory
from tests.support.sqlite_template import CHEAP, migrated_sqlite

REPO = Path(__file__).resolve().parents[2]
VENUE = REPO / "deploy" / "venues" / "lavos.toml"

R = TypeVar("R")


def on_writer(hub: Hub, fn: Callable[[Session], R]) -> R:
    """Run fn(db) in a write transaction on the hub's writer (only it may write; Store.bind_writer):
    how a test puts the database in a state no command makes, or raises an alert by hand."""

    def run() -> R:
        with hub.store.session() as db:
            return fn(db)

    return hub.run_on_writer(run)


def hub_url(mosquitto: Mosquitto, login: str = "lavos-hub") -> MqttUrl:
    """A URL for a login with the hub's rights (made on the test broker if new)."""
    user, password = mosquitto.hub_login(login)
    return MqttUrl("127.0.0.1", mosquitto.port, user, password, False)


def fresh_login() -> str:
    """A hub login of its own on the test broker: the broker keeps one persistent session per login,
    and a module's tests share their broker, so a hub that must not resume another's takes a new one."""
    return f"hub-{uuid.uuid4().hex[:10]}"


def _hub_options(
    mosquitto: Mosquitto | None, client_id: str | None, password_hasher: PasswordHasher | None, options: dict[str, Any]
) -> dict[str, Any]:
    """build_hub's arguments with the tests' defaults: cheap argon2 costs, the test broker's login."""
    if mosquitto is not None:
        client_id = client_id or "lavos-hub-test"
        options["mqtt_url"] = hub_url(mosquitto, client_id)
    if client_id is not None:
        options["client_id"] = client_id
    options["password_hasher"] = password_hasher or CHEAP  # a login does not re-hash at full cost
    return options


def _database(db: str | Path | Store) -> str | Store:
    """A URL or an open Store as given; a path: a fresh migrated SQLite file there (a copy of the
    template, tests/support/sqlite_template.py: the same file as migrating it, without the migrating)."""
    return migrated_sqlite(db) if isinstance(db, Path) else db


def new_hub(
    store: Store,
    *,
    mosquitto: Mosquitto | None = None,
    client_id: str | None = None,
    venue: Venue | None = None,
    password_hasher: PasswordHasher | None = None,
    **options: Any,
) -> Hub:
    """A hub over `store`, not started (its state loaded): for a test of the rules alone (a batch
    applied on its writer, its routes) or one that starts and closes it itself. The arguments are
    started_hub's."""
    return build_hub(venue or load_venue(VENUE), store, **_hub_options(mosquitto, client_id, password_hasher, options))


@contextlib.contextmanager
def started_hub(
    db: str | Path | Store,
    *,
    mosquitto: Mosquitto | None = None,
    client_id: str | None = None,
    venue: Venue | None = None,
    watchdog: bool = True,
    password_hasher: PasswordHasher | None = None,
    **options: Any,
) -> Iterator[Hub]:
    """A started hub of this process for the block, closed after it.

    `db`: a database URL (opened here, closed after), an open Store (left open), or a path (a fresh
    migrated SQLite file made there). `mosquitto`: on that test broker as `client_id` (default
    "lavos-hub-test"; `fresh_login()` for a session of its own), else without MQTT. `venue`: the
    shipped one by default. `watchdog=False`: its rounds stopped, for a test that ticks them itself
    (at moments of a fake clock). `password_hasher`: tests/support/sqlite_template.py's CHEAP by
    default. Other options are broker.compose.build_hub's (clock, metrics, data_dir, central, ...)."""
    with running_hub(venue or load_venue(VENUE), _database(db), **_hub_options(mosquitto, client_id, password_hasher, options)) as hub:
        if not watchdog:
            hub.watchdog.stop()
        yield hub


@contextlib.contextmanager
def running_service(
    mosquitto: Mosquitto,
    db_url: str | Path,
    *,
    clock: Callable[[], datetime] | None = None,
    metrics: Any = None,
    venue: Venue | None = None,
    client_id: str = "lavos-hub-test",
    data_dir: Path | None = None,
) -> Iterator[Hub]:
    """The hub in-process on the test broker: started_hub with a broker. The broker makes the client
    id the login, so `client_id` names the hub's login (one persistent session each): the same id
    again resumes that session, a new id starts with none. `data_dir`: where the push notifications
    spool (None: in memory)."""
    with started_hub(db_url, mosquitto=mosquitto, client_id=client_id, venue=venue, clock=clock, metrics=metrics, data_dir=data_dir) as svc:
        yield svc


@contextlib.contextmanager
def running_node(
    mosquitto: Mosquitto,
    tmp_path: Path,
    table: str,
    *,
    venue: Venue | None = None,
    outbox_max_bytes: int | None = None,
    **node_options: Any,
) -> Iterator[tuple[EdgeNode, MockFactory]]:
    """An EdgeNode for one venue table on its own MockFactory; yields (node, factory).

    Its password file and outbox live in `tmp_path`; `node_options` go to EdgeNode (a clock)."""
    v = venue or load_venue(VENUE)
    pw = tmp_path / f"{table}.pw"
    pw.write_text(f"pw-{table}\n")
    cfg = node_config_for(v, table, mqtt_host="127.0.0.1", mqtt_port=mosquitto.port, password_file=pw)
    cfg = cfg.model_copy(
        update={
            "outbox": cfg.outbox.model_copy(
                update={"path": tmp_path / f"{table}-outbox.db", "max_bytes": outbox_max_bytes or cfg.outbox.max_bytes}
            ),
            "mqtt": cfg.mqtt.model_copy(update={"reconnect_min_s": 0.1, "reconnect_max_s": 0.5, "keepalive_s": 5}),
            "card_reader": cfg.card_reader.model_copy(update={"kind": "simulated", "device": None}),
        }
    )
    factory = timed_mock_factory()
    node = EdgeNode(cfg, pin_factory=factory, **node_options).start()
    try:
        yield node, factory
    finally:
        node.close()


def light_of(node: EdgeNode) -> LightRelay:
    """A started node's light relay (every table of the shipped venue has one)."""
    assert node.light is not None, f"{node.table} has no light relay (not started?)"
    return node.light


def link_of(node: EdgeNode) -> MqttLink:
    """A started node's MQTT link."""
    assert node.link is not None, f"{node.table} has no MQTT link (not started?)"
    return node.link


def outbox_of(node: EdgeNode) -> Outbox:
    """A started node's outbox."""
    assert node.outbox is not None, f"{node.table} has no outbox (not started?)"
    return node.outbox


def card_reader_of(node: EdgeNode) -> SimulatedCardReader:
    """A node's simulated card reader (running_node makes every node's reader simulated), to tap a card."""
    reader = node._card_reader
    assert isinstance(reader, SimulatedCardReader), f"{node.table}'s card reader is {reader!r}, not a simulated one"
    return reader


def hub_link(hub: Hub) -> HubLink | ProcessLink:
    """A hub's MQTT link (a hub started with an MQTT URL has one)."""
    link = hub.link
    assert link is not None, "this hub runs without MQTT"
    return link


def process_link(hub: Hub) -> ProcessLink:
    """A hub's MQTT link in a process of its own (build_hub(link_process=True))."""
    link = hub.link
    assert isinstance(link, ProcessLink), f"this hub's link is {link!r}, not a ProcessLink"
    return link


def link_child(hub: Hub) -> BaseProcess:
    """The process a hub's MQTT link runs in (build_hub(link_process=True)), once started."""
    proc = process_link(hub)._proc
    assert proc is not None, "the link process has not started"
    return proc


def link_pid(hub: Hub) -> int:
    """The pid of a hub's MQTT link process."""
    pid = link_child(hub).pid
    assert pid is not None, "the link process has not started"
    return pid


def stored_events(db_url: str, table: str, boot: str) -> tuple[int, int]:
    """(rows, distinct seqs) the hub stored for one node boot."""
    store = open_store(db_url)
    try:
        with store.reader() as db:
            where = (Event.table_id == table) & (Event.boot == boot)
            rows = db.scalar(select(func.count()).select_from(Event).where(where))
            distinct = db.scalar(select(func.count()).select_from(select(Event.seq).where(where).distinct().subquery()))
        assert rows is not None and distinct is not None  # a count always has its row
        return rows, distinct
    finally:
        store.close()


def wait_stored(db_url: str, table: str, boot: str, n: int, timeout: float = 20.0) -> tuple[int, int]:
    """stored_events once `n` rows are there (or at the timeout), after a moment for extras to show."""
    deadline = time.monotonic() + timeout
    while stored_events(db_url, table, boot)[0] < n and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    return stored_events(db_url, table, boot)
