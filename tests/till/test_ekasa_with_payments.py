"""The till's parts together: payments and reversals taken through the facade (the staff's path)
are registered in eKasa exactly once each, counted on the Portos simulator's side, and the receipt
shows the state; eKasa answering slowly (after the client's timeout) does not make a second one."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from broker.till.fiscal import SaveEkasaSettings, external_id
from broker.till.payments import PayTab, ReversePayment
from tests.support.ekasa_sim import EkasaSimulator
from tests.support.matching import some
from tests.support.waiting import wait_until
from tests.till.payments_support import MANAGER, STAFF, add_item, clock, facade, played_tab, service  # noqa: F401

if TYPE_CHECKING:
    from pathlib import Path

    from broker.hall.facade import HubFacade
    from tests.dashboard.conftest import FakeClock


pytestmark = pytest.mark.slow


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[EkasaSimulator]:
    s = EkasaSimulator(tmp_path / "sim").start()
    yield s
    s.stop()


def _on(facade: Any, sim: Any) -> None:
    f = facade._hub.till.fiscal
    f.poll_s, f.backoff_s = 0.2, (0.2, 0.4, 0.8)
    facade.execute(SaveEkasaSettings(enabled=True, url=sim.url, timeout_s=1.0, cash_register_code="", actor=MANAGER))


def _registered(facade: Any, pid: int) -> Any:
    return wait_until(
        lambda: (r := facade.reads.till.receipt_of(pid)).fiscal_state == "registered" and r, 20, f"payment {pid} registered in eKasa"
    )


def test_split_payments_and_a_reversal_are_each_registered_once(facade: HubFacade, clock: FakeClock, sim: EkasaSimulator) -> None:
    _on(facade, sim)
    tab = played_tab(facade, clock)  # 9,00 €
    cash = facade.execute(
        PayTab(tab=tab, method="cash", amount_cents=500, tendered_cents=1000, request_id="form-0001", actor=STAFF)
    ).payment_id
    card = facade.execute(PayTab(tab=tab, method="card", amount_cents=400, request_id="form-0002", actor=STAFF)).payment_id
    facade.execute(
        PayTab(tab=tab, method="card", amount_cents=400, request_id="form-0002", actor=STAFF)
    )  # a double tap: the same payment, nothing new to register
    for pid in (cash, card):
        r = _registered(facade, pid)
        assert r.fiscal_id and sim.count(external_id(facade.reads.venue.venue.id, pid)) == 1
    data = some(sim.record(external_id(facade.reads.venue.venue.id, cash)))["request"]["data"]
    assert [p["amount"] for p in data["payments"]] == ["10.00", "-5.00"]  # given 10 €, 5 € back
    back = facade.execute(ReversePayment(payment=card, reason="zlá karta", actor=MANAGER)).payment_id
    _registered(facade, back)
    assert sim.counts() == {external_id(facade.reads.venue.venue.id, p): 1 for p in (cash, card, back)}
    assert some(facade.reads.till.tab_payments(tab)).owed_cents == 400


def test_a_slow_answer_after_the_timeout_is_asked_about_not_sent_again(facade: HubFacade, clock: FakeClock, sim: EkasaSimulator) -> None:
    _on(facade, sim)
    sim.mode, sim.slow_s = "slow", 2.0  # registers at once, answers after the client's 1 s timeout
    tab = played_tab(facade, clock)
    pid = facade.execute(PayTab(tab=tab, method="card", amount_cents=900, actor=STAFF)).payment_id
    _registered(facade, pid)
    assert sim.count(external_id(facade.reads.venue.venue.id, pid)) == 1


def test_a_rounded_cash_payment_and_its_reversal_are_registered_with_the_rounding(
    facade: HubFacade, clock: FakeClock, sim: EkasaSimulator
) -> None:
    """17,33 € in cash is 17,35 €: eKasa gets the items at 17,33 €, roundingAmount 0.02 and payments of
    17,35 € (18,00 € less 0,65 € back); the reversal gives all of it back, its rounding too."""
    _on(facade, sim)
    tab = played_tab(facade, clock)  # 9,00 €
    add_item(facade, tab, "Pivo", 833, 19)
    pid = facade.execute(PayTab(tab=tab, method="cash", amount_cents=1733, tendered_cents=1800, actor=STAFF)).payment_id
    _registered(facade, pid)
    data = some(sim.record(external_id(facade.reads.venue.venue.id, pid)))["request"]["data"]
    assert sum(round(float(i["price"]) * 100) for i in data["items"]) == 1733
    assert data["roundingAmount"] == "0.02" and [p["amount"] for p in data["payments"]] == ["18.00", "-0.65"]
    back = facade.execute(ReversePayment(payment=pid, reason="omyl obsluhy", actor=MANAGER)).payment_id
    _registered(facade, back)
    data = some(sim.record(external_id(facade.reads.venue.venue.id, back)))["request"]["data"]
    assert data["roundingAmount"] == "-0.02" and [p["amount"] for p in data["payments"]] == ["-17.35"]
