"""Issue 19, item 3: a form's one-time key belongs to what it was made for.

A resent reversal form gives back the reversal it made; the key of another payment's reversal, or
of a payment, is a stale or copied form: refused, and nothing is reversed (before, it answered
"repeated" with the other row and reversed nothing, so the manager believed it was done)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from broker.hall.facade import ServiceError
from broker.till.payments import PayTab, ReversePayment
from tests.support.matching import some
from tests.till.payments_support import MANAGER, STAFF, clock, facade, played_tab, rows, service  # noqa: F401

if TYPE_CHECKING:
    from broker.hall.facade import HubFacade
    from tests.dashboard.conftest import FakeClock


def test_a_reversal_key_used_for_another_payment_or_a_payment_key_is_refused(facade: HubFacade, clock: FakeClock) -> None:
    t1, t2 = played_tab(facade, clock, "pool-01"), played_tab(facade, clock, "pool-02")
    p1 = facade.execute(PayTab(tab=t1, method="card", amount_cents=900, actor=STAFF, request_id="pay-key-0001"))
    p2 = facade.execute(PayTab(tab=t2, method="card", amount_cents=900, actor=STAFF, request_id="pay-key-0002"))
    r1 = facade.execute(ReversePayment(payment=p1.payment_id, reason="omyl", actor=MANAGER, request_id="rev-key-0001"))
    assert not r1.repeated
    # The same form sent again: the same reversal, nothing new.
    before = rows(facade)
    again = facade.execute(ReversePayment(payment=p1.payment_id, reason="omyl", actor=MANAGER, request_id="rev-key-0001"))
    assert (again.payment_id, again.repeated) == (r1.payment_id, True) and rows(facade) == before
    # P1's reversal key, or a payment's key, on P2's reversal: refused, P2 stays paid.
    for key in ("rev-key-0001", "pay-key-0001", "pay-key-0002"):
        with pytest.raises(ServiceError, match="already used for another payment"):
            facade.execute(ReversePayment(payment=p2.payment_id, reason="omyl", actor=MANAGER, request_id=key))
        assert rows(facade) == before
    assert some(facade.reads.till.tab_payments(t2)).status == "paid"
    # A reversal's key on a payment form: refused too (before, a 200 "repeated" with the reversal).
    with pytest.raises(ServiceError, match="already used for another bill"):
        facade.execute(PayTab(tab=t1, method="card", amount_cents=900, actor=STAFF, request_id="rev-key-0001"))
    assert rows(facade) == before
    # With a fresh key P2 is reversed once.
    r2 = facade.execute(ReversePayment(payment=p2.payment_id, reason="omyl", actor=MANAGER, request_id="rev-key-0002"))
    assert not r2.repeated and some(facade.reads.till.tab_payments(t2)).status == "open"
