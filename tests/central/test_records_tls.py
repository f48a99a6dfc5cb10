"""The records link as shipped: the centre on HTTPS (`lavos central serve --tls-cert --tls-key`), the
hall's sender checking its certificate against the centre's CA (`--central-ca-file`) and the host
name it dialled. A certificate of another CA, or of another name, is refused, and the records stay
in the hall's outbox until a link it can trust takes them."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.central.accounts import add_hall
from broker.central.service import Central
from broker.compose import CentralSettings
from broker.floor.games import StartGame, StopGame
from broker.outbox.sender import OutboxSender
from broker.storage.engine import open_store
from broker.storage.models import CentralRecord, OutboxRecord
from tests.support.centre import CentreServer
from tests.support.hub import started_hub
from tests.support.sqlite_template import CHEAP
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from broker.storage.engine import Store
    from tests.support.postgres import PostgresCluster


SHIPPED = Path(__file__).resolve().parents[2] / "deploy" / "mosquitto"


def _certs(out: Path, *hosts: str) -> Path:
    done = subprocess.run(["bash", str(SHIPPED / "make-certs.sh"), "--out", str(out), *hosts], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def centre(tmp_path: Path, postgres_cluster: PostgresCluster, postgres_template: str) -> Iterator[tuple[CentreServer, Store, str, Path]]:
    url = postgres_cluster.create_database(template=postgres_template)
    store = open_store(url)
    with store.session() as db:
        token = add_hall(db, "lavos", "ŠBK Lavos")
    certs = _certs(tmp_path / "centre", "localhost")  # the centre's name: not 127.0.0.1
    server = CentreServer(Central(store, hasher=CHEAP), tls=(certs / "server.crt", certs / "server.key")).start()
    yield server, store, token, certs
    server.stop()
    store.close()
    postgres_cluster.drop_database(url)


def _pending(store: Any) -> int:
    with store.reader() as db:
        result: int = db.scalar(select(func.count()).select_from(OutboxRecord))
        return result


def _at_centre(store: Any) -> int:
    with store.reader() as db:
        result: int = db.scalar(select(func.count()).select_from(CentralRecord))
        return result


def _refused_for(caplog: Any, words: str) -> bool:
    return any(words in r.getMessage() for r in caplog.records if r.name == "lavos.hub.outbox")


def test_records_go_only_over_a_link_whose_certificate_and_name_check_out(
    tmp_path: Path, centre: tuple[CentreServer, Store, str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    server, central_store, token, certs = centre
    caplog.set_level(logging.WARNING, "lavos.hub.outbox")
    other_ca = _certs(tmp_path / "other", "localhost") / "ca.crt"  # a CA the centre's certificate is not from
    right = f"https://localhost:{server.port}"
    wrong_ca = CentralSettings(url=right, token=token, ca_file=other_ca, retry_max_s=0.2)
    with started_hub(tmp_path / "hall.db", central=wrong_ca, watchdog=False) as hub:
        hub.execute(StopGame(game=hub.execute(StartGame(table="pool-01", actor="jana")), actor="jana"))
        wait_until(lambda: _refused_for(caplog, "CERTIFICATE_VERIFY_FAILED"), 10, "the sender refusing a certificate of another CA")
        assert _pending(hub.store) == 1 and _at_centre(central_store) == 0

        # The right CA, but the centre dialled by a name its certificate does not carry.
        caplog.clear()
        by_address = CentralSettings(url=f"https://127.0.0.1:{server.port}", token=token, ca_file=certs / "ca.crt")
        sender = OutboxSender(hub.store, "lavos", by_address, hub.execute)
        sender.start()
        try:
            wait_until(lambda: _refused_for(caplog, "IP address mismatch"), 10, "the sender refusing a certificate of another name")
        finally:
            sender.close()
        assert _pending(hub.store) == 1 and _at_centre(central_store) == 0

        # The centre's CA and its name: delivered, acknowledged, deleted.
        sender = OutboxSender(hub.store, "lavos", CentralSettings(url=right, token=token, ca_file=certs / "ca.crt"), hub.execute)
        sender.start()
        try:
            wait_until(lambda: _pending(hub.store) == 0, 10, "the record delivered over HTTPS and deleted")
        finally:
            sender.close()
        assert _at_centre(central_store) == 1 and sender.sent == 1
