"""Issue 30, item 4: one command updates every node, a few at a time, never a table in a game.

deploy/ansible/update-nodes.yml as the hub box runs it, by the real ansible-playbook, with the
inventory `lavos broker add-node` keeps, against a real hub (in this process, on a real socket,
tests/support/web.py served_lavos) and, instead of the Pis, each table's scratch root over
Ansible's local connection: the install script runs with --prefix there, as its own tests run it.
pool-01 has a game running, pool-02 is free and its node answers at the hub's version.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from broker.accounts.users import issue_token
from broker.domain.venue import load_venue
from broker.floor.games import StartGame, StopGame
from broker.ops.node_inventory import keep_node, load_inventory
from broker.storage.models import Node
from devices import contract
from devices.nodeconfig import dump_node_config, node_config_for
from devices.version import software_version
from tests.support.hub import REPO, VENUE, on_writer
from tests.support.waiting import wait_until
from tests.support.web import ServedHub, node_link, served_lavos

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto


PLAYBOOK = REPO / "deploy" / "ansible" / "update-nodes.yml"
USERS = {"boss": ("manager", "fleet-pw-1")}
BUSY, FREE = "pool-01", "pool-02"


@pytest.fixture(scope="module")
def hub(mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedHub]:
    with served_lavos(mosquitto, tmp_path_factory.mktemp("fleet-hub"), dict(USERS)) as served:
        yield served


@pytest.fixture
def fleet(hub: ServedHub, mosquitto: Mosquitto, tmp_path: Path) -> Iterator[tuple[Any, Any, Any]]:
    """The inventory as add-node keeps it, each host pointed at its scratch root; the token file; a game on BUSY."""
    inventory = tmp_path / "nodes" / "inventory.json"
    for table in (BUSY, FREE):
        keep_node(inventory, load_inventory(inventory), table, None)
        cfg = node_config_for(load_venue(VENUE), table, mqtt_host="lavos.local", password_file=Path("/etc/lavos/mqtt-password"))
        (tmp_path / f"{table}.toml").write_text(dump_node_config(cfg))
    data = load_inventory(inventory)
    for table, host in data["all"]["children"]["lavos_nodes"]["hosts"].items():
        assert host["ansible_host"] == f"lavos-{table}.local" and host["lavos_table"] == table
        host.update(
            ansible_connection="local",
            lavos_root=str(tmp_path / "roots" / table),
            lavos_install_args=f"--no-pip --config {tmp_path}/{table}.toml",
        )
    inventory.write_text(json.dumps(data))
    token = tmp_path / "fleet-token"
    token.write_text(on_writer(hub.hub, lambda db: issue_token(db, "boss", "fleet-update", actor="test")) + "\n")
    game = hub.hub.execute(StartGame(table=BUSY, actor="test"))
    try:
        with node_link(mosquitto, FREE) as node:  # FREE's node is up, on the hub's version
            birth = {"state": "online", "boot": "b-fleet", "version": software_version(), "contract": contract.VERSION}
            node.publish(contract.status_topic(FREE), json.dumps(birth), retain=True)

            def online() -> bool:
                with hub.hub.store.reader() as db:
                    n = db.get(Node, FREE)
                    return bool(n and n.online and n.boot == "b-fleet")

            wait_until(online, what=f"{FREE}'s birth at the hub")
            # FREE's agent "restarts" when install.sh has put its unit in place: a birth with a new boot.
            unit = tmp_path / "roots" / FREE / "etc/systemd/system/lavos-edge.service"
            stop = threading.Event()

            def restart_when_installed() -> None:
                while not stop.wait(0.05):
                    if unit.exists():
                        node.publish(contract.status_topic(FREE), json.dumps({**birth, "boot": "b-fleet-2"}), retain=True)
                        return

            watcher = threading.Thread(target=restart_when_installed, daemon=True)
            watcher.start()
            try:
                yield tmp_path, inventory, token
            finally:
                stop.set()
                watcher.join(5)
    finally:
        hub.hub.execute(StopGame(game=game, actor="test"))


def playbook(hub: ServedHub, tmp_path: Path, inventory: Path, token: Path, *more: str) -> subprocess.CompletedProcess[str]:
    extra = {
        "lavos_hub_url": hub.base_url,
        "lavos_token_file": str(token),
        "lavos_wait_free_s": 0,
        "lavos_poll_s": 1,
        "lavos_back_s": 10,
        "ansible_become": False,  # root already, and no sudo here
    }
    env = {
        **os.environ,
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-local"),
        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "ansible-remote"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_HOST_KEY_CHECKING": "False",
    }
    cmd = ["ansible-playbook", "-i", str(inventory), str(PLAYBOOK), "-e", json.dumps(extra), *more]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)


def service(hub: ServedHub, table: str) -> tuple[bool, dict[str, Any] | None]:
    t = hub.api("GET", f"/api/tables/{table}", "boss")
    return t["out_of_service"], t["session"]


def test_check_mode_changes_nothing_and_says_which_table_waits(hub: ServedHub, fleet: tuple[Any, Any, Any]) -> None:
    tmp_path, inventory, token = fleet
    done = playbook(hub, tmp_path, inventory, token, "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{BUSY}: a game is running; not updated" in done.stdout
    assert not (tmp_path / "roots").exists()
    assert service(hub, BUSY)[0] is False and service(hub, FREE) == (False, None)


def test_the_free_table_is_updated_and_back_in_service_the_busy_one_is_left_alone(hub: ServedHub, fleet: tuple[Any, Any, Any]) -> None:
    tmp_path, inventory, token = fleet
    done = playbook(hub, tmp_path, inventory, token)
    assert done.returncode == 0, done.stdout + done.stderr
    free = tmp_path / "roots" / FREE
    assert (free / "opt/lavos/deploy/pi/install.sh").is_file() and (free / "opt/lavos/edge/pins.py").is_file()
    assert (free / "etc/lavos/node.toml").read_text() == (tmp_path / f"{FREE}.toml").read_text()
    assert (free / "etc/systemd/system/lavos-edge.service").read_bytes() == (REPO / "deploy/systemd/lavos-edge.service").read_bytes()
    assert not (free / "opt/lavos.new").exists()
    assert service(hub, FREE) == (False, None)  # taken out for the update, and back
    assert [n["boot"] for n in hub.api("GET", "/api/nodes", "boss") if n["table"] == FREE] == ["b-fleet-2"]  # waited for the restart
    assert not (tmp_path / "roots" / BUSY).exists()  # never touched during its game
    out, game = service(hub, BUSY)
    assert out is False and game is not None and game["state"] == "running"
    assert f"{BUSY}: a game is running; not updated" in done.stdout
    with hub.hub.store.reader() as db:
        history = [a for a in _audit(db) if a.startswith("table.")]
    assert history[-2:] == [f"table.out_of_service:table:{FREE}", f"table.in_service:table:{FREE}"]


def _audit(db: Any) -> list[str]:
    from sqlalchemy import select

    from broker.storage.models import AuditEntry

    return [f"{e.action}:{e.target}" for e in db.scalars(select(AuditEntry).order_by(AuditEntry.id))]
