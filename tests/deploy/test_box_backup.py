"""A box backup (broker/ops/box.py) on its own, in-process: a damaged one is refused before anything
is written, a nightly run whose copy off the box fails says so (and keeps the backup), and the
cookie secret's name is the dashboard's."""

from __future__ import annotations

import io
import json
import tarfile
from datetime import UTC, datetime, timedelta
from typing import IO, TYPE_CHECKING, cast

import pytest

from broker.domain.floor.box_rules import BackupStatus
from broker.ops.backup import BackupError
from broker.ops.box import SECRET_FILE, BoxLayout, backup_box, bundles, nightly, restore_box
from broker.storage.engine import open_store
from dashboard.web.app import SECRET_FILE as DASHBOARDS_SECRET_FILE
from tests.support.cli import lavos
from tests.support.hub import VENUE

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def layout(tmp_path: Path) -> BoxLayout:
    box = BoxLayout(tmp_path / "box")
    box.etc.mkdir(parents=True)
    box.venue.write_text(VENUE.read_text())
    box.data.mkdir(parents=True)
    (box.data / SECRET_FILE).write_text("cookie-secret\n")
    open_store(box.db_url).close()
    return box


def test_the_cookie_secret_is_the_one_the_dashboard_reads() -> None:
    assert SECRET_FILE == DASHBOARDS_SECRET_FILE


def test_a_damaged_box_backup_is_refused_before_anything_is_written(layout: BoxLayout, tmp_path: Path) -> None:
    good = tmp_path / "good.tar.gz"
    backup_box(layout, good)
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(good, "r:gz") as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            data = cast(IO[bytes], src.extractfile(m)).read() if m.isfile() else b""  # a file has its bytes
            if m.name.endswith("venue.toml"):
                data = data.replace(b"Lavos", b"Evil!")
                m.size = len(data)
            dst.addfile(m, io.BytesIO(data))
    target = BoxLayout(tmp_path / "new")
    with pytest.raises(BackupError, match=r"is damaged: files/etc/lavos/venue\.toml"):
        restore_box(bad, target)
    assert not target.root.exists() or not any(target.root.rglob("*.toml"))
    said = restore_box(good, target)
    assert "systemctl restart mosquitto lavos-server" in said
    assert target.venue.read_text() == layout.venue.read_text() and (target.data / SECRET_FILE).read_text() == "cookie-secret\n"


def test_a_nightly_backup_whose_copy_fails_says_so_and_keeps_the_backup(layout: BoxLayout, tmp_path: Path) -> None:
    layout.backup_conf.write_text(f'dir = "/backups"\nkeep_days = 2\ncopy_to = "{tmp_path / "usb-not-mounted"}"\n')
    old = datetime.now(UTC) - timedelta(days=5)
    first = nightly(layout, now=old)
    assert not first.ok and "is the USB stick plugged in and mounted?" in (first.copy_error or "")
    status = BackupStatus.from_json(layout.backup_status.read_text())
    assert status == first and status.good_at is None
    usb = tmp_path / "usb-not-mounted"
    usb.mkdir()
    (usb / "lavos-2026-01-01T043000Z.tar.gz").write_text("an older night, copied then")
    second = nightly(layout)
    assert second.ok and second.good_at == second.at and second.file is not None
    name = second.file.rsplit("/", 1)[-1]
    assert [p.name for p in bundles(layout.under("backups"))] == [name]  # the one five days old is gone (keep_days 2)
    # the copy never deletes: the older night stays on the stick beside the new one
    assert sorted(p.name for p in usb.iterdir()) == ["lavos-2026-01-01T043000Z.tar.gz", name]


def test_the_box_commands_take_the_database_from_lavos_db(layout: BoxLayout, tmp_path: Path) -> None:
    """A PostgreSQL box names its database in LAVOS_DB (the units' drop-ins, README.md): the nightly
    backup, a box backup and box setup use it, as every command's --db says, not the root's SQLite."""
    other = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    open_store(other).close()
    lavos("backup", "--nightly", "--root", str(layout.root), env={"LAVOS_DB": other}, ok=True)
    (bundle,) = bundles(layout.under("var/backups/lavos"))
    with tarfile.open(bundle, "r:gz") as tar:
        manifest = json.loads(cast(IO[bytes], tar.extractfile("lavos-backup.json")).read())
    assert str(tmp_path / "elsewhere.db") in manifest["database"]["said"], manifest["database"]
