"""The daily summary: when the business day is closed, every target that wants info gets the
day's takings by payment method, the games, the alerts and the nodes that went offline. A day
nobody closed is summed up at the day cut, or when the hub is back if it was down then."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from broker.adapters.notify import Notifier
from broker.domain.floor import alert_kinds
from broker.hall.facade import HubFacade
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from broker.till.closeout import CloseDay, OpenDay
from tests.dashboard.conftest import sqlite_only
from tests.notify.receivers import Webhook
from tests.support.hub import on_writer, started_hub
from tests.support.till_days import FakeClock, add_item, day_hub, local, pay, settle, walk_in
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.hub import Hub


@pytest.fixture(autouse=True)
def quick_sender(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Notifier, "poll_s", 0.1)


@sqlite_only
def test_closing_the_day_sends_its_summary(db_url: str) -> None:
    clock = FakeClock(local(2026, 12, 1, 15, 30))
    hook = Webhook().start()
    try:
        with day_hub(db_url, clock) as (hub, facade):
            hub.execute(
                SaveNotifySettings(
                    settings=NotifySettings((Target("t0", hook.url()), Target("t1", hook.url(), min_severity="warning"))), actor="boss"
                )
            )
            facade.execute(OpenDay(float_cents=5000, actor="jana"))
            tab = walk_in(hub)
            add_item(hub, tab, "Pivo 0,5 l", 250, 2)
            pay(hub, tab, 300)
            pay(hub, tab, 200, method="card")
            settle(hub, tab)
            on_writer(hub, lambda db: hub.alerts.raise_alert(db, alert_kinds.node_offline("pool-06")))
            wait_until(lambda: len(hook.received) == 2, what="the alert, to both targets")
            clock.set(local(2026, 12, 1, 23, 50))
            facade.execute(CloseDay(day=local(2026, 12, 1, 12).date(), counted_cents=5300, actor="jana"))
            wait_until(lambda: len(hook.received) == 3, what="the summary, to the target that wants info")
            text = hook.texts()[2]
            assert text.startswith("Deň 01.12.2026 uzavretý: tržba 5,00\u00a0€")
            assert "3,00\u00a0€" in text and "2,00\u00a0€" in text
            assert "upozornení: 1" in text and "Výpadky uzlov: Pool 6" in text
    finally:
        hook.stop()


@sqlite_only
def test_a_day_nobody_closed_is_summed_up_at_the_day_cut(db_url: str) -> None:
    clock = FakeClock(local(2026, 12, 1, 15, 30))
    hook = Webhook().start()
    try:
        with day_hub(db_url, clock) as (hub, facade):
            hub.execute(SaveNotifySettings(settings=NotifySettings((Target("t0", hook.url()),)), actor="boss"))
            facade.execute(OpenDay(float_cents=5000, actor="jana"))
            tab = walk_in(hub)
            add_item(hub, tab, "Pivo 0,5 l", 250, 2)
            pay(hub, tab, 500)
            clock.set(local(2026, 12, 2, 14, 0))  # the next afternoon: nobody closed the 1st
            wait_until(lambda: len(hook.received) == 1, what="the summary of the day nobody closed")
            assert hook.texts()[0].startswith("Deň 01.12.2026 NEUZAVRETÝ: tržba 5,00\u00a0€")
            facade.execute(CloseDay(day=local(2026, 12, 1, 12).date(), counted_cents=5500, actor="jana"))  # closed late: no second summary
            facade.reads.till.day_overview()
            assert len(hook.received) == 1
    finally:
        hook.stop()


@contextlib.contextmanager
def hub_with_spool(db_url: Any, clock: Any, data_dir: Any, hook: Any = None) -> Iterator[tuple[Hub, HubFacade]]:
    """A hub whose notification spool is on disk under `data_dir`, so it outlives the hub."""
    with started_hub(db_url, clock=clock, data_dir=data_dir, watchdog=False) as hub:
        if hook is not None:
            hub.execute(SaveNotifySettings(settings=NotifySettings((Target("t0", hook.url()),)), actor="boss"))
        yield hub, HubFacade(hub)


@sqlite_only
def test_a_hub_down_over_the_day_cut_sends_the_summary_when_it_is_back_and_only_once(db_url: str, tmp_path: Path) -> None:
    clock = FakeClock(local(2026, 12, 1, 15, 30))
    hook = Webhook().start()
    try:
        with hub_with_spool(db_url, clock, tmp_path, hook) as (hub, facade):
            facade.execute(OpenDay(float_cents=5000, actor="jana"))
            tab = walk_in(hub)
            add_item(hub, tab, "Pivo 0,5 l", 250, 2)
            pay(hub, tab, 500)
        # Switched off at night; the cut (06:00) passes; started again the next afternoon.
        clock.set(local(2026, 12, 2, 14, 0))
        for _restart in range(2):  # and once more: the summary went already
            with hub_with_spool(db_url, clock, tmp_path):
                wait_until(lambda: len(hook.received) >= 1, what="the summary of the day nobody closed")
                time.sleep(0.5)  # a few of the sender's rounds (0.1 s each): nothing more comes
                assert len(hook.received) == 1
        assert hook.texts()[0].startswith("Deň 01.12.2026 NEUZAVRETÝ: tržba 5,00\u00a0€")
    finally:
        hook.stop()


@sqlite_only
def test_a_hub_started_on_a_fresh_day_after_a_closed_one_sends_nothing(db_url: str, tmp_path: Path) -> None:
    clock = FakeClock(local(2026, 12, 1, 15, 30))
    hook = Webhook().start()
    try:
        with hub_with_spool(db_url, clock, tmp_path, hook) as (_hub, facade):
            facade.execute(OpenDay(float_cents=5000, actor="jana"))
            clock.set(local(2026, 12, 1, 23, 50))
            facade.execute(CloseDay(day=local(2026, 12, 1, 12).date(), counted_cents=5000, actor="jana"))
            wait_until(lambda: len(hook.received) == 1, what="the closed day's summary")
        clock.set(local(2026, 12, 2, 14, 0))
        with hub_with_spool(db_url, clock, tmp_path):
            time.sleep(0.5)
            assert len(hook.received) == 1  # the closed day was summed up once, at its close
    finally:
        hook.stop()
