"""`lavos server` as a real process: serves, stops cleanly on SIGTERM, and refuses bad setups with exit 2."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from sqlalchemy import text

from broker.storage.engine import open_store
from devices.version import software_version
from sim.mosquitto import free_port
from tests.support import httpc
from tests.support.hub import REPO, VENUE
from tests.support.server import LAVOS, START_TIMEOUT_S

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto


def _server(tmp_path: Any, *args: str, password: str = "hub-secret") -> subprocess.Popen[str]:
    pw = tmp_path / "hub.pw"
    pw.write_text(password + "\n")
    env = {**os.environ, "LAVOS_DATA_DIR": str(tmp_path / "data")}
    env.pop("LAVOS_DB", None)
    return subprocess.Popen(
        [*LAVOS, "server", "--mqtt-password-file", str(pw), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _refused(tmp_path: Any, *args: str, password: str = "hub-secret") -> str:
    proc = _server(tmp_path, *args, password=password)
    try:
        _out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 2, err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_serves_the_api_and_stops_cleanly_on_sigterm(mosquitto: Mosquitto, tmp_path: Path) -> None:
    port = free_port()
    proc = _server(
        tmp_path,
        "--venue",
        str(VENUE),
        "--mqtt",
        f"mqtt://lavos-hub@127.0.0.1:{mosquitto.port}",
        "--http",
        f"127.0.0.1:{port}",
        "--data-dir",
        str(tmp_path / "data"),
    )
    assert proc.stderr is not None
    try:
        deadline = time.monotonic() + START_TIMEOUT_S  # the start imports the app and migrates: slow on a loaded machine
        while True:
            try:
                r = httpc.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else "no answer"
                time.sleep(0.1)
        assert r.json() == {"ok": True, "mqtt": True, "db": True, "backend": "sqlite", "version": software_version()}
        assert httpc.get(f"http://127.0.0.1:{port}/api/tables").status_code == 401
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "metrics are off" in err and "stopped" in err
    assert (tmp_path / "data" / "lavos.db").exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--venue", "nowhere.toml"], "nowhere.toml: file not found"),
        (["--mqtt", "http://host"], "must look like mqtt://"),
        (["--mqtt", "mqtt://lavos-hub@127.0.0.1:1"], "cannot reach the MQTT broker"),
        (["--http", "localhost"], "--http 'localhost' must be HOST:PORT"),
        (["--db", "mysql://x/y"], "not supported"),
        (["--influx-token-file", "influx.token"], "--influx-token-file without --influx"),
    ],
)
def test_bad_setups_are_one_clear_line_and_exit_2(mosquitto: Mosquitto, tmp_path: Path, args: Any, message: Any) -> None:
    base = {"--venue": str(VENUE), "--mqtt": f"mqtt://lavos-hub@127.0.0.1:{mosquitto.port}", "--http": "127.0.0.1:0"}
    base.update(dict(zip(args[::2], args[1::2])))
    assert message in _refused(tmp_path, *[x for kv in base.items() for x in kv])


def test_a_newer_schema_and_a_wrong_mqtt_password_are_refused(mosquitto: Mosquitto, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    store = open_store(url)
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = 'from_the_future'"))
    store.close()
    common = ["--venue", str(VENUE), "--http", "127.0.0.1:0"]
    assert "upgrade Lavos" in _refused(tmp_path, *common, "--mqtt", f"mqtt://lavos-hub@127.0.0.1:{mosquitto.port}", "--db", url)
    assert "refused the hub's login" in _refused(
        tmp_path,
        *common,
        "--mqtt",
        f"mqtt://lavos-hub@127.0.0.1:{mosquitto.port}",
        "--db",
        f"sqlite:///{tmp_path / 'ok.db'}",
        password="wrong",
    )
