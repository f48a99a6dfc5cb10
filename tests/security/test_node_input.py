"""Issue 9, node input (items 13-16): a node's password sits on a Pi under a table, so whatever
it publishes is hostile input, not truth.

Real processes throughout: Mosquitto with the shipped ACL, `lavos server` (on SQLite and on
PostgreSQL) writing metrics to a real VictoriaMetrics, and a raw paho client logged in as a
table node publishing crafted events, as an attacker with that node's password would.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import func, select

from broker.domain.floor.reject_tally import SAMPLES_PER_TABLE
from broker.domain.venue import load_venue
from broker.storage.engine import open_store
from broker.storage.models import Event, NodeRejectCount, NodeRejectSample
from devices import contract
from tests.dashboard.conftest import MANAGER, PASSWORD
from tests.support import httpc
from tests.support.hub import VENUE
from tests.support.matching import found
from tests.support.server import LavosServer
from tests.support.victoria import VictoriaMetrics
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto

    class _LavosWithVictoria(LavosServer):
        """The `lavos` fixture's server: its VictoriaMetrics beside it (vars(server)["victoria"])."""

        victoria: VictoriaMetrics


VENUE_TABLES = {t.id: t for t in load_venue(VENUE).tables}
_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


@dataclass
class RawNode:
    """A paho client holding `table`'s node password: it publishes whatever the test crafts."""

    port: int
    table: str
    user: str | None = None  # default: the table's own node account
    password: str | None = None  # default: the test broker's password for a node account
    seq: int = 0
    boot: str = field(default_factory=lambda: "attack-" + secrets.token_hex(4))

    def __post_init__(self) -> None:
        user = self.user or self.table
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"{user}-raw-{secrets.token_hex(3)}")
        self.client.username_pw_set(user, self.password or f"pw-{user}")
        self.client.max_inflight_messages_set(100)
        self.client.connect("127.0.0.1", self.port)
        self.client.loop_start()

    def publish(self, topic: str, payload: bytes) -> None:
        self.client.publish(topic, payload, qos=1).wait_for_publish(10)

    def event(
        self,
        etype: str,
        data: dict[str, Any],
        *,
        ts: str | None = None,
        synced: bool = True,
        table: str | None = None,
        boot: str | None = None,
    ) -> None:
        self.seq += 1
        table = table or self.table
        body = {
            "v": 1,
            "table": table,
            "type": etype,
            "boot": boot or self.boot,
            "seq": self.seq,
            "ts": ts or datetime.now(UTC).isoformat(),
            "ts_synced": synced,
            "data": data,
        }
        self.publish(contract.event_topic(table, etype), json.dumps(body).encode())

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def lavos(request: pytest.FixtureRequest, mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LavosServer]:
    """`lavos server` on this backend, metrics to its own VictoriaMetrics, logging at INFO (its default)."""
    workdir = tmp_path_factory.mktemp(f"lavos-{request.param}")
    victoria = VictoriaMetrics(workdir / "victoria").start()
    db = None
    if request.param == "postgresql":
        cluster = request.getfixturevalue("postgres_cluster")
        db = cluster.create_database(template=request.getfixturevalue("postgres_template"))
    server = LavosServer(
        workdir,
        mosquitto.port,
        {MANAGER: ("manager", PASSWORD)},
        db=db,
        # as the hub box's unit runs it: VictoriaMetrics takes writes without a token (no --influx-token-file)
        extra_args=("--influx", victoria.url),
    )
    server.seed_users()  # the login is not what this module tests: copied in, not `lavos user add`
    vars(server)["victoria"] = victoria  # the tests read it beside the server
    try:
        server.start()
        yield server
    finally:
        server.stop()
        victoria.stop()
        if db is not None:
            request.getfixturevalue("postgres_cluster").drop_database(db)


def node_row(server: LavosServer, table: str) -> dict[str, Any]:
    return next(n for n in server.api("GET", "/api/nodes", MANAGER) if n["table"] == table)


def open_alerts_of(server: LavosServer, kind: str, table: str) -> list[dict[str, Any]]:
    return [a for a in server.api("GET", "/api/alerts", MANAGER) if a["kind"] == kind and a["table"] == table]


def logged_in(server: LavosServer) -> httpx.Client:
    """A browser-like client with the manager's session cookie (login form with its CSRF token)."""
    client = httpc.Client(base_url=server.base_url, timeout=60, follow_redirects=False)
    token = found(_CSRF, client.get("/login").text).group(1)
    r = client.post("/login", data={"username": MANAGER, "password": PASSWORD, "next": "/", "csrf_token": token})
    assert r.status_code == 303, r.text
    return client


def test_made_up_sensor_names_open_no_alert_and_are_counted_per_node(lavos: _LavosWithVictoria, mosquitto: Mosquitto) -> None:
    node = RawNode(mosquitto.port, "pool-03")
    try:
        for i in range(500):
            node.event("sensor_fault", {"sensor": f"made-up-{i}", "kind": "stuck"})
        node.event("sensor_fault", {"sensor": "pocket-2", "kind": "stuck"})  # a beam pool-03 really has
        wait_until(
            lambda: node_row(lavos, "pool-03")["rejects"]["by_reason"].get("unknown_sensor", {}).get("count") == 500,
            timeout=60,
            what="500 unknown sensors counted for pool-03",
        )
        wait_until(lambda: open_alerts_of(lavos, "sensor_fault", "pool-03"), timeout=20, what="the real beam's alert")
    finally:
        node.close()
    faults = open_alerts_of(lavos, "sensor_fault", "pool-03")
    assert len(faults) == 1 and "in pocket 3" in faults[0]["message_en"]  # pocket-2 counted from 1, as staff do
    rejects = node_row(lavos, "pool-03")["rejects"]
    assert rejects["dropped"] == 500 and set(rejects["by_reason"]) == {"unknown_sensor"}
    samples = rejects["samples"]
    assert len(samples) == SAMPLES_PER_TABLE and {s["reason"] for s in samples} == {"unknown_sensor"}
    assert "made-up-499" in samples[0]["error"] and "made-up-499" in samples[0]["excerpt"]  # newest first
    assert samples[0]["topic"] == "lavos/v1/table/pool-03/event/sensor_fault"
    # The manager sees it on the monitoring page, in Slovak, with the right plural (5 and more).
    page = logged_in(lavos).get("/monitoring").text
    assert "500 správ odmietnutých" in page and "senzor na tomto module nie je zapojený" in page
    # And as a metric: reject_count per table and reason adds up to the refusals.
    wait_until(
        lambda: (
            sum(
                v
                for _, labels, _, v in lavos.victoria.samples("reject_count")
                if labels == {"table": "pool-03", "reason": "unknown_sensor"}
            )
            == 500
        ),
        timeout=30,
        what="reject metric",
    )


def test_topics_of_tables_not_in_the_venue_share_one_bounded_bucket(lavos: LavosServer, mosquitto: Mosquitto) -> None:
    # Only a hub account may publish there; a login of its own (the login is the client id, so
    # lavos-hub itself would take the running server's place).
    user, password = mosquitto.probe_login()
    hub = RawNode(mosquitto.port, "pool-01", user=user, password=password)
    try:
        for i in range(300):
            hub.event("pocket", {"pocket": 1, "pulse_ms": 20.0}, table=f"ghost-{i}")
        wait_until(
            lambda: lavos.api("GET", "/api/nodes/unknown-rejects", MANAGER)["dropped"] >= 300, timeout=60, what="ghost tables counted"
        )
    finally:
        hub.close()
        mosquitto.release_login(user)
    unknown = lavos.api("GET", "/api/nodes/unknown-rejects", MANAGER)
    assert unknown["by_reason"]["unknown_table"]["count"] == 300 and len(unknown["samples"]) == SAMPLES_PER_TABLE
    store = open_store(lavos.db_url)
    try:
        with store.session() as db:
            buckets = set(db.scalars(select(NodeRejectCount.table_id)))
            per_bucket = dict(db.execute(select(NodeRejectSample.table_id, func.count()).group_by(NodeRejectSample.table_id)).all())
    finally:
        store.close()
    # 300 made-up table ids made no row of their own: the tables grow with the venue, not the attacker.
    assert buckets <= set(VENUE_TABLES) | {"_unknown"} and not any(b.startswith("ghost") for b in buckets)
    assert max(per_bucket.values()) <= SAMPLES_PER_TABLE


def test_random_refused_cards_open_one_alert_per_table_that_counts_them(lavos: LavosServer, mosquitto: Mosquitto) -> None:
    node = RawNode(mosquitto.port, "foos-01")
    uids = [secrets.token_hex(4) for _ in range(50)]
    try:
        for uid in uids:
            node.event("card", {"uid": uid})
        wait_until(
            lambda: sum(a["count"] for a in open_alerts_of(lavos, "card_refused", "foos-01")) >= 50, timeout=60, what="50 refusals counted"
        )
    finally:
        node.close()
    refused = open_alerts_of(lavos, "card_refused", "foos-01")
    assert len(refused) == 1 and refused[0]["count"] == 50  # the bartender sees one alert, ×50
    assert "neznáma karta" in refused[0]["message"]
    assert not any(uid in refused[0]["message"] + refused[0]["message_en"] for uid in uids)  # on every bar screen


def test_impossible_node_clocks_are_stored_and_charted_at_the_hubs_time_and_flagged(
    lavos: _LavosWithVictoria, mosquitto: Mosquitto
) -> None:
    node = RawNode(mosquitto.port, "pool-04")
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    t0 = datetime.now(UTC)
    try:
        node.event("pocket", {"pocket": 0, "pulse_ms": 20.0}, ts="9999-12-31T23:59:59+00:00")
        node.event("pocket", {"pocket": 1, "pulse_ms": 20.0}, ts="2001-01-01T00:00:00+00:00")
        node.event("pocket", {"pocket": 2, "pulse_ms": 20.0}, ts="9999-12-31T23:59:59-12:00", synced=False)
        node.event("pocket", {"pocket": 3, "pulse_ms": 20.0}, ts=hour_ago.isoformat())  # replayed from the outbox: kept
        wait_until(lambda: node_row(lavos, "pool-04")["rejects"]["clock_flagged"] == 3, timeout=30, what="3 clocks flagged")
    finally:
        node.close()
    t1 = datetime.now(UTC)
    store = open_store(lavos.db_url)
    try:
        with store.session() as db:
            rows = {r.data["pocket"]: r for r in db.scalars(select(Event).where(Event.table_id == "pool-04", Event.boot == node.boot))}
    finally:
        store.close()
    assert sorted(rows) == [0, 1, 2, 3], "a flagged event is applied, not dropped"
    for pocket in (0, 1, 2):
        r = rows[pocket]
        assert r.node_ts == r.received_at and r.ts_synced is False and t0 - timedelta(seconds=5) <= r.received_at <= t1
    assert rows[3].ts_synced is True and abs(rows[3].node_ts - hour_ago) < timedelta(milliseconds=1)
    rejects = node_row(lavos, "pool-04")["rejects"]
    assert rejects["dropped"] == 0 and rejects["by_reason"]["clock"]["count"] == 3
    assert any("9999-12-31" in s["error"] for s in rejects["samples"])
    # The ball drops are on the charts at the hub's time (the 2001 and 9999 ones too), the replayed one at its own.
    low, high = (t0 - timedelta(seconds=5)).timestamp() * 1000, (t1 + timedelta(seconds=5)).timestamp() * 1000

    def drops() -> dict[str, int]:
        return {labels["pocket"]: ts for _, labels, ts, _ in lavos.victoria.samples("pocket_count") if labels.get("table") == "pool-04"}

    wait_until(lambda: len(drops()) == 4, timeout=30, what="4 drops charted")
    charted = drops()
    assert all(low <= charted[p] <= high for p in ("0", "1", "2")), charted
    assert abs(charted["3"] - hour_ago.timestamp() * 1000) < 1
    page = logged_in(lavos).get("/monitoring").text
    assert "zlé hodiny: 3 udalosti s časom centrály" in page  # 2-4: "udalosti"


def test_no_card_uid_in_the_log_at_info(lavos: LavosServer, mosquitto: Mosquitto) -> None:
    """A card UID is a bearer credential: a forged card event with a member's UID checks them in."""
    uids = {"pool": secrets.token_hex(5), "unknown": secrets.token_hex(4), "bad": "zz" + secrets.token_hex(3)}
    pool, foos = RawNode(mosquitto.port, "pool-05"), RawNode(mosquitto.port, "foos-02")
    try:
        pool.event("card", {"uid": uids["pool"]})  # not a foosball table: logged, not checked
        foos.event("card", {"uid": uids["unknown"]})  # refused: an alert
        foos.event("card", {"uid": uids["bad"]})  # not a UID at all: refused by the contract
        wait_until(
            lambda: re.search(
                r"ALERT foos-02: card refused.*\n(.*\n)*.*tapped on pool-05|tapped on pool-05(.*\n)*.*ALERT foos-02: card refused",
                lavos.log_path.read_text(errors="replace"),
            ),
            timeout=30,
            what="the refusal and the pool card in the log",
        )
        time.sleep(1)  # the bad card was published last: give it the time to be logged, if it is
    finally:
        pool.close()
        foos.close()
    log = lavos.log_path.read_text(errors="replace")
    for what, uid in uids.items():
        assert uid not in log, f"the {what} card's UID is in the INFO log"
    assert node_row(lavos, "foos-02")["rejects"]["by_reason"]["invalid"]["count"] == 1  # the bad card was seen, and counted


def test_the_card_capture_page_says_which_node_sent_the_uid_and_when(lavos: LavosServer, mosquitto: Mosquitto) -> None:
    member = lavos.api("POST", "/api/members", MANAGER, status=201, json={"name": "Kapturová Eva"})
    browser = logged_in(lavos)
    node = RawNode(mosquitto.port, "foos-02")  # a table with a card reader (only those are offered for capture)
    uid = secrets.token_hex(4)
    result: dict[str, httpx.Response] = {}
    waiting = threading.Thread(
        target=lambda: result.update(page=browser.get(f"/members/{member['id']}/capture", params={"table": "foos-02", "wait": 20}))
    )
    t0 = datetime.now(UTC)
    waiting.start()
    try:
        # The page listens from some moment we cannot see from here: tap until it has heard one.
        stamped = datetime.now(UTC) - timedelta(minutes=10)  # an old tap, replayed late
        while waiting.is_alive():
            node.event("card", {"uid": uid}, ts=stamped.isoformat())
            waiting.join(0.5)
    finally:
        node.close()
    html = result["page"].text
    assert result["page"].status_code == 200 and f'name="uid" value="{uid}"' in html
    source = re.search(r'<p class="capture-source" id="capture-source" data-table="([^"]+)" data-received="([^"]+)">(.*?)</p>', html, re.S)
    assert source, "a UID from a node is filled in without saying which node sent it"
    table, received, text = source.groups()
    assert table == "foos-02" and VENUE_TABLES["foos-02"].name in text and "foos-02" not in text  # its name, not its id
    assert t0 - timedelta(seconds=5) <= datetime.fromisoformat(received) <= datetime.now(UTC)
    assert 'class="late-tap"' in text  # the node's own stamp is 10 minutes older: say so


def test_an_event_the_database_cannot_store_is_refused_alone_and_ingest_carries_on(lavos: LavosServer, mosquitto: Mosquitto) -> None:
    """A year-10000 UTC stamp, NUL in a boot id or in event data (PostgreSQL refuses NUL in text and
    JSONB): once, each of these failed every retry of its batch, and the hub applied nothing more."""
    node = RawNode(mosquitto.port, "pool-06")  # one connection: a second one on the same login would replace it
    try:
        node.event("pocket", {"pocket": 0, "pulse_ms": 20.0}, ts="9999-12-31T23:59:59-12:00", synced=False)
        node.event("activity", {"source": "lamp\u0000"})
        node.event("pocket", {"pocket": 1, "pulse_ms": 20.0}, boot="nul\u0000boot")
        node.event("pocket", {"pocket": 5, "pulse_ms": 20.0})  # an honest drop after them

        def stored() -> list[Event]:
            store = open_store(lavos.db_url)
            try:
                with store.session() as db:
                    return list(db.scalars(select(Event).where(Event.table_id == "pool-06")))
            finally:
                store.close()

        wait_until(lambda: any(e.data.get("pocket") == 5 for e in stored()), timeout=30, what="the honest drop applied")
    finally:
        node.close()
    refused = node_row(lavos, "pool-06")["rejects"]
    assert len(stored()) + refused["dropped"] == 4  # each one either stored or counted, none lost silently
