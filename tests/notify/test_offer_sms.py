"""Issue 20 item 5: a table offered to a waiting party is pushed to the staff's devices (Slovak, no
phone number) and, with the guest's consent, sent once to the guest's own number through a
guest-SMS target (`{phone}` in its URL); the number is in no staff message, no spool history and
no log line."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from broker.adapters.notify import Notifier
from broker.bookings.waiting_list import JoinWaitingList
from broker.core.errors import ServiceError
from broker.floor.games import StartGame
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from tests.notify.receivers import Webhook
from tests.support.till_days import FakeClock, day_hub, local
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def quick_sender(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Notifier, "poll_s", 0.1)


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    hook = Webhook().start()
    yield hook
    hook.stop()


def test_an_offer_reaches_staff_and_by_sms_only_the_guest_who_agreed(
    tmp_path: Path, webhook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    base = f"json://127.0.0.1:{webhook.port}"
    with day_hub(tmp_path / "hub.db", FakeClock(local(2026, 12, 4, 18))) as (hub, _):
        targets = (
            Target(id="bar", url=f"{base}/bar", kinds=("waiting_list",)),
            Target(id="sms", url=f"{base}/sms/{{phone}}"),
            Target(id="alerts", url=f"{base}/alerts", kinds=("node_offline",)),  # wants no offers
        )
        hub.execute(SaveNotifySettings(settings=NotifySettings(targets), actor="boss"))
        for n in range(2, 11):  # every pool table played but Pool 1
            hub.execute(StartGame(table=f"pool-{n:02d}", actor="jana"))
        hub.execute(JoinWaitingList(name="Kováč", party_size=2, kind="pool", phone="0903 123 456", sms_ok=True, actor="jana"))
        hub.execute(JoinWaitingList(name="Bez súhlasu", party_size=3, kind="carom", phone="0911 222 333", actor="jana"))
        hub.watchdog.tick()  # Pool 1 to Kováč, the carom to the other party
        wait_until(lambda: len(webhook.received) >= 3, what="the staff's two offers and one SMS")
        got = sorted(zip(webhook.paths, webhook.texts(), strict=True))
        assert got == [
            ("/bar", "Karambol voľný → Bez súhlasu, 3 (do 18:10)"),
            ("/bar", "Pool 1 voľný → Kováč, 2 (do 18:10)"),
            ("/sms/+421903123456", "ŠBK Lavos: stôl Pool 1 je pre vás voľný. Podržíme ho do 18:10."),
        ]
        assert not any(p.startswith("/alerts") for p in webhook.paths)
        said = " ".join(
            webhook.texts()
        )  # the staff's and the guest's texts: the number only in the SMS's address + " ".join(m.body + m.title + m.target + (m.error or "") for m in hub.notifications.history())
        said += " ".join(r.getMessage() for r in caplog.records)
        assert "123456" not in said and "222333" not in said and "222 333" not in said


def test_a_guest_sms_target_takes_the_number_in_its_path_not_its_host(tmp_path: Path) -> None:
    with (
        day_hub(tmp_path / "hub.db", FakeClock(local(2026, 12, 4, 18))) as (hub, _),
        pytest.raises(ServiceError, match="path or query, not in its host"),
    ):
        hub.execute(SaveNotifySettings(settings=NotifySettings((Target(id="x", url="json://{phone}.example.org/x"),)), actor="boss"))
