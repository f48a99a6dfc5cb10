"""Issue 9 item 3: a table id can never be a service account's MQTT login.

A node logs in as its table id, so `add-node lavos-hub` used to replace the hub's
password and ship a kit with its full read/write. The rule is one prefix (devices/service_accounts.py);
these tests hold the shipped ACL to it and drive the venue loader and the real `lavos` CLI.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from broker.domain.venue import load_venue
from devices.service_accounts import is_service_account, table_id_problem
from devices.tomlfile import ConfigError
from sim.mosquitto import SHIPPED_ACL, Mosquitto, acl_users
from tests.support.cli import lavos as run_lavos
from tests.support.hub import VENUE

VENUE_TEXT = VENUE.read_text(encoding="utf-8")


def lavos(*args: str) -> subprocess.CompletedProcess[str]:
    return run_lavos(*args)  # in-process (tests/support/cli.py)


def venue_with_table(tmp_path: Path, table_id: str) -> Path:
    """The shipped venue with pool-02 renamed."""
    path = tmp_path / "venue.toml"
    path.write_text(VENUE_TEXT.replace('id = "pool-02"', f'id = "{table_id}"', 1), encoding="utf-8")
    return path


def test_every_user_the_shipped_acl_names_is_reserved() -> None:
    users = acl_users(SHIPPED_ACL.read_text())
    assert {"lavos-hub", "lavos-hub-2", "lavos-monitor"} <= set(users)
    assert all(is_service_account(u) and table_id_problem(u) for u in users), users
    assert not any(table_id_problem(t.id) for t in load_venue(VENUE).tables)  # the club's own tables are fine


@pytest.mark.parametrize("table_id", ["lavos-monitor", "lavos-hub", "lavos-hub-7"])
def test_a_venue_with_a_service_accounts_name_as_table_is_refused_at_its_line(tmp_path: Path, table_id: Any) -> None:
    path = venue_with_table(tmp_path, table_id)
    line = VENUE_TEXT[: VENUE_TEXT.index('id = "pool-02"')].count("\n") + 1
    with pytest.raises(ConfigError) as err:
        load_venue(path)
    assert str(err.value).startswith(f"{path}:{line}: tables[1].id: table id '{table_id}' is reserved"), str(err.value)


def test_add_node_lavos_hub_exits_2_and_changes_no_password_file(tmp_path: Path) -> None:
    passwd = Mosquitto(tmp_path / "mq").passwd  # holds lavos-hub's (and lavos-monitor's) real hash
    before = passwd.read_bytes()
    kit = tmp_path / "kit"
    done = lavos(
        "broker",
        "add-node",
        "lavos-hub",
        "--venue",
        str(VENUE),
        "--passwd-file",
        str(passwd),
        "--out-dir",
        str(kit),
        "--mqtt-host",
        "lavos.local",
    )
    assert done.returncode == 2, done
    assert "'lavos-hub' is reserved" in done.stderr and "service account" in done.stderr
    assert passwd.read_bytes() == before
    assert not kit.exists() or not any(kit.iterdir())


def test_add_node_refuses_a_venue_that_names_a_table_lavos_hub(tmp_path: Path) -> None:
    """The attack as found: a venue with a table called lavos-hub, then add-node for it."""
    passwd = Mosquitto(tmp_path / "mq").passwd
    before = passwd.read_bytes()
    kit = tmp_path / "kit"
    done = lavos(
        "broker",
        "add-node",
        "lavos-hub",
        "--venue",
        str(venue_with_table(tmp_path, "lavos-hub")),
        "--passwd-file",
        str(passwd),
        "--out-dir",
        str(kit),
        "--mqtt-host",
        "lavos.local",
    )
    assert done.returncode == 2 and "is reserved" in done.stderr, done
    assert passwd.read_bytes() == before
    assert not kit.exists() or not any(kit.iterdir())
