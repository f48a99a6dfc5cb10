"""Node configs derived from the venue file: content, TOML round trip, the `lavos node-config` CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from broker.domain.venue import load_venue
from devices.kinds import Kind
from devices.nodeconfig import NodeConfig, dump_node_config, load_node_config, node_config_for
from devices.tomlfile import ConfigError

REPO = Path(__file__).resolve().parents[2]
VENUE = load_venue(REPO / "deploy" / "venues" / "lavos.toml")
TABLE_IDS = [t.id for t in VENUE.tables]
LAVOS = Path(sys.executable).with_name("lavos")


@pytest.mark.parametrize("table_id", TABLE_IDS)
def test_node_config_for_every_lavos_table_round_trips(tmp_path: Path, table_id: Any) -> None:
    cfg = node_config_for(
        VENUE,
        table_id,
        mqtt_host="lavos.local",
        mqtt_port=8883,
        tls=True,
        password_file=Path("/etc/lavos/mqtt-password"),
        ca_file=Path("/etc/lavos/ca.pem"),
    )
    spec = VENUE.table(table_id)
    assert (cfg.table, cfg.kind, cfg.pins) == (spec.id, spec.kind, spec.pin_map)
    assert (cfg.mqtt.host, cfg.mqtt.port, cfg.mqtt.tls) == ("lavos.local", 8883, True)
    # only the members-only foosball tables get a club-card reader
    assert (cfg.card_reader.kind == "evdev") == (spec.kind is Kind.FOOSBALL)
    path = tmp_path / "node.toml"
    path.write_text(dump_node_config(cfg), encoding="utf-8")
    assert load_node_config(path) == cfg


def test_lavos_node_config_cli_output_loads_back(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(LAVOS), "node-config", "pool-01", "--mqtt-host", "lavos.local"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    path = tmp_path / "node.toml"
    path.write_text(out.stdout, encoding="utf-8")
    cfg = load_node_config(path)
    assert cfg == node_config_for(VENUE, "pool-01", mqtt_host="lavos.local", password_file=Path("/etc/lavos/mqtt-password"))
    assert out.stdout.startswith("# Lavos table node: pool-01 (pool)\n")


def test_lavos_node_config_unknown_table_exits_2_naming_the_tables() -> None:
    out = subprocess.run([str(LAVOS), "node-config", "pool-11"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stdout == ""
    assert "error: no table 'pool-11' in venue 'lavos'" in out.stderr
    assert "pool-10" in out.stderr


def test_lavos_node_config_bad_venue_exits_2(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(LAVOS), "node-config", "pool-01", "--venue", str(tmp_path / "none.toml")], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2
    assert "none.toml: file not found" in out.stderr


def test_node_config_for_unknown_table_raises_key_error() -> None:
    with pytest.raises(KeyError, match="no table 'pool-11'"):
        node_config_for(VENUE, "pool-11")


def write(tmp_path: Any, text: str) -> Path:
    path = tmp_path / "node.toml"
    path.write_text(text, encoding="utf-8")
    result: Path = path
    return result


BASE = 'table = "pool-01"\nkind = "pool"\n[pins]\npockets = [5, 6, 13, 19, 26, 21]\n'


@pytest.mark.parametrize(
    "text, where, why",
    [
        (BASE + '[card_reader]\nkind = "evdev"\n', ":(top level)|: ", "needs card_reader.device"),
        (BASE + "[mqtt]\nport = 70000\n", ":6: mqtt.port", "less than or equal to 65535"),
        (BASE + '[mqtt]\nport = "1883"\n', ":6: mqtt.port", "valid integer"),
        (BASE + "[filter]\nmin_pulse_ms = -1\n", ":6: filter.min_pulse_ms", "greater than or equal to 0"),
        (BASE + "[light]\nboot_state = true\n", ":6: light.boot_state", "'off' or 'on'"),
        (BASE.replace('"pool"', '"snooker"'), ":2: kind", "'pool', 'carom', 'foosball' or 'darts'"),
        (BASE + "telemetry = 1\n", ":5: pins.telemetry", "Extra inputs"),
    ],
)
def test_bad_node_configs_name_line_and_key(tmp_path: Path, text: Any, where: Any, why: Any) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_node_config(path)
    message = str(err.value)
    assert why in message
    assert any(message.startswith(f"{path}{w}") for w in where.split("|")), message


def test_defaults_are_safe() -> None:
    cfg = NodeConfig(table="pool-01", kind=Kind.POOL, pins=VENUE.table("pool-01").pin_map)
    assert cfg.light.boot_state == "off"
    assert cfg.card_reader.kind == "none"
    assert cfg.mqtt.protocol == "3.1.1"
