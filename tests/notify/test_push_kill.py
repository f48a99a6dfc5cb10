"""Must show 1, the restart: a hub SIGKILLed while its receiver is down loses and duplicates
nothing; the next hub sends every queued message once, marked late."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from broker.adapters.notify_spool import NotifySpool
from tests.notify.receivers import Webhook
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path


pytestmark = pytest.mark.lavos_process

TABLES = ("pool-01", "pool-02", "pool-03", "pool-04", "pool-05")


def start(db_url: str, data_dir: Any, url: str, *tables: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.notify.hub_proc", db_url, str(data_dir), url, *tables],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def pending(data_dir: Any) -> int:
    spool = NotifySpool(data_dir)
    try:
        return spool.counts()[0]
    finally:
        spool.close()


def test_sigkill_while_the_receiver_is_down_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'hub.db'}"
    hook = Webhook().start()
    port = hook.port
    hook.stop()  # the club's internet is down
    url = f"json://127.0.0.1:{port}/hook"
    first = start(db_url, tmp_path, url, *TABLES)
    try:
        wait_until(lambda: pending(tmp_path) == len(TABLES), what="all five spooled")
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    hook.start(port)  # back
    second = start(db_url, tmp_path, url, *TABLES)  # the same alerts again: still open, only touched
    try:
        wait_until(lambda: len(hook.received) >= len(TABLES) and pending(tmp_path) == 0, what="the queued messages")
        texts = hook.texts()
        assert len(texts) == len(TABLES)
        for t in TABLES:
            name = "Pool " + t[-1]
            assert sum(x.startswith(name + ":") for x in texts) == 1
        assert all("(oneskorené, " in x for x in texts)
    finally:
        second.terminate()
        second.wait(10)
        hook.stop()
