"""The demo runs the till: games' tabs paid (cash with change, card, one paid later), a walk-in at
the bar, and at closing time the day closed with a Z report that adds up to its payments.

In-process, briefly (a dozen seconds at the top speed), reading the hall through the facade
before the demo tears it down."""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass

import pytest
from rich.console import Console

from broker.domain.till.zreport import ZReport
from broker.hall.facade import HubFacade
from broker.till.payment_reads import PaymentView
from broker.till.tab_views import UnpaidTab
from sim.demo import run_demo
from sim.demo_defaults import MAX_SPEED
from sim.till import tendered_for

pytestmark = pytest.mark.slow


@dataclass
class Evening:
    """What the demo's evening left, read by the hub as it ended."""

    report: ZReport
    tabs: list[UnpaidTab]
    payments: list[PaymentView]
    unpaid: list[UnpaidTab]


def test_cash_is_rounded_up_to_the_next_note() -> None:
    assert tendered_for(1240) == 1500
    assert tendered_for(1500) == 1500
    assert tendered_for(2001) == 3000
    assert tendered_for(1) == 500


def test_a_short_demo_evening_pays_every_game_and_closes_the_day() -> None:
    out = io.StringIO()
    seen: list[Evening] = []

    def after(hub: HubFacade) -> None:
        days = hub.reads.till.business_days()
        assert len(days) == 1, days
        day = days[0].day
        report = hub.reads.till.day_report(day)
        tabs = hub.reads.till.day_tabs(day)
        payments: list[PaymentView] = []
        for t in tabs:
            view = hub.reads.till.tab_payments(t.id)
            assert view is not None, t
            payments += view.payments
        seen.append(Evening(report, tabs, payments, hub.reads.till.unpaid_tabs()))

    run_demo(
        speed=MAX_SPEED,
        seconds=12,
        http="127.0.0.1:0",
        stop=threading.Event(),
        console=Console(file=out, width=300, highlight=False),
        after_evening=after,
    )
    text = out.getvalue()
    assert "Traceback" not in text, text
    till_refusals = ("could not open the day", "could not add", "could not serve", "could not take the payment", "could not close")
    assert not any(r in text for r in till_refusals), text
    assert seen, f"the evening did not reach its close-out:\n{text}"
    (evening,) = seen
    report, tabs, payments = evening.report, evening.tabs, evening.payments
    games = [t for t in tabs if t.game_id is not None]
    assert len(games) >= 3 and any(t.game_id is None for t in tabs), tabs
    assert all(t.status == "paid" and t.owed_cents == 0 for t in tabs), tabs
    assert evening.unpaid == []
    methods = {p.method for p in payments}
    assert methods == {"cash", "card"}, payments
    assert any(p.change_cents > 0 for p in payments), payments
    assert report.closed and report.total_cents == sum(p.amount_cents for p in payments)
    assert report.payments_count == len(payments)
    assert report.variance_cents == -50
    assert "change), receipt no." in text and "paid later" in text and "Z report: cash" in text, text
    assert f"/day/{report.day.isoformat()}/report" in text
