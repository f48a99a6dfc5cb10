"""Start the hub in-process against a test broker, and nodes on mock pins."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from sqlalchemy import func, select

from broker.adapters.hub_link import MqttUrl
from broker.compose import running_hub
from broker.domain.venue import load_venue
from broker.storage.engine import open_store
from broker.storage.models import Event
from devices.nodeconfig import node_config_for
from edge import EdgeNode
from sim.pins import timed_mock_factory
from tests.support.sqlite_template import CHEAP

REPO = Path(__file__).resolve().parents[2]
VENUE = REPO / "deploy" / "venues" / "lavos.toml"


def on_writer(hub, fn):  # type: ignore[no-untyped-def]
    """Run fn(db) in a write transaction on the hub's writer (only it may write; Store.bind_writer):
    how a test puts the database in a state no command makes, or raises an alert by hand."""

    def run():  # type: ignore[no-untyped-def]
        with hub.store.session() as db:
            return fn(db)

    return hub.run_on_writer(run)


def hub_url(mosquitto, login: str = "lavos-hub") -> MqttUrl:
    """A URL for a login with the hub's rights (made on the test broker if new)."""
    user, password = mosquitto.hub_login(login)
    return MqttUrl("127.0.0.1", mosquitto.port, user, password, False)


@contextlib.contextmanager
def running_service(mosquitto, db_url: str, *, clock=None, metrics=None, venue=None, client_id="lavos-hub-test"):
    """The hub in-process. The broker makes the client id the login, so `client_id`
    names the hub's login (one persistent session each): the same id again resumes that session,
    a new id starts with none."""
    with running_hub(
        venue or load_venue(VENUE),
        db_url,
        mqtt_url=hub_url(mosquitto, client_id),
        metrics=metrics,
        clock=clock,
        client_id=client_id,
        password_hasher=CHEAP,  # the test accounts' costs: a login does not re-hash at full cost
    ) as svc:
        yield svc


@contextlib.contextmanager
def running_node(mosquitto, tmp_path: Path, table: str, *, venue=None, outbox_max_bytes: int | None = None, **node_options):
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


def stored_events(db_url: str, table: str, boot: str) -> tuple[int, int]:
    """(rows, distinct seqs) the hub stored for one node boot."""
    store = open_store(db_url)
    try:
        with store.reader() as db:
            where = (Event.table_id == table) & (Event.boot == boot)
            rows = db.scalar(select(func.count()).select_from(Event).where(where))
            distinct = db.scalar(select(func.count()).select_from(select(Event.seq).where(where).distinct().subquery()))
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
