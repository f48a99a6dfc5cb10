"""The hub box watching itself (broker/floor/box_watch.py), in-process on SQLite: the billing clock
(a fake unsynchronised clock and a fake monotonic clock, never the machine's real one), the
nightly backup's status, and a real certificate near its end pushed to the manager's webhook."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from broker.accounts.users import new_password
from broker.adapters.box_sensors import BoxSensors, certificate_end
from broker.adapters.notify import Notifier
from broker.compose import open_store
from broker.domain.floor.box_rules import BackupStatus
from broker.floor.games import StartGame
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from broker.people.accounts import CreateStaff
from broker.storage.models import Alert, GameOp
from tests.notify.receivers import Webhook
from tests.support.hub import REPO, new_hub
from tests.support.sqlite_template import CHEAP, migrated_sqlite
from tests.support.waiting import wait_until
from tests.support.web import Browser, bound_app

if TYPE_CHECKING:
    from broker.hall.hub import Hub
    from broker.storage.engine import Store


START = datetime(2026, 12, 5, 17, 0, tzinfo=UTC)  # a Saturday evening, the club open


@dataclass
class FakeClocks:
    """The hub's wall clock, a monotonic clock and the clock's synchronisation, all by hand."""

    now: datetime = START
    mono: float = 1000.0
    synced: bool = True

    def tick(self, seconds: float) -> None:  # time passes on both clocks
        self.now += timedelta(seconds=seconds)
        self.mono += seconds


@pytest.fixture
def clocks() -> FakeClocks:
    return FakeClocks()


def box_hub(tmp_path: Path, clocks: FakeClocks, **sensors: Any) -> tuple[Hub, Store]:
    store = open_store(migrated_sqlite(tmp_path / "lavos.db"))
    box = BoxSensors(synchronised=lambda: clocks.synced, monotonic=lambda: clocks.mono, **sensors)
    hub = new_hub(store, clock=lambda: clocks.now, box=box, data_dir=tmp_path)
    return hub, store


@pytest.fixture
def hub(tmp_path: Path, clocks: FakeClocks) -> Iterator[Any]:
    hub, store = box_hub(tmp_path, clocks)
    yield hub
    hub.close()
    store.close()


def alerts(hub: Any) -> dict[str, tuple[str, str, bool]]:
    """cause -> (severity, Slovak message, open) of every alert."""
    with hub.store.reader() as db:
        return {a.cause_key: (a.severity, a.message, a.closed_at is None) for a in db.query(Alert)}


def ops(hub: Any, game: int) -> list[tuple[str, dict[str, Any]]]:
    with hub.store.reader() as db:
        return [(o.kind, o.data) for o in db.query(GameOp).filter(GameOp.session_id == game).order_by(GameOp.seq)]


def test_an_unsynchronised_clock_is_an_alert_on_every_tablet_and_marks_the_games_but_refuses_nothing(hub: Any, clocks: FakeClocks) -> None:
    early = hub.execute(StartGame(table="pool-01", actor="jana"))
    hub.watchdog.tick()
    assert alerts(hub) == {}  # synchronised: nothing to say
    clocks.synced = False  # e.g. the box restarted after a power cut, no internet
    clocks.tick(60)
    hub.watchdog.tick()
    severity, message, is_open = alerts(hub)["clock_unsynced"]
    assert severity == "critical" and is_open and "Hodiny hubu sa od spustenia nesynchronizovali" in message
    assert "hry a platby idú ďalej" in message
    amount = hub.bill_of(hub.open["pool-01"].state, clocks.now).total_cents
    # the games go on: a new one starts, and every game running meanwhile is marked, once
    late = hub.execute(StartGame(table="pool-02", actor="jana"))
    for _ in range(3):
        clocks.tick(1)
        hub.watchdog.tick()
    assert [k for k, _ in ops(hub, early)] == ["start", "clock"] and [k for k, _ in ops(hub, late)] == ["start", "clock"]
    assert ops(hub, early)[1][1] == {"cause": "unsynced", "jump_s": None}
    assert hub.open["pool-01"].state.clock_unsure and hub.open["pool-02"].state.clock_unsure
    assert hub.bill_of(hub.open["pool-01"].state, clocks.now - timedelta(seconds=3)).total_cents == amount  # a mark bills nothing
    # NTP answers: the alert is settled; games started from now on are not marked
    clocks.synced = True
    clocks.tick(1)
    hub.watchdog.tick()
    assert alerts(hub)["clock_unsynced"][2] is False
    third = hub.execute(StartGame(table="pool-03", actor="jana"))
    hub.watchdog.tick()
    assert [k for k, _ in ops(hub, third)] == ["start"]


def test_a_clock_jump_while_running_is_an_alert_and_marks_the_games_running_then(hub: Any, clocks: FakeClocks) -> None:
    game = hub.execute(StartGame(table="pool-04", actor="jana"))
    hub.watchdog.tick()
    clocks.tick(30)
    clocks.now += timedelta(hours=2, minutes=13)  # NTP steps the wall clock; the monotonic one does not
    hub.watchdog.tick()
    severity, message, _ = alerts(hub)["clock_jump"]
    assert severity == "critical" and "Hodiny hubu skočili o +2 h 13 min" in message
    assert ops(hub, game)[-1] == ("clock", {"cause": "jump", "jump_s": 2 * 3600 + 13 * 60})
    clocks.tick(30)
    hub.watchdog.tick()  # no jump since: nothing more
    assert [k for k, _ in ops(hub, game)].count("clock") == 1


def write_status(path: Path, status: BackupStatus) -> None:
    path.write_text(status.to_json())


def test_a_failed_or_missing_backup_is_an_alert_until_a_good_one(tmp_path: Path, clocks: FakeClocks) -> None:
    status_file = tmp_path / "backup-status.json"
    hub, store = box_hub(tmp_path, clocks, backup_status=status_file)
    try:
        hub.watchdog.tick()
        assert "backup_missing" not in alerts(hub)  # a hub just installed: the first night is still to come
        clocks.tick(27 * 3600)
        hub.watchdog.tick()
        assert "Box nemá žiadnu zálohu" in alerts(hub)["backup_missing"][1]
        write_status(status_file, BackupStatus(at=clocks.now, ok=False, error="database disk image is malformed"))
        hub.watchdog.tick()
        assert "Nočná záloha z 6. 12. 2026 21:00 zlyhala (database disk image is malformed)" in alerts(hub)["backup_failed"][1]
        clocks.tick(3600)
        write_status(status_file, BackupStatus(at=clocks.now, ok=False, copy_error="/media/usb does not exist", last_ok_at=None))
        hub.watchdog.tick()
        assert "je len na boxe: kópia mimo boxu zlyhala (/media/usb does not exist)" in alerts(hub)["backup_failed"][1]
        write_status(status_file, BackupStatus(at=clocks.now, ok=True, file="x", copied_to="/media/usb", last_ok_at=clocks.now))
        hub.watchdog.tick()
        assert {c: a[2] for c, a in alerts(hub).items()} == {"backup_missing": False, "backup_failed": False}
        clocks.tick(27 * 3600)  # and then no backup for a night and a day
        hub.watchdog.tick()
        missing = alerts(hub)["backup_missing"]
        assert missing[2] and "Posledná záloha je z 6. 12. 2026 22:00, pred 27 h" in missing[1]
    finally:
        hub.close()
        store.close()


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    hook = Webhook().start()
    yield hook
    hook.stop()


def test_a_certificate_30_days_from_its_end_is_an_alert_and_a_push_to_the_manager(
    tmp_path: Path, clocks: FakeClocks, webhook: Webhook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Notifier, "poll_s", 0.1)
    certs = tmp_path / "certs"
    done = subprocess.run(
        ["bash", str(REPO / "deploy/mosquitto/make-certs.sh"), "--out", str(certs), "--days", "45", "lavos.local"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    end = certificate_end(certs / "server.crt")
    clocks.now = end - timedelta(days=31)
    hub, store = box_hub(tmp_path, clocks, certificates=(certs / "server.crt", certs / "ca.crt"))
    try:
        hub.execute(
            SaveNotifySettings(settings=NotifySettings((Target(id="boss", url=webhook.url(), kinds=("cert_expiring",)),)), actor="jana")
        )
        hub.start()
        hub.watchdog.tick()
        assert alerts(hub) == {}
        clocks.tick(2 * 86400)  # 29 days left
        hub.watchdog.tick()
        severity, message, _ = alerts(hub)["cert_expiring:server.crt"]
        day = end.astimezone(hub.venue.tz)  # the venue's date (the UTC date differs 23:00-24:00 UTC)
        assert severity == "warning" and f"Certifikát server.crt vyprší {day.day}. {day.month}. {day.year} (o 29 d)" in message
        assert "sudo /opt/lavos/deploy/hub/install.sh" in message
        wait_until(lambda: any("server.crt" in t for t in webhook.texts()), 10, "the push to the manager")
        assert "ca.crt" not in " ".join(a for a in alerts(hub))  # the CA has ten years
    finally:
        hub.close()
        store.close()


def test_staff_read_it_on_their_pages_in_slovak(tmp_path: Path, clocks: FakeClocks) -> None:
    """The backup alert on the monitoring page (and the banner), the clock's mark on the game's bill."""
    hub, store = box_hub(tmp_path, clocks, backup_status=tmp_path / "backup-status.json")
    try:
        hub.execute(CreateStaff(username="eva", password=new_password("a-long-password-1", CHEAP), role="manager", actor="test"))
        game = hub.execute(StartGame(table="pool-05", actor="eva"))
        hub.watchdog.tick()
        clocks.synced = False
        clocks.tick(27 * 3600)
        hub.watchdog.tick()
        browser = Browser(bound_app(hub))
        browser.login("eva", "a-long-password-1")
        monitoring = browser.get("/monitoring").text
        assert "Box nemá žiadnu zálohu" in monitoring and "Hodiny hubu sa od spustenia nesynchronizovali" in monitoring
        bill = browser.get(f"/sessions/{game}/bill").text
        assert 'id="bill-clock-unsure"' in bill and "Počas tejto hry hodiny hubu neboli spoľahlivé" in bill
    finally:
        hub.close()
        store.close()
