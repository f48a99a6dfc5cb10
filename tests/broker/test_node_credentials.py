"""`lavos broker add-node`: the credentials it makes let exactly that node in, on a real Mosquitto."""

from __future__ import annotations

from devices.nodeconfig import load_node_config
from sim.mosquitto import Mosquitto
from tests.support.cli import lavos as run_lavos
from tests.support.hub import VENUE
from tests.support.mqtt import Collector


def lavos(*args):
    return run_lavos(*args)  # in-process (tests/support/cli.py): what is tested is the command, not a process start


def test_add_node_makes_working_credentials_and_config(tmp_path):
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


def test_add_node_refuses_unknown_table_and_bad_venue(tmp_path):
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
