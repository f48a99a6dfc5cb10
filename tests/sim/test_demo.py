"""`lavos demo` as a user runs it: it comes up, a lively evening through the API, and Ctrl-C
leaves no process and no port behind. How soon it comes up: bench/soak.py."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import httpc
from tests.support.matching import found
from tests.support.waiting import HANG_S

ROOT = Path(__file__).resolve().parents[2]
MANAGER = ("manager", "manager-demo")
URL = re.compile(r"Dashboard and API: (http://\S+?)/?\s")
BROKER = re.compile(r"MQTT broker: .* on 127\.0\.0\.1:(\d+)")

pytestmark = pytest.mark.slow


def _stat(pid: str) -> tuple[int, int] | None:
    """(parent pid, process group) of a process, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses
    return int(fields[1]), int(fields[2])


def left_behind(pid: int) -> list[int]:
    """Processes still in the demo's process group, or children of it."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != pid:
            st = _stat(entry.name)
            if st and (st[1] == pid or st[0] == pid):
                found.append(int(entry.name))
    return found


def port_free(port: int) -> bool:
    with socket.socket() as s:
        # The broker closed its clients' connections itself, so their TIME_WAIT remains a while;
        # what matters is that nothing listens, and a listener would fail this bind.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def start_demo(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    out = tmp_path / "demo.out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lavos_cli", "demo", *args],
        cwd=ROOT,
        stdout=out.open("w"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "300"},
        start_new_session=True,  # its own process group, as a shell gives a command
    )
    return proc, out


def wait_for(what: str, check: Any, timeout: float, proc: subprocess.Popen[bytes], out: Path) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the demo exited ({proc.returncode}) before {what}:\n{out.read_text()}")
        value = check()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"no {what} within {timeout:.0f} s:\n{out.read_text()[-4000:]}")


def stop_like_ctrl_c(proc: subprocess.Popen[bytes], out: Path) -> str:
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C goes to the whole foreground group
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the demo did not stop within 30 s of Ctrl-C:\n{out.read_text()[-4000:]}")
    return out.read_text()


def assert_ended_cleanly(proc: subprocess.Popen[bytes], text: str) -> None:
    """A demo that has ended: exit status 0, its goodbye printed, no traceback, no process left."""
    assert proc.returncode == 0, text[-4000:]
    assert "demo stopped" in text and "Traceback" not in text, text[-4000:]
    assert not left_behind(proc.pid), "a process of the demo outlived it"


def test_demo_at_speed_20_shows_the_evening_through_the_api_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    proc, out = start_demo(tmp_path, "--speed", "20")
    try:

        def healthy() -> str | None:
            m = URL.search(out.read_text())
            if not m:
                return None
            try:
                r = httpc.get(f"{m.group(1)}/api/health", timeout=2)
            except httpx.HTTPError:
                return None
            return m.group(1) if r.status_code == 200 and r.json()["ok"] else None

        base = wait_for("healthy dashboard", healthy, HANG_S, proc, out)
        page = httpc.get(f"{base}/", follow_redirects=True, timeout=10)
        assert page.status_code == 200 and "<form" in page.text, "the dashboard's pages are served (its login form)"
        api = httpc.Client(base_url=f"{base}/api", auth=MANAGER, timeout=10)
        seen: dict[str, int | bool] = {}

        def evening_visible() -> bool:
            sessions = api.get("/sessions").json()
            if sessions:
                seen["sessions"] = len(sessions)
            day = sessions[0]["started_at"][:10] if sessions else date.today().isoformat()
            drops = api.get("/reports/drops", params={"day": day}).json()
            if sum(drops["totals"].values()) > 0:
                seen["drops"] = sum(drops["totals"].values())
            kinds = {a["kind"] for a in api.get("/alerts", params={"open": "false"}).json()}
            if "foosball_no_member" in kinds:
                seen["foosball alert"] = True
            offline = [n for n in api.get("/nodes").json() if not n["online"]]
            if "node_offline" in kinds or offline:
                seen["offline node"] = True
            return len(seen) == 4

        wait_for("sessions, drops, a foosball alert and an offline node", evening_visible, HANG_S, proc, out)
        assert seen["sessions"] >= 3 and seen["drops"] >= 1
        broker_port = int(found(BROKER, out.read_text()).group(1))
    finally:
        text = stop_like_ctrl_c(proc, out)
    assert_ended_cleanly(proc, text)
    assert port_free(broker_port), "the broker's port is still taken"


def run_to_the_end(tmp_path: Path, *args: str) -> str:
    """Run a demo with --seconds and return what it printed, once it has exited cleanly."""
    proc, out = start_demo(tmp_path, *args)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the demo did not stop by itself:\n{out.read_text()[-4000:]}")
    text = out.read_text()
    assert_ended_cleanly(proc, text)
    return text


def test_demo_stops_by_itself_after_seconds(tmp_path: Path) -> None:
    # What it plays meanwhile is test_demo_at_speed_20_...'s; how much of the evening 10 s hold
    # depends on the machine's load, so nothing of it is asserted here.
    text = run_to_the_end(tmp_path, "--speed", "20", "--seconds", "10")
    assert URL.search(text), text[-2000:]  # it came up (its banner), then ended by itself
    assert "Push notifications" not in text  # off unless --notify-webhook (issue 13)


# The evening's first 15 hall minutes, where everything the tests look for happens, at --speed 20.
FIRST_QUARTER_AT_20_S = 15 * 60 / 20


def run_until(tmp_path: Path, what: str, pattern: str, *args: str, timeout: float = FIRST_QUARTER_AT_20_S + HANG_S) -> str:
    """Run a demo until its output shows `pattern` (a regular expression), then stop it as Ctrl-C
    does and return all it printed: it ends as soon as what the test looks for has happened, where
    a fixed --seconds had to leave a loaded machine a margin."""
    proc, out = start_demo(tmp_path, *args)
    try:
        wait_for(what, lambda: re.search(pattern, out.read_text()), timeout, proc, out)
    finally:
        text = stop_like_ctrl_c(proc, out)
    assert_ended_cleanly(proc, text)
    return text


def test_demo_runs_on_the_embedded_broker(tmp_path: Path) -> None:
    pytest.importorskip("iotcore")
    # Card taps reach the hub (a check-in) and so does the evening's node that drops out (offline).
    both = r"(?s)^(?=.*checked in)(?=.*node OFFLINE)"
    text = run_until(tmp_path, "a check-in and a node offline", both, "--speed", "20", "--broker", "embedded")
    assert "MQTT broker: iotcore (embedded)" in text


def test_demo_pushes_its_alerts_to_a_local_ntfy_style_webhook(tmp_path: Path) -> None:
    """Must show 3 of issue 13: --notify-webhook (off by default) prints the receiver's address in
    the banner and what it receives (the evening's alerts, in Slovak, with the table's name)."""
    text = run_until(tmp_path, "an alert pushed", r"push → .*(Pool|Futbal|Karambol|Šípky)", "--speed", "60", "--notify-webhook")
    assert re.search(r"Push notifications \(ntfy-style, printed here\): http://127\.0\.0\.1:\d+/lavos-demo", text), text
    # Off by default: test_demo_stops_by_itself_after_seconds (a demo run of its own costs ~8 s).
