"""deploy/hub/install.sh in scratch roots (--prefix), as tests/deploy/test_pi_install.py runs the Pi's:
it installs a hub box whose secrets are private and whose Mosquitto speaks TLS on the LAN and
plain MQTT on loopback only, with the monitoring (VictoriaMetrics as shipped, the hub writing to
it, vmalert with the rules and its API token) and every table in the fleet's inventory; a second
run changes nothing; its units pass systemd-analyze; and a club played on one box, backed up by
the nightly job, comes back on a freshly installed second box (`install.sh --restore`): the bills,
the open game, the hub's and a node's MQTT logins, vmalert's token."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from broker.accounts.users import find_token
from broker.adapters.hub_link import MqttUrl
from broker.compose import build_hub, open_store
from broker.domain.venue import load_venue
from broker.floor.games import StartGame, StopGame
from broker.hall.facade import HubFacade
from broker.ops.box import MONITORING_LOGIN, BoxLayout, nightly, setup
from broker.till.closeout import OpenDay
from broker.till.payments import PayTab
from dashboard.access import allows
from devices.nodeconfig import load_node_config
from sim.mosquitto import free_port, wait_port
from tests.deploy.test_pi_install import tree
from tests.support.hub import REPO
from tests.support.matching import found
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from broker.storage.engine import Store


INSTALL = REPO / "deploy" / "hub" / "install.sh"
UNITS = ("lavos-server.service", "lavos-vmalert.service", "lavos-backup.service", "lavos-backup.timer")
DEBIAN_MOSQUITTO_CONF = """\
pid_file {root}/run/mosquitto/mosquitto.pid
persistence true
persistence_location {root}/var/lib/mosquitto/
log_dest file {root}/var/log/mosquitto/mosquitto.log
include_dir {root}/etc/mosquitto/conf.d
"""


def install(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """install.sh into `root`, its venv this checkout's (the Pi test's way: --no-pip and a lavos to call)."""
    venv = root / "opt/lavos/.venv/bin"
    if not venv.exists():
        venv.mkdir(parents=True)
        (venv / "python").symlink_to(REPO / ".venv" / "bin" / "python")
        (venv / "lavos").symlink_to(REPO / ".venv" / "bin" / "lavos")
    done = subprocess.run(["bash", str(INSTALL), "--prefix", str(root), "--no-pip", *args], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def readme_install_args() -> list[str]:
    """The arguments of the install command in the README's "Deploying at a club"."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Deploying at a club") :]
    block = found(r"```sh\n(.*?)```", section, re.S).group(1)
    return shlex.split(found(r"^\S*deploy/hub/install\.sh (.*)$", block, re.M).group(1))


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One box installed with the README's command (and 127.0.0.1 in its certificate, which the
    tests' clients dial): (root, what the first run said)."""
    root = tmp_path_factory.mktemp("box") / "root"
    started = time.monotonic()
    assert readme_install_args() == ["--manager", "jana"]
    first = install(root, *readme_install_args(), "--name", "127.0.0.1")
    print(f"install.sh in a scratch root: {time.monotonic() - started:.1f} s")  # the README's figure
    return root, first.stdout


def mode(p: Path) -> str:
    return oct(p.stat().st_mode & 0o777)


def test_a_fresh_box_is_private_tls_by_default_and_a_second_run_changes_nothing(box: tuple[Any, str]) -> None:
    root, said = box
    layout = BoxLayout(root)
    before = tree(root)
    again = install(root, "--manager", "jana", "--name", "127.0.0.1")
    assert tree(root) == before
    assert "done: nothing changed" in again.stdout and "installed:" not in again.stdout and "restart" not in again.stdout
    assert (root / "usr/local/bin/lavos").readlink() == Path("/opt/lavos/.venv/bin/lavos")  # the README's `lavos ...` as root

    # the services, the monitoring, the nightly backup and the bounded wait for NTP are enabled; restarted the first time only
    assert (
        "would: systemctl enable avahi-daemon.service mosquitto.service systemd-time-wait-sync.service victoria-metrics.service "
        "lavos-server.service lavos-vmalert.service lavos-backup.timer" in said
    )
    for service in ("mosquitto", "victoria-metrics", "lavos-server", "lavos-vmalert"):
        assert f"would: systemctl restart {service}.service" in said
    for unit in UNITS:
        assert (root / "etc/systemd/system" / unit).read_bytes() == (REPO / "deploy/systemd" / unit).read_bytes()
    # the monitoring: VictoriaMetrics as shipped (loopback, 3 years), the hub writing to it with no
    # token, vmalert's rules where its unit reads them, and its API token made once through the hub
    assert (root / "etc/default/victoria-metrics").read_bytes() == (REPO / "deploy/vmalert/victoria-metrics.default").read_bytes()
    assert "--influx http://127.0.0.1:8428 " in (root / "etc/systemd/system/lavos-server.service").read_text()
    assert "--influx-token-file" not in (root / "etc/systemd/system/lavos-server.service").read_text()
    assert (root / "etc/lavos/vmalert/lavos-rules.yml").read_bytes() == (REPO / "deploy/vmalert/lavos-rules.yml").read_bytes()
    assert "-rule=/etc/lavos/vmalert/lavos-rules.yml" in (REPO / "deploy/systemd/lavos-vmalert.service").read_text()
    assert "LoadCredential=vmalert-token:/etc/lavos/vmalert-token" in (REPO / "deploy/systemd/lavos-vmalert.service").read_text()
    assert "made: vmalert's API token" in said and "unchanged: vmalert's API token" in again.stdout
    store = open_store(layout.db_url)
    try:
        with store.reader() as db:
            _, user = find_token(db, layout.vmalert_token.read_text().strip())
            assert user.username == MONITORING_LOGIN and allows(user.role, "monitoring.report")
    finally:
        store.close()
    # every table's Pi in the fleet's inventory, for deploy/ansible/update-nodes.yml
    hosts = json.loads(layout.inventory.read_text())["all"]["children"]["lavos_nodes"]["hosts"]
    assert {t: h["ansible_host"] for t, h in hosts.items()} == {t.id: f"lavos-{t.id}.local" for t in load_venue(layout.venue).tables}
    # the first manager, once, with a one-time password
    assert re.search(r"made: the first manager jana, password \S+ \(to be changed at the first login\)", said)
    assert "unchanged: a manager exists (jana)" in again.stdout
    # secrets private, the certificate and config readable
    assert {
        str(p.relative_to(root)): mode(p)
        for p in (
            layout.hub_password,
            layout.passwd,
            layout.tls / "ca.key",
            layout.tls / "server.key",
            layout.mosquitto_certs / "server.key",
            layout.vmalert_token,
        )
    } == {
        "etc/lavos/hub-password": "0o640",  # group lavos (chown said, not done, under --prefix)
        "etc/mosquitto/lavos.passwd": "0o600",
        "etc/lavos/tls/ca.key": "0o600",
        "etc/lavos/tls/server.key": "0o600",
        "etc/mosquitto/certs/server.key": "0o600",
        "etc/lavos/vmalert-token": "0o600",  # read by systemd alone (LoadCredential=)
    }
    assert mode(layout.tls) == "0o700" and mode(layout.nodes) == "0o700" and mode(layout.data) == "0o700"
    assert all(mode(p) == "0o600" for p in layout.nodes.iterdir() if p.suffix in (".toml", ".password"))
    # one name: avahi announces lavos.local; every kit says lavos.local:8883 over TLS with the club's CA
    assert "host-name=lavos" in (root / "etc/avahi/avahi-daemon.conf").read_text().splitlines()
    venue = load_venue(layout.venue)
    assert {p.stem for p in layout.nodes.glob("*.toml")} == {t.id for t in venue.tables}
    cfg = load_node_config(layout.nodes / "pool-01.toml")
    assert (cfg.mqtt.host, cfg.mqtt.port, cfg.mqtt.tls, str(cfg.mqtt.ca_file)) == ("lavos.local", 8883, True, "/etc/lavos/ca.crt")
    assert (layout.nodes / "ca.crt").read_bytes() == layout.ca.read_bytes() == (layout.mosquitto_certs / "ca.crt").read_bytes()
    san = subprocess.run(
        ["openssl", "x509", "-in", str(layout.mosquitto_certs / "server.crt"), "-noout", "-ext", "subjectAltName"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:lavos.local" in san and "IP Address:127.0.0.1" in san
    # Mosquitto: plain MQTT on loopback only, TLS on the LAN
    conf = (root / "etc/mosquitto/conf.d/lavos.conf").read_text()
    assert re.findall(r"^listener .*$", conf, re.M) == ["listener 1883 127.0.0.1", "listener 8883"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed (Debian package systemd)")
def test_the_hub_boxs_units_pass_systemd_analyze_verify(box: tuple[Any, str], tmp_path: Path) -> None:
    """The units as installed, their ExecStart pointed at this checkout's lavos (verify checks it is
    an executable; /opt/lavos is not installed on the test machine)."""
    root, _ = box
    units = []
    for u in UNITS:
        text = (root / "etc/systemd/system" / u).read_text()
        assert "/opt/lavos/.venv/bin/lavos " in text or u in ("lavos-backup.timer", "lavos-vmalert.service")
        (tmp_path / u).write_text(text.replace("/opt/lavos/.venv/bin/lavos", str(REPO / ".venv" / "bin" / "lavos")))
        units.append(str(tmp_path / u))
    done = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr


def test_an_edited_venue_restarts_the_hub_alone(box: tuple[Any, str]) -> None:
    """README step 2: edit the venue file, run the script again, the hub starts with it."""
    root, _ = box
    venue = BoxLayout(root).venue
    venue.write_text(venue.read_text() + "\n# the prices changed\n")
    said = install(root, "--name", "127.0.0.1").stdout
    assert "would: systemctl restart lavos-server.service" in said
    assert not re.search(r"would: systemctl restart (mosquitto|victoria-metrics|lavos-vmalert|avahi)", said)


def test_vmalerts_account_is_not_the_clubs_first_manager(box: tuple[Any, str], tmp_path: Path) -> None:
    """A box set up without --manager (vmalert's account, a manager, made already), then with one:
    the club's first manager is still made, and a setup that has everything opens no database."""
    root, _ = box
    layout = BoxLayout(tmp_path / "root")
    shutil.copytree(root / "etc", layout.root / "etc", symlinks=True)
    layout.vmalert_token.unlink()
    said: list[str] = []
    assert setup(layout, manager=None, say=said.append)
    assert setup(layout, manager="ana", say=said.append)
    assert any(line.startswith("made: the first manager ana, password ") for line in said), said
    db_files = sorted(p.name for p in layout.data.iterdir())
    assert not setup(layout, manager="ana", say=said.append)
    assert sorted(p.name for p in layout.data.iterdir()) == db_files and said[-1].startswith("unchanged: vmalert's API token")


def test_help_is_the_comment_on_top_of_each_install_script() -> None:
    for script in (INSTALL, REPO / "deploy/pi/install.sh"):
        done = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0 and "--prefix DIR" in done.stdout and "set -euo" not in done.stdout, done.stdout


def test_bad_arguments_say_what_to_do(tmp_path: Path) -> None:
    for args, message in (
        (["--restore", str(tmp_path / "nope.tar.gz")], "does not exist"),
        (["--bogus"], "unknown argument"),
        (["--manager"], "needs a value"),
    ):
        done = subprocess.run(["bash", str(INSTALL), "--prefix", str(tmp_path / "r"), "--no-pip", *args], capture_output=True, text=True)
        assert done.returncode == 2 and message in done.stderr, done.stderr


class Broker:
    """Mosquitto started from a box's installed files (Debian's stock main config, ours in conf.d),
    its listeners moved to test ports on loopback: (plain, TLS)."""

    def __init__(self, root: Path) -> None:
        self.port, self.tls_port = free_port(), free_port()
        for d in ("run/mosquitto", "var/lib/mosquitto", "var/log/mosquitto"):
            (root / d).mkdir(parents=True, exist_ok=True)
        conf = root / "etc/mosquitto/conf.d/lavos.conf"
        conf.write_text(
            conf.read_text()
            .replace(" /etc/", f" {root}/etc/")
            .replace("listener 1883 127.0.0.1\n", f"listener {self.port} 127.0.0.1\n")
            .replace("listener 8883\n", f"listener {self.tls_port} 127.0.0.1\n")
        )
        main = root / "etc/mosquitto/mosquitto.conf"
        main.write_text(("user root\n" if os.geteuid() == 0 else "") + DEBIAN_MOSQUITTO_CONF.format(root=root))
        self.proc = subprocess.Popen(["mosquitto", "-c", str(main)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_port(self.port, 10)
            wait_port(self.tls_port, 10)
        except TimeoutError:
            self.stop()
            log = root / "var/log/mosquitto/mosquitto.log"
            pytest.fail(f"mosquitto refused the box's setup: {log.read_text() if log.exists() else ''}")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def tls_connack(port: int, user: str, password: str, ca: Path) -> str:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user)
    c.username_pw_set(user, password)
    c.tls_set(ca_certs=str(ca), cert_reqs=ssl.CERT_REQUIRED)
    got: list[str] = []
    done = threading.Event()

    def on_connect(cl: mqtt.Client, u: object, f: object, rc: ReasonCode, p: object = None) -> None:
        got.append(str(rc))
        done.set()

    c.on_connect = on_connect
    c.connect("127.0.0.1", port, keepalive=5)
    c.loop_start()
    done.wait(5)
    c.disconnect()
    c.loop_stop()
    return got[0] if got else "no answer"


def hub_on(layout: BoxLayout, broker: Broker | None) -> tuple[Hub, Store]:
    url = MqttUrl("127.0.0.1", broker.port, "lavos-hub", layout.hub_password.read_text().strip(), False) if broker else None
    store = open_store(layout.db_url)
    hub = build_hub(load_venue(layout.venue), store, mqtt_url=url)
    hub.start()
    return hub, store


def test_a_club_backed_up_at_night_comes_back_on_a_new_box(box: tuple[Any, str], tmp_path: Path) -> None:
    root, _ = box
    first = BoxLayout(root)
    # the evening: a game stopped and paid, another still running
    hub, store = hub_on(first, None)
    try:
        facade = HubFacade(hub)
        facade.execute(OpenDay(float_cents=10000, actor="jana"))
        paid = facade.execute(StartGame(table="pool-02", actor="jana"))
        running = facade.execute(StartGame(table="pool-01", actor="jana"))
        facade.execute(StopGame(game=paid, actor="jana"))
        tab = facade.reads.till.game_tab(paid)
        view = facade.reads.till.tab_payments(tab)
        assert view is not None
        owed = view.owed_cents
        facade.execute(PayTab(tab=tab, method="card", amount_cents=owed, actor="jana"))
        bill_before = facade.reads.floor.game(paid).bill
    finally:
        hub.close()
        store.close()
    # the nightly backup, copied to a USB stick
    usb = tmp_path / "usb"
    usb.mkdir()
    first.backup_conf.write_text(first.backup_conf.read_text().replace('copy_to = ""', f'copy_to = "{usb}"'))
    status = nightly(first)
    assert status.ok and status.copied_to == str(usb), status
    (bundle,) = usb.glob("lavos-*.tar.gz")
    assert oct(bundle.stat().st_mode & 0o777) == "0o600"
    # what the Pi of pool-01 holds, and the hub's password, before the box dies
    node_password = (first.nodes / "pool-01.password").read_text().strip()
    node_ca = tmp_path / "pool-01-ca.crt"
    shutil.copy(first.nodes / "ca.crt", node_ca)
    hub_password = first.hub_password.read_text()
    shutil.rmtree(root)  # the box is gone

    second = BoxLayout(tmp_path / "new-box")
    started = time.monotonic()
    said = install(second.root, "--restore", str(bundle), "--name", "127.0.0.1")
    print(f"install.sh --restore: {time.monotonic() - started:.1f} s")
    assert "restored the box backup" in said.stdout and "made: the first manager" not in said.stdout
    assert "CA: keeping" in said.stdout and "server: keeping" in said.stdout and "made: the kit" not in said.stdout
    assert second.hub_password.read_text() == hub_password
    assert "unchanged: vmalert's API token" in said.stdout and "would: systemctl restart lavos-vmalert.service" in said.stdout

    broker = Broker(second.root)
    try:
        assert tls_connack(broker.tls_port, "pool-01", node_password, node_ca) == "Success"  # the Pi's own kit
        assert tls_connack(broker.tls_port, "pool-01", "wrong", node_ca) == "Not authorized"
        hub, store = hub_on(second, broker)
        try:
            wait_until(lambda: hub.mqtt_connected, 10, "the hub logged in with the restored password")
            facade = HubFacade(hub)
            assert {t: g.id for t, g in hub.open.items()} == {"pool-01": running}
            again = facade.reads.floor.game(paid)
            assert again.state == "stopped" and again.bill == bill_before
            paid_view = facade.reads.till.tab_payments(facade.reads.till.game_tab(paid))
            assert paid_view is not None and paid_view.status == "paid"
            with store.reader() as db:  # vmalert's token, restored with the box, still lets it post alerts
                assert find_token(db, second.vmalert_token.read_text().strip())[1].username == MONITORING_LOGIN
        finally:
            hub.close()
            store.close()
    finally:
        broker.stop()
