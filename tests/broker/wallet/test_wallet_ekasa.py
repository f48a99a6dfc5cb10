"""eKasa and members' money (NineDigit Portos' API, the project's simulator, broker.adapters.ekasa): a
package's sale is a Positive item at its VAT rate; the table time it covers is registered with a
Voucher item of the same value (voucherNumber: the package's number), so the receipt's total is 0;
credit sold is no supply and is not sent; a bill paid from credit is registered as a sale."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import select

from broker.floor.games import StartGame, StopGame
from broker.hall.facade import HubFacade
from broker.people.members import AddMember
from broker.storage.models import Tab
from broker.till.fiscal import SaveEkasaSettings, external_id
from broker.wallet.wallet import PayFromCredit, PayFromPackage, SellPackage, TopUpCredit
from tests.dashboard.conftest import FakeClock, sqlite_only
from tests.support.ekasa_sim import EkasaSimulator
from tests.support.hub import started_hub
from tests.support.matching import some
from tests.support.waiting import wait_until

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[EkasaSimulator]:
    s = EkasaSimulator(tmp_path / "sim").start()
    yield s
    s.stop()


@pytest.fixture
def hall(db_url: str, clock: FakeClock, sim: EkasaSimulator) -> Iterator[HubFacade]:
    with started_hub(db_url, clock=clock, watchdog=False) as hub:
        f = hub.till.fiscal
        f.poll_s, f.backoff_s = 0.2, (0.2, 0.4, 0.8)
        facade = HubFacade(hub)
        facade.execute(SaveEkasaSettings(enabled=True, url=sim.url, timeout_s=1.0, cash_register_code="", actor="boss"))
        yield facade


def _sent(hall: HubFacade, sim: EkasaSimulator, payment: int | None) -> dict[str, Any]:
    pid = some(payment)
    wait_until(lambda: some(hall.reads.till.receipt_of(pid)).fiscal_state == "registered", 20, f"payment {pid} registered")
    data: dict[str, Any] = some(sim.record(external_id(hall.reads.venue.venue.id, pid)))["request"]["data"]
    return data


@sqlite_only  # the SQL of both backends: test_wallet_writer; this is the receipts' shape
def test_a_package_sold_then_exchanged_for_table_time_and_credit_never_sent(hall: HubFacade, clock: FakeClock, sim: EkasaSimulator) -> None:
    member = hall.execute(AddMember(name="Malý Tomáš", actor="boss")).id
    top = hall.execute(TopUpCredit(member_id=member, amount_cents=1000, method="cash", actor="jana"))
    sold = hall.execute(SellPackage(member_id=member, kind="hours", quantity=1, price_cents=500, method="card", actor="jana"))
    sale = _sent(hall, sim, sold.payment_id)
    assert [(i["type"], i["price"], i["vatRate"]) for i in sale["items"]] == [("Positive", "5.00", "23.00")]
    assert f"B-{sold.package_id}" in sale["items"][0]["name"]
    game = hall.execute(StartGame(table="pool-01", actor="jana"))
    clock.advance(minutes=90)
    hall.execute(StopGame(game=game, actor="jana"))
    with hall._hub.store.reader() as db:
        tab = some(db.scalar(select(Tab.id).where(Tab.session_id == game)))
    used = hall.execute(PayFromPackage(tab=tab, package_id=some(sold.package_id), actor="jana"))
    exchange = _sent(hall, sim, used.payment_id)
    assert [(i["type"], i["price"], i["vatRate"], i.get("voucherNumber")) for i in exchange["items"]] == [
        ("Positive", "5.00", "23.00", None),
        ("Voucher", "-5.00", "23.00", f"B-{sold.package_id}"),
    ]
    assert exchange["payments"] == []
    rest = hall.execute(PayFromCredit(tab=tab, member_id=member, amount_cents=400, actor="jana"))
    paid = _sent(hall, sim, rest.payment_id)
    assert [(i["type"], i["price"]) for i in paid["items"]] == [("Positive", "4.00")]
    assert [p["name"] for p in paid["payments"]] == ["Z kreditu"]
    # Credit sold is no supply (zákon o DPH § 9a): it stays out of eKasa.
    assert some(hall.reads.till.receipt_of(some(top.payment_id))).fiscal_state == "none"
    assert sim.count(external_id(hall.reads.venue.venue.id, some(top.payment_id))) == 0


def test_the_simulator_refuses_a_voucher_item_without_its_number() -> None:
    from tests.support.ekasa_sim import _validate

    item = {"type": "Voucher", "name": "Poukaz", "price": "-5.00", "unitPrice": "-5.000000", "quantity": {"amount": "1.0000", "unit": "x"}}
    body = {"request": {"externalId": "x-1", "data": {"items": [item], "payments": []}}}
    assert "request.data.items[0].voucherNumber" in _validate("cash_register", body)
    item["voucherNumber"] = "B-1"
    assert _validate("cash_register", body) == {}
