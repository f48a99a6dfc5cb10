"""Issue 19, item 26: the files that hold personal data or takings are owner-only from their
first byte, whatever the umask: the notification spool (the daily summary's takings, alert texts)
and `lavos members export FILE` (names, notes, cards). Before, both took the process umask (0644)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from broker.adapters.notify_spool import SPOOL_FILE, NotifySpool
from tests.support.cli import lavos


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_notification_spool_is_owner_only_under_an_open_umask(tmp_path: Path) -> None:
    with umask(0o000):
        spool = NotifySpool(tmp_path)
        try:
            assert _mode(tmp_path / SPOOL_FILE) == 0o600
        finally:
            spool.close()


def test_the_members_export_is_owner_only_under_an_open_umask(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'hub.db'}"
    out = tmp_path / "clenovia.csv"
    with umask(0o022):
        lavos("members", "export", str(out), "--db", db, ok=True)
    assert _mode(out) == 0o600 and out.read_bytes().startswith(b"\xef\xbb\xbf")
