"""`lavos edge --config`: garbage configs exit 2 with file:line: key; a good one runs until SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from devices.nodeconfig import dump_node_config
from lavos_cli import app
from sim.mosquitto import free_port
from tests.edge.nodes import node_config
from tests.support.waiting import Output, wait_until

ROOT = Path(__file__).resolve().parents[2]
GOOD = 'table = "pool-01"\nkind = "pool"\n\n[pins]\npockets = [5, 6, 13, 19, 26, 21]\n'


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param(GOOD + "\n[mqtt]\nport = 99999\n", ":8: mqtt.port:", id="port-out-of-range"),
        pytest.param(GOOD + '\n[mqtt]\nhots = "x"\n', ":8: mqtt.hots: Extra inputs are not permitted", id="unknown-key"),
        pytest.param(GOOD.replace('"pool-01"', '"Pool 01"'), ":1: table:", id="bad-table-id"),
        pytest.param(GOOD.replace("pockets = [5, 6, 13, 19, 26, 21]", "pockets = [5, 5]"), "more than one", id="pin-twice"),
        pytest.param(GOOD.replace('kind = "pool"', 'kind = "snooker"'), ":2: kind:", id="unknown-kind"),
        pytest.param("table = \n", "not valid TOML", id="not-toml"),
        pytest.param(GOOD + "telemetry_interval_s = -1\n", "telemetry_interval_s", id="negative-interval"),
        pytest.param('kind = "pool"\n[pins]\n', "table: Field required", id="missing-table"),
    ],
)
def test_garbage_config_exits_2_saying_where(tmp_path: Path, text: Any, expected: Any) -> None:
    path = tmp_path / "node.toml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["edge", "--config", str(path)])
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert str(path) in result.output


def test_missing_config_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["edge", "--config", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2
    assert "nope.toml: file not found" in result.output


def test_missing_password_file_exits_2(tmp_path: Path) -> None:
    cfg = node_config(tmp_path, free_port(), mqtt={"password_file": str(tmp_path / "absent")})
    path = tmp_path / "node.toml"
    path.write_text(dump_node_config(cfg))
    result = CliRunner().invoke(app, ["edge", "--config", str(path)], env={"GPIOZERO_PIN_FACTORY": "mock"})
    assert result.exit_code == 2
    assert "absent" in result.output


def test_test_sensors_runs_without_mqtt(tmp_path: Path) -> None:
    path = tmp_path / "node.toml"
    path.write_text(GOOD)
    result = CliRunner().invoke(
        app, ["edge", "--config", str(path), "test-sensors", "--seconds", "0.3"], env={"GPIOZERO_PIN_FACTORY": "mock"}
    )
    assert result.exit_code == 0, result.output
    assert "pocket 5 (GPIO 21): 0 pulses" in result.output


def test_the_agent_runs_until_sigterm_without_a_broker(tmp_path: Path) -> None:
    path = tmp_path / "node.toml"
    path.write_text(dump_node_config(node_config(tmp_path, free_port())))
    proc = subprocess.Popen(
        [sys.executable, "-m", "lavos_cli", "edge", "--config", str(path)],
        cwd=ROOT,
        env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    out = Output(proc.stdout)
    try:
        # "started" comes after the signal handlers are in place (edge/agent_main.py); a fixed
        # 2 s was sometimes still the import, and SIGTERM then killed it (-15) under load.
        wait_until(lambda: "started" in out.text or proc.poll() is not None, timeout=30, what="the agent started")
        assert proc.poll() is None, out.rest()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "started" in out.rest()
