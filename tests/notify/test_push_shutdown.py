"""Issue 29, item 32: a hub shut down with notifications in flight never writes to a closed spool.

Once, at a shutdown under load: `ERROR lavos.notify … Cannot operate on a closed database`. The
sender's thread was still in a send (a slow receiver: Apprise's timeouts are per socket read) when
the hub, after waiting 15 s for it, closed the spool under it; and the notifications closed before
the hub's writer stopped, so an alert raised by the writer's last item was dropped (or spooled into
a closed file). Now the writer stops first, and the spool is closed by whoever is last: the hub,
or the sender's thread once its send returns."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from broker.adapters.notify import Notifier
from broker.adapters.notify_spool import SPOOL_FILE
from broker.compose import open_store
from broker.domain.floor import alert_kinds
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from tests.notify.receivers import Webhook
from tests.support.hub import new_hub, on_writer
from tests.support.sqlite_template import migrated_sqlite
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.hub import Hub


@pytest.fixture(autouse=True)
def quick_sender(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Notifier, "poll_s", 0.1)
    monkeypatch.setattr(Notifier, "backoff_s", (0.2,))
    # The hub waits this long for a send in flight (15 s as shipped); raising=False: the same test
    # runs against a Notifier that has no such setting.
    monkeypatch.setattr(Notifier, "close_wait_s", 0.3, raising=False)


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[tuple[Hub, Callable[..., Any]]]:
    store = open_store(migrated_sqlite(tmp_path / "hub.db"))
    hub = new_hub(store, data_dir=tmp_path)
    hub.start()
    closed = False

    def close() -> None:
        nonlocal closed
        if not closed:
            closed = True
            hub.close()

    yield hub, close
    close()
    store.close()


def _configure(hub: Any, url: str) -> None:
    hub.execute(SaveNotifySettings(settings=NotifySettings((Target(id="t0", url=url),), rate_max=10), actor="boss"))


def _spooled(tmp_path: Any) -> dict[str, str]:
    """The spool file as the next start will find it: key -> state."""
    with sqlite3.connect(tmp_path / SPOOL_FILE) as db:
        return dict(db.execute("SELECT key, state FROM messages").fetchall())


def _raise(hub: Any, spec: Any) -> None:
    on_writer(hub, lambda db: hub.alerts.raise_alert(db, spec))


def _sender_running() -> bool:
    return any(t.name == "notify-sender" and t.is_alive() for t in threading.enumerate())


def _errors(caplog: Any) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_send_in_flight_at_shutdown_is_marked_and_the_spool_closed_after_it(
    hall: tuple[Hub, Callable[..., Any]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    hub, close = hall
    hold = threading.Event()
    hook = Webhook(hold=hold).start()
    try:
        _configure(hub, f"{hook.url()}?rto=60")  # Apprise waits as long as the receiver takes
        for table in ("pool-01", "pool-02", "pool-03"):
            _raise(hub, alert_kinds.node_offline(table))
        wait_until(lambda: hook.arrived == 1, what="the first message in flight")
        close()  # does not wait for the receiver: the send in flight is the sender's to finish
        assert _sender_running(), "the receiver has not answered: the send should still be in flight"
        hold.set()
        wait_until(lambda: not _sender_running(), what="the sender's thread done with its send")
    finally:
        hook.stop()
    assert _errors(caplog) == []
    assert len(hook.received) == 1
    # The message that went out is marked sent (never sent again); the two waiting stay for the next start.
    assert sorted(_spooled(tmp_path).values()) == ["pending", "pending", "sent"]


def test_an_alert_raised_by_the_writers_last_item_is_spooled(
    hall: tuple[Hub, Callable[..., Any]], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hub, close = hall
    hook = Webhook().start()
    try:
        _configure(hub, hook.url())
        started, release = threading.Event(), threading.Event()

        def last_item(db: Any) -> None:  # e.g. the last batch before the link closed: a node went offline
            started.set()
            release.wait(30)
            hub.alerts.raise_alert(db, alert_kinds.node_offline("pool-06"))

        item = threading.Thread(target=on_writer, args=(hub, last_item))
        item.start()
        assert started.wait(10)
        closer = threading.Thread(target=close)
        closer.start()
        wait_until(lambda: hub._writer._stop.is_set() or hub.notifications.spool is None, what="the shutdown under way")
        release.set()
        item.join(30)
        closer.join(30)
        assert not closer.is_alive()
    finally:
        hook.stop()
    assert _errors(caplog) == []
    assert [k for k in _spooled(tmp_path) if k.startswith("open:t0:")], "the alert of the writer's last item was never spooled"
