"""TLS end to end: make-certs.sh's CA and server certificate on a real Mosquitto listener, a real
table node and the hub across it, and clients that trust another CA refused."""

from __future__ import annotations

import hashlib
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from sqlalchemy import select

from broker.adapters.hub_link import MqttUrl
from broker.compose import open_store
from broker.floor.games import StartGame
from broker.storage.models import Event
from edge import EdgeNode
from sim.mosquitto import HUB_USER, Mosquitto, TlsFiles
from sim.pins import PulseScript, drive_pulses, timed_mock_factory
from tests.edge.nodes import node_config
from tests.support.hub import REPO, hub_link, light_of, link_of, new_hub
from tests.support.sqlite_template import migrated_sqlite
from tests.support.waiting import wait_until

MAKE_CERTS = REPO / "deploy" / "mosquitto" / "make-certs.sh"
TABLE = "pool-03"


def make_certs(out: Path, *hosts: str, force: bool = False) -> subprocess.CompletedProcess[str]:
    cmd = ["bash", str(MAKE_CERTS), "--out", str(out), *(["--force"] if force else []), *hosts]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


class TlsMosquitto(Mosquitto):
    """The test broker with the shipped config's commented 8883 listener switched on, with
    make-certs.sh's files (sim/mosquitto.py: only its port and file paths change)."""

    def __init__(self, workdir: Path, certs: Path, users: dict[str, str]) -> None:
        super().__init__(workdir, users=users, tls=TlsFiles(certs))

    @property
    def tls_port(self) -> int:
        assert self.tls is not None
        return self.tls.port


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("certs")
    done = make_certs(out, "localhost", "127.0.0.1")
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory: pytest.TempPathFactory, certs: Any) -> Iterator[TlsMosquitto]:
    broker = TlsMosquitto(tmp_path_factory.mktemp("mosquitto-tls"), certs, {TABLE: f"pw-{TABLE}"}).start()
    yield broker
    broker.stop()


def tls_connect(port: int, ca_file: Path) -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{time.monotonic_ns()}")
    c.username_pw_set(HUB_USER, "hub-secret")
    c.tls_set(ca_certs=str(ca_file), cert_reqs=ssl.CERT_REQUIRED)
    c.connect("127.0.0.1", port, keepalive=5)  # the TLS handshake happens here
    return c


def test_make_certs_is_idempotent_and_force_renews_the_ca(tmp_path: Path) -> None:
    first = make_certs(tmp_path, "lavos.local", "192.168.1.10")
    assert first.returncode == 0, first.stderr
    assert "/etc/lavos/ca.crt" in first.stdout and "/etc/mosquitto/certs" in first.stdout  # says what goes where
    before = digests(tmp_path)
    again = make_certs(tmp_path, "192.168.1.10", "lavos.local")  # same hosts, another order
    assert again.returncode == 0 and "keeping" in again.stdout
    assert digests(tmp_path) == before
    san = subprocess.run(
        ["openssl", "x509", "-in", str(tmp_path / "server.crt"), "-noout", "-ext", "subjectAltName"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:lavos.local" in san and "IP Address:192.168.1.10" in san
    # a new host name re-issues the server certificate under the same CA
    make_certs(tmp_path, "lavos.local", "192.168.1.10", "lavos-hub")
    after = digests(tmp_path)
    assert after["ca.crt"] == before["ca.crt"] and after["server.crt"] != before["server.crt"]
    renewed = make_certs(tmp_path, "lavos.local", force=True)
    assert renewed.returncode == 0 and digests(tmp_path)["ca.crt"] != before["ca.crt"]
    assert (
        subprocess.run(
            ["openssl", "verify", "-CAfile", str(tmp_path / "ca.crt"), str(tmp_path / "server.crt")], capture_output=True
        ).returncode
        == 0
    )


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "at least one host"),
        (["bad host"], "neither a host name"),
        (["--days", "x", "h"], "--days"),
        (["--bogus", "h"], "unknown option"),
    ],
)
def test_make_certs_explains_bad_arguments(tmp_path: Path, args: Any, message: Any) -> None:
    done = subprocess.run(["bash", str(MAKE_CERTS), "--out", str(tmp_path), *args], capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr


def test_node_and_central_service_talk_over_tls(tls_broker: TlsMosquitto, certs: Any, tmp_path: Path) -> None:
    store = open_store(migrated_sqlite(tmp_path / "lavos.db"))
    url = MqttUrl.parse(f"mqtts://{HUB_USER}:hub-secret@127.0.0.1:{tls_broker.tls_port}?cafile={certs / 'ca.crt'}")
    assert url.tls and url.ca_file == certs / "ca.crt"
    svc = new_hub(store, mqtt_url=url, client_id="lavos-hub-tls")
    cfg = node_config(tmp_path, tls_broker.tls_port, table=TABLE, mqtt={"tls": True, "ca_file": str(certs / "ca.crt")})
    factory = timed_mock_factory()
    svc.start()
    try:
        with EdgeNode(cfg, pin_factory=factory) as node:
            wait_until(lambda: hub_link(svc).stats.connected and link_of(node).wait_connected(0.01), 10, "both connected over TLS")
            svc.execute(StartGame(table=TABLE, actor="anna"))
            wait_until(lambda: light_of(node).on, what="light command across TLS")
            drive_pulses(factory.pin(cfg.pins.pockets[4]), 1, PulseScript(duration_s=0.02, chatter_edges=1))
            wait_until(lambda: svc.runtime[TABLE].drops == 1, what="pocket event across TLS")
        with store.reader() as db:
            assert [e.data["pocket"] for e in db.scalars(select(Event).where(Event.table_id == TABLE))] == [4]
    finally:
        svc.close()
        store.close()
    assert f"on port {tls_broker.tls_port}" in tls_broker.log_text()  # the TLS listener, not the plain one


def test_a_client_trusting_another_ca_is_refused(tls_broker: TlsMosquitto, certs: Any, tmp_path: Path) -> None:
    stranger = tmp_path / "other-ca"
    assert make_certs(stranger, "localhost", "127.0.0.1").returncode == 0
    with pytest.raises(ssl.SSLCertVerificationError):
        tls_connect(tls_broker.tls_port, stranger / "ca.crt")
    # the right CA but a name the certificate does not carry: refused as well
    ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    with (
        socket.create_connection(("127.0.0.1", tls_broker.tls_port), timeout=5) as raw,
        pytest.raises(ssl.SSLCertVerificationError, match="mismatch"),
    ):
        ctx.wrap_socket(raw, server_hostname="not-the-broker.example")
    ok = tls_connect(tls_broker.tls_port, certs / "ca.crt")
    ok.disconnect()
    # a table node with the wrong ca_file never gets in, and keeps retrying rather than crashing
    cfg = node_config(tmp_path, tls_broker.tls_port, table=TABLE, mqtt={"tls": True, "ca_file": str(stranger / "ca.crt")})
    with EdgeNode(cfg, pin_factory=timed_mock_factory()) as node:
        assert not link_of(node).wait_connected(1.5)


def test_cafile_in_the_url_is_checked(certs: Any) -> None:
    with pytest.raises(ValueError, match="needs TLS"):
        MqttUrl.parse(f"mqtt://h:1883?cafile={certs / 'ca.crt'}")
    with pytest.raises(ValueError, match="does not exist"):
        MqttUrl.parse("mqtts://h?cafile=/nonexistent/ca.crt")
    with pytest.raises(ValueError, match="only query parameter"):
        MqttUrl.parse("mqtts://h?ca=/x")
