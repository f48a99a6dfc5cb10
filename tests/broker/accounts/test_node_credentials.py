"""`lavos broker add-node`: the credentials it makes let exactly that node in, on a real Mosquitto."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from devices.nodeconfig import load_node_config
from sim.mosquitto import Mosquitto
from tests.support.cli import lavos as run_lavos
from tests.support.hub import VENUE
from tests.support.mqtt import Collector

if TYPE_CHECKING:
    from pathlib import Path
    from subprocess import CompletedProcess


def lavos(*args: Any) -> CompletedProcess[str]:
    return run_lavos(*args)  # in-process (tests/support/cli.py): what is tested is the command, not a process start


def test_add_node_makes_working_credentials_and_config(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path / "mq")
    passwd = broker.workdir / "passwd"
    done = lavos(
        "broker",
        "add-node",
        "pool-03",
        "--venue",
        str(VENUE),
        "--passwd-file",
        str(passwd),
        "--out-dir",
        str(tmp_path / "kit"),
        "--mqtt-host",
        "lavos.local",
        "--no-tls",
    )
    assert done.returncode == 0, done.stderr
    cfg = load_node_config(tmp_path / "kit" / "pool-03.toml")
    assert cfg.table == "pool-03" and cfg.mqtt.host == "lavos.local" and len(cfg.pins.pockets) == 6
    password = (tmp_path / "kit" / "pool-03.password").read_text().strip()
    broker.start()
    try:
        node = Collector(broker.port, username="pool-03", password=password, topics=("lavos/v1/table/pool-03/light/set",))
        node.close()
    finally:
        broker.stop()


def test_add_node_refuses_unknown_table_and_bad_venue(tmp_path: Path) -> None:
    done = lavos(
        "broker",
        "add-node",
        "pool-99",
        "--venue",
        str(VENUE),
        "--passwd-file",
        str(tmp_path / "p"),
        "--out-dir",
        str(tmp_path),
        "--mqtt-host",
        "h",
    )
    assert done.returncode == 2 and "pool-99" in done.stderr and "pool-01" in done.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text("[venue]\nid = 3\n")
    done = lavos(
        "broker",
        "add-node",
        "pool-01",
        "--venue",
        str(bad),
        "--passwd-file",
        str(tmp_path / "p"),
        "--out-dir",
        str(tmp_path),
        "--mqtt-host",
        "h",
    )
    assert done.returncode == 2 and "bad.toml" in done.stderr
    assert not (tmp_path / "p").exists()


def test_add_node_keeps_the_fleets_ansible_inventory(tmp_path: Path) -> None:
    """Issue 30, item 4: the inventory deploy/ansible/update-nodes.yml updates the nodes with."""
    import json

    def add(table: str, *more: str) -> Any:
        args = [
            "--venue",
            str(VENUE),
            "--passwd-file",
            str(tmp_path / "passwd"),
            "--out-dir",
            str(tmp_path / "kit"),
            "--mqtt-host",
            "h",
            "--no-tls",
        ]
        done = lavos("broker", "add-node", table, *args, *more)
        assert done.returncode == 0, done.stderr
        return done

    inventory = tmp_path / "kit" / "inventory.json"
    assert f"in {inventory} as lavos-pool-03.local" in add("pool-03").stdout
    add("pool-04", "--node-host", "192.168.1.54")
    data = json.loads(inventory.read_text())
    data["all"]["children"]["lavos_nodes"]["hosts"]["pool-03"]["ansible_user"] = "admin"  # an installer's own edit
    data["all"]["children"]["lavos_nodes"]["vars"]["ansible_user"] = "lavosadmin"
    inventory.write_text(json.dumps(data))
    add("pool-03")  # a renewed password keeps the rest
    group = json.loads(inventory.read_text())["all"]["children"]["lavos_nodes"]
    assert group["hosts"] == {
        "pool-03": {"ansible_host": "lavos-pool-03.local", "lavos_table": "pool-03", "ansible_user": "admin"},
        "pool-04": {"ansible_host": "192.168.1.54", "lavos_table": "pool-04"},
    }
    assert group["vars"]["ansible_user"] == "lavosadmin"
    assert oct(inventory.stat().st_mode & 0o777) == "0o600"


def test_add_node_refuses_an_inventory_it_cannot_keep_before_changing_the_password(tmp_path: Path) -> None:
    (tmp_path / "kit").mkdir()
    (tmp_path / "kit" / "inventory.json").write_text("all:\n  hosts: {}\n")  # YAML by hand: not ours to rewrite
    args = [
        "--venue",
        str(VENUE),
        "--passwd-file",
        str(tmp_path / "passwd"),
        "--out-dir",
        str(tmp_path / "kit"),
        "--mqtt-host",
        "h",
        "--no-tls",
    ]
    done = lavos("broker", "add-node", "pool-03", *args)
    assert done.returncode == 2 and "inventory.json: not an inventory this command can keep" in done.stderr
    assert not (tmp_path / "passwd").exists()
