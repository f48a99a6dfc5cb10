"""The members' money through the hub's writer, on SQLite and PostgreSQL: credit sold, used across two
VAT rates, refunded and reversed; a package sold and its minute-by-minute cover; the Z report's
revenue and VAT following zákon o DPH § 9a (broker.domain.vouchers); refusals that change nothing."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from broker.domain.venue import load_venue
from broker.floor.games import StartGame, StopGame
from broker.hall.facade import HubFacade, NotFound, ServiceError
from broker.hall.hub import Hub
from broker.people.members import AddMember
from broker.storage.models import Payment, Tab, TabItem, WalletEntry
from broker.till.payments import PayTab, ReversePayment
from broker.wallet.reads import WalletView
from broker.wallet.wallet import (
    PayFromCredit,
    PayFromPackage,
    RefundCredit,
    ReverseWalletEntry,
    SellPackage,
    TopUpCredit,
    UseLesson,
)
from tests.dashboard.conftest import FakeClock
from tests.support.hub import VENUE, on_writer, started_hub
from tests.support.matching import some

STAFF, MANAGER = "jana", "boss"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def hall(db_url: str, clock: FakeClock) -> Iterator[HubFacade]:
    venue = load_venue(VENUE)
    venue = venue.model_copy(update={"wallet": venue.wallet.model_copy(update={"credit_valid_days": 30})})
    with started_hub(db_url, clock=clock, watchdog=False, venue=venue) as hub:
        yield HubFacade(hub)


_NAMES = itertools.count(1)


def _member(hall: HubFacade) -> int:
    return hall.execute(AddMember(name=f"Novák Peter {next(_NAMES)}", actor=MANAGER)).id


def _game_tab(hall: HubFacade, clock: FakeClock, minutes: int = 90, table: str = "pool-01") -> int:
    game = hall.execute(StartGame(table=table, actor=STAFF))
    clock.advance(minutes=minutes)
    hall.execute(StopGame(game=game, actor=STAFF))
    with hall._hub.store.reader() as db:
        tab = db.scalar(select(Tab.id).where(Tab.session_id == game))
    assert tab is not None
    return tab


def _beer(hall: HubFacade, tab: int, cents: int = 215) -> None:
    on_writer(
        hall._hub,
        lambda db: db.add(
            TabItem(
                tab_id=tab, name="Pivo", name_en="Beer", category="drinks", unit_cents=cents, vat_percent=19, quantity=1, added_by=STAFF
            )
        ),
    )


def _wallet(hall: HubFacade, member: int) -> WalletView:
    return some(hall.reads.wallet.member(member))


def _z(hall: HubFacade) -> Any:
    report = hall._hub.till.days.report(hall.reads.today())
    assert report is not None
    return report


def _rows(hub: Hub) -> tuple[int, int, int]:
    with hub.store.reader() as db:
        return (
            db.scalar(select(func.count()).select_from(WalletEntry)) or 0,
            db.scalar(select(func.count()).select_from(Payment)) or 0,
            db.scalar(select(func.count()).select_from(Tab)) or 0,
        )


def _credit_sold_is_no_revenue_and_its_use_across_two_rates_is(hall: HubFacade, clock: FakeClock) -> None:
    member = _member(hall)
    done = hall.execute(TopUpCredit(member_id=member, amount_cents=2000, method="cash", tendered_cents=2000, actor=STAFF))
    wallet = _wallet(hall, member)
    assert wallet is not None and wallet.balance_cents == 2000
    assert wallet.lots[0].expires_on == hall.reads.today() + timedelta(days=30)  # the venue's validity
    z = _z(hall)
    assert (z.total_cents, z.voucher_sales_cents, z.cash_cents, z.by_vat) == (0, 2000, 2000, ())
    assert done.payment_id is not None and some(hall.reads.till.payment(done.payment_id)).fiscal_state == "none"

    tab = _game_tab(hall, clock)  # 9,00 € of table time at 23 %
    _beer(hall, tab)  # 2,15 € at 19 %
    used = hall.execute(PayFromCredit(tab=tab, member_id=member, amount_cents=1115, expect_owed_cents=1115, actor=STAFF))
    assert _wallet(hall, member).balance_cents == 885
    view = hall.reads.till.tab_payments(tab)
    assert view is not None and (view.status, view.owed_cents) == ("paid", 0)
    assert some(hall.reads.till.receipt_of(some(used.payment_id))).method_name == "Z kreditu"
    z = _z(hall)
    # Revenue is the credit used, with VAT per the goods; the drawer holds the 20 € sold, nothing more.
    assert (z.total_cents, z.credit_redeemed_cents, z.voucher_sales_cents) == (1115, 1115, 2000)
    assert {v.vat_percent: v.gross_cents for v in z.by_vat} == {23: 900, 19: 215}
    assert sum(v.gross_cents for v in z.by_vat) == z.total_cents == sum(c.gross_cents for c in z.by_category)
    assert z.expected_cash_cents == z.float_cents + 2000
    assert {m.method: m.net_cents for m in z.by_method}["credit"] == 1115


def _the_last_euro_is_used_once_and_a_refused_use_changes_nothing(hall: HubFacade, clock: FakeClock) -> None:
    member = _member(hall)
    hall.execute(TopUpCredit(member_id=member, amount_cents=100, method="card", actor=STAFF))
    tab = _game_tab(hall, clock, minutes=10)  # 1,00 €
    tab2 = _game_tab(hall, clock, minutes=10, table="pool-02")
    hall.execute(PayFromCredit(tab=tab, member_id=member, amount_cents=100, actor=STAFF))
    before = _rows(hall._hub)
    with pytest.raises(ServiceError, match="has 0,00\u00a0€ of credit, less than 1,00\u00a0€"):
        hall.execute(PayFromCredit(tab=tab2, member_id=member, amount_cents=100, actor=STAFF))
    for bad in (0, -100, True, "100"):
        with pytest.raises(ServiceError):
            hall.execute(PayFromCredit(tab=tab2, member_id=member, amount_cents=bad, actor=STAFF))
    with pytest.raises(NotFound):
        hall.execute(PayFromCredit(tab=tab2, member_id=9999, amount_cents=1, actor=STAFF))
    with pytest.raises(ServiceError):  # not the pay page's method: only the wallet takes credit
        hall.execute(PayTab(tab=tab2, method="credit", amount_cents=100, actor=STAFF))
    assert _rows(hall._hub) == before and _wallet(hall, member).balance_cents == 0


def _a_package_is_revenue_when_sold_and_covers_table_time_minute_by_minute(hall: HubFacade, clock: FakeClock) -> None:
    member = _member(hall)
    sold = hall.execute(SellPackage(member_id=member, kind="hours", quantity=1, price_cents=500, method="card", actor=STAFF))
    assert sold.package_id is not None
    tab = _game_tab(hall, clock, minutes=90)  # 90 min at 6 €/h: 9,00 €
    _beer(hall, tab)
    used = hall.execute(PayFromPackage(tab=tab, package_id=sold.package_id, actor=STAFF))
    # 60 minutes at the package's 5 €/h: 5,00 €; the other 30 min (3,00 €) and the beer stay on the bill.
    view = hall.reads.till.tab_payments(tab)
    assert view is not None and view.owed_cents == 900 + 215 - 500
    package = _wallet(hall, member).packages[0]
    assert (package.left, package.number) == (0, f"B-{sold.package_id}")
    with pytest.raises(ServiceError, match="used up"):
        hall.execute(PayFromPackage(tab=tab, package_id=sold.package_id, actor=STAFF))
    hall.execute(PayTab(tab=tab, method="card", amount_cents=615, actor=STAFF))
    z = _z(hall)
    # The package's 5,00 € is revenue (at 23 %) the day it is sold; the table time it covered is not again.
    assert (z.total_cents, z.package_redeemed_cents) == (500 + 615, 500)
    assert {v.vat_percent: v.gross_cents for v in z.by_vat} == {23: 500 + 400, 19: 215}
    assert sum(v.gross_cents for v in z.by_vat) == z.total_cents
    with hall._hub.store.reader() as db:
        p = db.get(Payment, used.payment_id)
        assert p is not None and (p.method, p.voucher, p.amount_cents) == ("package", f"B-{sold.package_id}", 500)


def _a_running_game_and_a_lesson_package_pay_no_table_time(hall: HubFacade, clock: FakeClock) -> None:
    member = _member(hall)
    lessons = hall.execute(SellPackage(member_id=member, kind="lessons", quantity=2, price_cents=4000, method="cash", actor=STAFF))
    hours = hall.execute(SellPackage(member_id=member, kind="hours", quantity=10, price_cents=5000, method="cash", actor=STAFF))
    game = hall.execute(StartGame(table="pool-03", actor=STAFF))
    clock.advance(minutes=20)
    with hall._hub.store.reader() as db:
        tab = db.scalar(select(Tab.id).where(Tab.session_id == game))
    assert tab is not None and lessons.package_id and hours.package_id
    before = _rows(hall._hub)
    with pytest.raises(ServiceError, match="Stop the game first"):
        hall.execute(PayFromPackage(tab=tab, package_id=hours.package_id, actor=STAFF))
    with pytest.raises(ServiceError, match="of lessons"):
        hall.execute(PayFromPackage(tab=tab, package_id=lessons.package_id, actor=STAFF))
    assert _rows(hall._hub) == before
    hall.execute(UseLesson(package_id=lessons.package_id, actor=STAFF))
    hall.execute(UseLesson(package_id=lessons.package_id, actor=STAFF))
    with pytest.raises(ServiceError, match="used up"):
        hall.execute(UseLesson(package_id=lessons.package_id, actor=STAFF))


def _refund_and_reversals_keep_the_balance_and_the_drawer_right(hall: HubFacade, clock: FakeClock) -> None:
    member = _member(hall)
    top = hall.execute(TopUpCredit(member_id=member, amount_cents=3000, method="cash", actor=STAFF))
    tab = _game_tab(hall, clock, minutes=60)  # 6,00 €
    used = hall.execute(PayFromCredit(tab=tab, member_id=member, amount_cents=600, actor=STAFF))
    with pytest.raises(ServiceError, match="reverse it on the member's page"):
        hall.execute(ReversePayment(payment=some(used.payment_id), reason="omyl", actor=MANAGER))
    with pytest.raises(ServiceError, match="Say why"):
        hall.execute(ReverseWalletEntry(entry=used.entry_id, reason=" ", actor=MANAGER))
    hall.execute(ReverseWalletEntry(entry=used.entry_id, reason="zlý člen", actor=MANAGER))
    assert _wallet(hall, member).balance_cents == 3000
    with pytest.raises(ServiceError, match="reversed already"):
        hall.execute(ReverseWalletEntry(entry=used.entry_id, reason="zlý člen", actor=MANAGER))
    before = _rows(hall._hub)
    with pytest.raises(ServiceError, match="less than 50,00"):
        hall.execute(RefundCredit(member_id=member, amount_cents=5000, method="cash", reason="odchádza", actor=MANAGER))
    assert _rows(hall._hub) == before
    hall.execute(RefundCredit(member_id=member, amount_cents=1000, method="cash", reason="odchádza", actor=MANAGER))
    assert _wallet(hall, member).balance_cents == 2000
    with pytest.raises(ServiceError, match="only 20,00\u00a0€"):
        hall.execute(ReverseWalletEntry(entry=top.entry_id, reason="omyl", actor=MANAGER))
    z = _z(hall)
    assert (z.voucher_sales_cents, z.total_cents, z.cash_cents) == (2000, 0, 2000)
    # The credit's own tabs (sold, refunded) are settled; the game's tab, its payment given back, owes again.
    assert [(t.tab_id, t.owed_cents) for t in z.open_tabs] == [(tab, 600)]
    history = _wallet(hall, member).history
    assert [h.kind for h in history] == ["refund", "reversal", "use", "topup"]
    assert history[0].reason == "odchádza" and not history[0].reversible


def _credit_lapses_once_after_its_last_day(hall: HubFacade, clock: FakeClock) -> None:
    member = _member(hall)
    hall.execute(TopUpCredit(member_id=member, amount_cents=1500, method="card", actor=STAFF))
    wallet = hall._hub.wallet
    hall._hub.run_on_writer(lambda: wallet.lapse(clock()))
    assert _wallet(hall, member).balance_cents == 1500
    clock.advance(days=32)
    hall._hub.run_on_writer(lambda: wallet.lapse(clock()))
    hall._hub.run_on_writer(lambda: wallet.lapse(clock()))  # the second round of the day: nothing more
    w = _wallet(hall, member)
    assert w.balance_cents == 0 and [h.kind for h in w.history] == ["expiry", "topup"]


# Two stories per hub (a hub's start is most of a test's time on PostgreSQL); each on both backends.


def test_credit_sold_and_used_across_two_rates_and_the_last_euro_once(hall: HubFacade, clock: FakeClock) -> None:
    _credit_sold_is_no_revenue_and_its_use_across_two_rates_is(hall, clock)
    _the_last_euro_is_used_once_and_a_refused_use_changes_nothing(hall, clock)


def test_packages_of_hours_and_of_lessons(hall: HubFacade, clock: FakeClock) -> None:
    _a_package_is_revenue_when_sold_and_covers_table_time_minute_by_minute(hall, clock)
    _a_running_game_and_a_lesson_package_pay_no_table_time(hall, clock)


def test_refunds_reversals_and_lapses(hall: HubFacade, clock: FakeClock) -> None:
    _credit_lapses_once_after_its_last_day(hall, clock)
    _refund_and_reversals_keep_the_balance_and_the_drawer_right(hall, clock)
