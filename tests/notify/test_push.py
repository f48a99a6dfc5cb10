"""Must show 1 of issue 13: alerts reach real receivers on loopback (SMTP via aiosmtpd, a JSON
webhook) through Apprise: once per target, in Slovak with the table's name, a follow-up on
resolution, a flapping node rate-limited, queued while the receiver is down and sent late, and
never a secret in the log."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest

from broker.adapters.notify import Notifier, mask_url
from broker.compose import open_store
from broker.domain.floor import alert_kinds
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from tests.notify.receivers import MailBox, Webhook
from tests.support.hub import new_hub, on_writer, started_hub
from tests.support.sqlite_template import migrated_sqlite
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.hub import Hub


@pytest.fixture(autouse=True)
def quick_sender(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Notifier, "poll_s", 0.1)
    monkeypatch.setattr(Notifier, "backoff_s", (0.2,))


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    with started_hub(tmp_path / "hub.db", data_dir=tmp_path) as h:
        yield h


@pytest.fixture
def mailbox() -> Iterator[MailBox]:
    box = MailBox().start()
    yield box
    box.stop()


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    hook = Webhook().start()
    yield hook
    hook.stop()


def configure(hub: Any, *urls: str, rate_max: int = 3, **target: Any) -> None:
    hub.execute(
        SaveNotifySettings(
            settings=NotifySettings(tuple(Target(id=f"t{i}", url=u, **target) for i, u in enumerate(urls)), rate_max=rate_max), actor="boss"
        )
    )


def open_alert(hub: Any, spec: Any) -> None:
    on_writer(hub, lambda db: hub.alerts.raise_alert(db, spec))


def settle(hub: Any, cause: str) -> None:
    on_writer(hub, lambda db: hub.alerts.settle(db, cause, hub.clock()))


def test_one_message_per_target_in_slovak_with_the_table_name_then_the_follow_up(
    hub: Hub, mailbox: MailBox, webhook: Webhook, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    configure(hub, mailbox.url(), webhook.url())
    open_alert(hub, alert_kinds.node_offline("pool-06"))
    open_alert(hub, alert_kinds.node_offline("pool-06"))  # the same open alert, touched: no second message
    wait_until(lambda: len(mailbox.messages) == 1 and len(webhook.received) == 1, what="one message each")
    assert "Pool 6" in webhook.texts()[0] and "Pool 6" in mailbox.messages[0][1]
    sk_text = alert_kinds.node_offline("pool-06").text
    assert sk_text in webhook.texts()[0] and sk_text in mailbox.messages[0][1]

    settle(hub, alert_kinds.node_offline_key("pool-06"))
    wait_until(lambda: len(mailbox.messages) == 2 and len(webhook.received) == 2, what="the follow-up")
    assert webhook.texts()[1].startswith("Vyriešené: Pool 6")
    assert mailbox.messages[1][1].strip().startswith("Vyriešené: Pool 6")
    wait_until(lambda: [m.state for m in hub.notifications.history()] == ["sent"] * 4, what="all marked sent")
    for secret_part in (f":{mailbox.port}?", "from=hala", "/hook"):
        assert secret_part not in caplog.text


def test_english_target_gets_the_english_text(hub: Hub, webhook: Webhook) -> None:
    configure(hub, webhook.url(), lang="en")
    open_alert(hub, alert_kinds.node_offline("pool-06"))
    wait_until(lambda: len(webhook.received) == 1, what="a message")
    assert webhook.texts()[0].startswith("Pool 6: ") and alert_kinds.node_offline("pool-06").text_en in webhook.texts()[0]


def test_twenty_flaps_send_at_most_the_limit_and_one_summary(hub: Hub, webhook: Webhook) -> None:
    configure(hub, webhook.url(), rate_max=3)
    cause = alert_kinds.node_offline_key("pool-02")
    for _ in range(20):
        open_alert(hub, alert_kinds.node_offline("pool-02"))
        settle(hub, cause)
    wait_until(lambda: sum(m.state == "sent" for m in hub.notifications.history()) == 3, what="the first three")
    pending, _ = hub.notifications.counts()
    assert pending == 1  # the summary, held until the window ends
    assert len(webhook.received) == 3
    summary = next(m for m in hub.notifications.history() if m.key.startswith("more:"))
    # Sent: opened, resolved, opened; then the third one's resolution and 18 openings held back
    # (resolutions of openings never sent are not sent either).
    assert summary.body == "Pool 2: " + alert_kinds.node_offline("pool-02").text + " — a ešte 19-krát"


def test_a_hub_restarted_in_a_flapping_storm_goes_on_counting(tmp_path: Path, webhook: Webhook) -> None:
    store = open_store(migrated_sqlite(tmp_path / "hub.db"))
    cause = alert_kinds.node_offline_key("pool-02")
    try:
        for flaps in (20, 10):  # ten more after a restart: no fresh three, the same summary counts on
            hub = new_hub(store, data_dir=tmp_path)
            hub.start()
            try:
                if flaps == 20:
                    configure(hub, webhook.url(), rate_max=3)
                for _ in range(flaps):
                    open_alert(hub, alert_kinds.node_offline("pool-02"))
                    settle(hub, cause)
                wait_until(lambda: len(webhook.received) >= 3, what="the first three")
                time.sleep(0.5)  # a few of the sender's rounds (0.1 s): nothing more goes
                assert len(webhook.received) == 3
                summaries = [m for m in hub.notifications.history() if m.key.startswith("more:")]
            finally:
                hub.close()
        assert [(m.state, m.body.rsplit(" — ", 1)[1]) for m in summaries] == [("pending", "a ešte 29-krát")]
    finally:
        store.close()


def test_quiet_hours_hold_a_warning_and_drop_info(hub: Hub, webhook: Webhook) -> None:
    local = hub.clock().astimezone(hub.venue.tz)
    start, end = (local - timedelta(hours=1)).strftime("%H:%M"), (local + timedelta(hours=1)).strftime("%H:%M")
    configure(hub, webhook.url(), quiet_from=start, quiet_to=end)
    open_alert(hub, alert_kinds.node_offline("pool-03"))
    (held,) = hub.notifications.history()
    assert held.state == "pending" and held.not_before is not None
    assert not webhook.received


def test_receiver_down_then_back_sends_each_once_marked_late(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Notifier, "late_after", timedelta(seconds=0))
    hook = Webhook().start()
    port = hook.port
    hook.stop()  # down
    configure(hub, f"json://127.0.0.1:{port}/hook")
    for t in ("pool-01", "pool-02"):
        open_alert(hub, alert_kinds.node_offline(t))
    wait_until(lambda: hub.notifications.history()[-1].attempts >= 2, what="failed attempts")  # the oldest first, in order
    failed = hub.notifications.history()[-1]
    assert failed.state == "pending" and failed.last_error and "/hook" not in failed.last_error
    hook.start(port)
    try:
        wait_until(lambda: len(hook.received) == 2, what="both after the receiver is back")
        assert all("(oneskorené, " in t for t in hook.texts())
        wait_until(lambda: [m.state for m in hub.notifications.history()] == ["sent", "sent"], what="marked sent")
    finally:
        hook.stop()


def test_masked_url_shows_only_scheme_and_host() -> None:
    assert mask_url("mailto://user:pass@127.0.0.1:2525?to=x@y") == "mailto://…@127.0.0.1/…"
    assert mask_url("ntfys://ntfy.sh/secret-topic") == "ntfys://ntfy.sh/…"
    assert mask_url("tgram://123456:ABCsecret/456") == "tgram://…/…"


@pytest.mark.slow
def test_receiver_down_past_the_late_threshold(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    """The only long test: a real outage past the "late" threshold, on real retry waits. It ran 2
    minutes against the shipped 60 s threshold and waits (2, 5, 15 s), then 15 s past 10 s on waits
    half the shipped ones; all are settings, so here the waits are a quarter of the shipped ones
    (0.5, 1.25, 3.75 s), the threshold 5 s and the outage 7.5 s: the same three failed retries, one
    more during the outage, the same late mark, a sixteenth of the time."""
    monkeypatch.setattr(Notifier, "backoff_s", (0.5, 1.25, 3.75))
    monkeypatch.setattr(Notifier, "late_after", timedelta(seconds=5))
    hook = Webhook().start()
    port = hook.port
    hook.stop()
    configure(hub, f"json://127.0.0.1:{port}/hook")
    down_at = time.monotonic()
    open_alert(hub, alert_kinds.node_offline("pool-07"))
    wait_until(lambda: hub.notifications.history()[0].attempts >= 3, timeout=30, what="three failed attempts (at 0, 0.5 and 1.75 s)")
    time.sleep(
        max(0.0, down_at + 7.5 - time.monotonic())
    )  # the rest of the outage (a fourth attempt at 5.5 s): nothing to wait for but time
    assert not hook.received and hub.notifications.history()[0].attempts >= 3
    hook.start(port)
    try:
        wait_until(lambda: hub.notifications.history()[0].state == "sent", timeout=60, what="sent after the outage")
        (text,) = hook.texts()
        assert text.startswith("Pool 7: ") and "(oneskorené, " in text
    finally:
        hook.stop()
