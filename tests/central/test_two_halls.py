"""Two halls and a centre on loopback, with the shipped files: three Mosquitto brokers (each hall's
lavos.conf + acl + bridge.conf.example over TLS, the centre's central.conf + central.acl), two
hubs sending their outboxes, the centre (`lavos central`'s app, its live subscriber) on PostgreSQL.

The evening: money and games in both halls; then the bridges and the record links are cut (real TCP
cuts, tests/support/tcp_cut.py) while both halls go on taking money, reverse a payment and close the
day; each side restarts once while cut (hall A's hub, hall B's broker, the centre's broker and its
service); the links come back; the centre's figures equal each hall's own Z report to the cent, and
no record was applied twice. "Two hours offline" is a cut of a few seconds here: what matters is
that every record is written before the cut ends and survives the restarts, which the hall's
outbox and the centre's (hall, seq) key do whatever the length (the outbox's bound is tested in
test_outbox.py). The records travel over plain HTTP on loopback (the shipped setup is HTTPS:
`lavos central serve --tls-cert`, the sender's httpx verifies it); the bridges use TLS as shipped.

The isolation of item 5 on the real broker: hall B's bridge login cannot write or read hall A's topics.
"""

from __future__ import annotations

import contextlib
import subprocess
import uuid
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import func, select

from broker.central.accounts import add_hall, add_user
from broker.central.live import Floors, LiveSubscriber
from broker.central.service import Central
from broker.compose import CentralSettings, running_hub
from broker.domain.schedule import business_day
from broker.hall.facade import HubFacade
from broker.hall.till.closeout import CloseDay
from broker.hall.till.payments import PayTab, ReversePayment
from broker.hall.till.tabs import AddProduct, AddTabItem, OpenWalkInTab
from broker.storage.engine import open_store
from broker.storage.models import CentralHall, CentralRecord, OutboxRecord
from sim.mosquitto import Mosquitto, TlsFiles, render_bridge
from tests.support.centre import CentreServer, hall_venue
from tests.support.hub import hub_url
from tests.support.mqtt import Collector
from tests.support.sqlite_template import CHEAP, migrated_sqlite
from tests.support.tcp_cut import TcpCut
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "deploy" / "mosquitto"
HALLS = ("a", "b")
BRIDGE_PASSWORDS = {"a": "bridge-a-secret", "b": "bridge-b-secret"}
CENTRAL_LOGIN = ("lavos-central", "central-secret")


class World:
    def __init__(self, root: Path, pg_url: str) -> None:
        self.root = root
        certs = root / "certs"
        done = subprocess.run(
            ["bash", str(SHIPPED / "make-certs.sh"), "--out", str(certs), "127.0.0.1", "localhost"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        self.certs = certs
        self.store = open_store(pg_url)
        with self.store.session() as db:
            self.tokens = {h: add_hall(db, h, f"Lavos {h.upper()}") for h in HALLS}
            add_user(db, "eva", "operator-pass", "operator", None, CHEAP)
        self.central = Central(self.store, Floors(self.store), hasher=CHEAP)
        users = {**BRIDGE_PASSWORDS, CENTRAL_LOGIN[0]: CENTRAL_LOGIN[1]}
        self.centre_broker = Mosquitto(
            root / "centre-broker",
            users=users,
            tls=TlsFiles(certs),
            shipped_conf=SHIPPED / "central.conf",
            shipped_acl=SHIPPED / "central.acl",
        ).start()
        assert self.centre_broker.tls is not None
        self.live = LiveSubscriber("127.0.0.1", self.centre_broker.port, *CENTRAL_LOGIN, self.central.floors)
        self.live.start()
        self.server = CentreServer(self.central).start()
        # The network between each hall and the centre: its bridge's TLS link and its records' HTTP link.
        self.bridge_cut = {h: TcpCut(self.centre_broker.tls.port).start() for h in HALLS}
        self.records_cut = {h: TcpCut(self.server.port).start() for h in HALLS}
        self.brokers: dict[str, Mosquitto] = {}
        self.hubs: dict[str, contextlib.ExitStack] = {}
        self.hub: dict = {}
        self.db: dict[str, str] = {}
        for h in HALLS:
            bridge = render_bridge(
                (SHIPPED / "bridge.conf.example").read_text(),
                hall=h,
                port=self.bridge_cut[h].port,
                cafile=certs / "ca.crt",
                password=BRIDGE_PASSWORDS[h],
                restart_timeout="1 2",
            )
            self.brokers[h] = Mosquitto(root / f"hall-{h}", extra_conf=bridge).start()
            self.db[h] = migrated_sqlite(root / f"hall-{h}.db")
            self.start_hub(h)

    def start_hub(self, hall: str) -> None:
        settings = CentralSettings(url=self.records_cut[hall].url, token=self.tokens[hall], retry_max_s=0.5, batch=50)
        stack = contextlib.ExitStack()
        hub = stack.enter_context(
            running_hub(
                hall_venue(hall),
                self.db[hall],
                mqtt_url=hub_url(self.brokers[hall]),
                password_hasher=CHEAP,
                central=settings,
                home_assistant=True,
                client_id=f"hub-{uuid.uuid4().hex[:8]}",
            )
        )
        hub.watchdog.stop()
        self.hubs[hall], self.hub[hall] = stack, hub

    def stop_hub(self, hall: str) -> None:
        self.hubs.pop(hall).close()

    def close(self) -> None:
        for h in list(self.hubs):
            self.stop_hub(h)
        for c in (*self.bridge_cut.values(), *self.records_cut.values()):
            c.cut()
        for b in self.brokers.values():
            b.stop()
        self.live.close()
        self.server.stop()
        self.centre_broker.stop()
        self.store.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory, postgres_cluster, postgres_template):
    url = postgres_cluster.create_database(template=postgres_template)
    w = World(tmp_path_factory.mktemp("two-halls"), url)
    yield w
    w.close()
    postgres_cluster.drop_database(url)


def _link(world: World, hall: str) -> bool | None:
    with world.store.reader() as db:
        return db.scalar(select(CentralHall.link_up).where(CentralHall.hall == hall))


def _sell(hub, label: str, product: int, quantity: int, method: str) -> int:
    tab = hub.execute(OpenWalkInTab(label=label, actor="jana"))
    hub.execute(AddTabItem(tab=tab, product=product, quantity=quantity, actor="jana"))
    view = HubFacade(hub).reads.tab_payments(tab)
    assert view is not None
    owed = view.owed_cents
    return hub.execute(
        PayTab(tab=tab, method=method, amount_cents=owed, tendered_cents=owed if method == "cash" else None, actor="jana")
    ).payment_id


def _outbox_empty(world: World, hall: str) -> bool:
    with world.hub[hall].store.reader() as db:
        return db.scalar(select(func.count()).select_from(OutboxRecord)) == 0


def _wait_links(world: World, *, up: bool) -> None:
    for h in HALLS:
        wait_until(lambda: _link(world, h) is up, 20, f"hall {h}'s bridge {'up' if up else 'down'} at the centre")


def _restart_each_side(world: World) -> None:
    """Each side restarts once while cut: hall A's hub, hall B's broker, the centre's broker and service."""
    world.stop_hub("a")
    world.start_hub("a")
    world.brokers["b"].stop()
    world.brokers["b"].start()
    world.centre_broker.stop()
    world.centre_broker.start()
    world.server.stop()
    world.server = CentreServer(world.central, world.server.port).start()


def _assert_centre_equals(world: World, h: str, report) -> None:
    viewer = world.central.viewer("eva")
    assert viewer is not None
    month = world.central.month(viewer, h, report.day)
    assert month is not None
    (day,) = [d for d in month.days if d.day == report.day]
    assert day.total_cents == report.total_cents == day.hall_z_cents  # to the cent
    assert day.reversals_cents == report.reversals_cents and day.payments_count == report.payments_count
    assert {m.method: m.cents for m in day.by_method} == {m.method: m.net_cents for m in report.by_method}
    with world.store.reader() as db:
        applied = db.scalar(select(func.count()).where(CentralRecord.hall == h))
        last = db.scalar(select(CentralHall.last_seq).where(CentralHall.hall == h))
    assert applied == last  # every seq once: none twice (the key), none missing


def test_an_evening_cut_off_and_restarted_reaches_the_centre_to_the_cent_once(world):
    products = {
        h: world.hub[h].execute(
            AddProduct(name="Pivo centrála", name_en="Beer", price_cents=215, vat_percent=19, category="drinks", actor="boss")
        )
        for h in HALLS
    }
    # The links are up: the centre hears both bridges and the hubs' status.
    _wait_links(world, up=True)
    for h in HALLS:
        wait_until(lambda: world.central.floors.hall(h).hub_online, 10, f"hall {h}'s hub status bridged")
    # A first part of the evening with the links up.
    for n in range(3):
        for h in HALLS:
            _sell(world.hub[h], f"Bar {n}", products[h], n + 1, "cash" if n % 2 == 0 else "card")
    for h in HALLS:
        wait_until(lambda: _outbox_empty(world, h), 15, f"hall {h}'s records at the centre")

    # The cut: bridges and record links both, a real TCP cut.
    for h in HALLS:
        world.bridge_cut[h].cut()
        world.records_cut[h].cut()
    _wait_links(world, up=False)
    for h in HALLS:
        first = _sell(world.hub[h], "Cut 1", products[h], 2, "cash")
        _sell(world.hub[h], "Cut 2", products[h], 3, "card")
        world.hub[h].execute(ReversePayment(payment=first, reason="omyl", actor="boss"))
    _restart_each_side(world)
    reports = {}
    for h in HALLS:
        _sell(world.hub[h], "Late", products[h], 1, "cash")
        hub = world.hub[h]
        reports[h] = hub.execute(CloseDay(day=business_day(hub.clock(), hub.venue), counted_cents=0, open_tabs_ok=True, actor="boss"))
    for h in HALLS:
        with world.hub[h].store.reader() as db:
            assert db.scalar(select(func.count()).select_from(OutboxRecord)) > 0  # waiting, not lost

    for h in HALLS:
        world.bridge_cut[h].restore()
        world.records_cut[h].restore()
    for h in HALLS:
        wait_until(lambda: _outbox_empty(world, h), 30, f"hall {h}'s records delivered after the cut")
    _wait_links(world, up=True)

    for h in HALLS:
        _assert_centre_equals(world, h, reports[h])
    # The live floor came back through the restarted brokers too.
    wait_until(lambda: all(world.central.floors.hall(h).hub_online for h in HALLS), 15, "hubs' status at the centre again")


def _refused(port: int, user: str, password: str) -> bool:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user)
    client.username_pw_set(user, password)
    codes: list = []
    client.on_connect = lambda c, u, f, rc, p=None: codes.append(rc)
    client.connect("127.0.0.1", port, keepalive=5)
    client.loop_start()
    try:
        wait_until(lambda: codes, what="the broker's answer")
    finally:
        client.disconnect()
        client.loop_stop()
    return codes[0].is_failure


def test_a_halls_bridge_login_writes_and_reads_only_its_own_prefix(world):
    port = world.centre_broker.port
    # Hall B's own credentials, as a stolen copy would use them: its bridge is cut off meanwhile
    # (one connection per login: the broker makes the client id the login). The centre's own
    # subscriber (world.central.floors, the link state in its database) is the witness.
    world.bridge_cut["b"].cut()
    wait_until(lambda: _link(world, "b") is False, 20, "hall b's bridge down")
    reader = Collector(port, "b", BRIDGE_PASSWORDS["b"], topics=("hall/a/#",))
    reader.close()  # it subscribed to A's topics; anything it got would be A's
    try:
        for topic, payload in (("hall/a/lavos/v1/hub/status", b'{"state":"offline"}'), ("hall/a/bridge/state", b"0")):
            _publish_as_b(port, topic, payload)  # B posing as A: refused by the ACL (Mosquitto drops the connection)
        _publish_as_b(port, "hall/b/lavos/v1/hub/status", b'{"state":"offline"}')  # its own prefix: delivered
        wait_until(lambda: world.central.floors.hall("b").hub_online is False, 10, "b's own message at the centre")
        assert _link(world, "a") is True and world.central.floors.hall("a").hub_online  # A's unmoved
        assert reader.all == []  # B read nothing of A's (nor anything: the centre sends a hall nothing)
    finally:
        world.bridge_cut["b"].restore()


def _publish_as_b(port: int, topic: str, payload: bytes) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="b")
    client.username_pw_set("b", BRIDGE_PASSWORDS["b"])
    client.connect("127.0.0.1", port, keepalive=5)
    client.loop_start()
    try:
        info = client.publish(topic, payload, qos=1)
        with contextlib.suppress(RuntimeError, ValueError):
            info.wait_for_publish(2)
    finally:
        client.disconnect()
        client.loop_stop()


def test_an_unknown_login_and_another_halls_password_are_refused(world):
    port = world.centre_broker.port
    assert _refused(port, "c", "whatever")
    assert _refused(port, "a", BRIDGE_PASSWORDS["b"])
