"""The centre counts a hall's voucher money as the hall's Z report does (zákon o DPH § 9a): credit sold
and table time from packages are rows of their own, negative, so a day's takings at the centre are
its revenue and agree with the hall's frozen Z report."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from sqlalchemy import select

from broker.central.records import LESS_CREDIT_SOLD, LESS_PACKAGE_TIME, _add_takings
from broker.domain.central_records import PaymentData, check, payment_doc
from broker.domain.till.receipt import ReceiptLine
from broker.domain.till.revenue import PaymentRecord, takings
from broker.domain.vouchers import CREDIT, CREDIT_SALE, PACKAGE
from broker.storage.models import CentralTakings

if TYPE_CHECKING:
    from broker.storage.engine import Store

DAY = date(2026, 12, 1)
AT = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)


def _sent(n: int, method: str, name: str, cash: bool, *lines: ReceiptLine) -> PaymentData:
    rec = PaymentRecord(n, method, sum(x.amount_cents for x in lines), "jana", AT, n, "Bar", n, lines, day=DAY)
    data = check("payment", payment_doc(rec, business_day=DAY, method_name=name, method_name_en=name, cash=cash, fallback_vat=23))
    assert isinstance(data, PaymentData)
    return data


def test_the_centre_s_takings_of_a_day_with_vouchers_are_its_revenue(store: Store) -> None:
    pays = [
        _sent(1, "cash", "Hotovosť", True, ReceiptLine("Kredit", "Credit", 1, 2000, 2000, 0, CREDIT_SALE)),
        _sent(
            2,
            CREDIT,
            "Z kreditu",
            False,
            ReceiptLine("Čas", "Time", 1, 900, 900, 23, "table_time"),
            ReceiptLine("Pivo", "Beer", 1, 215, 215, 19, "drinks"),
        ),
        _sent(3, PACKAGE, "Z balíka", False, ReceiptLine("Čas z balíka", "Time", 1, 500, 500, 23, "table_time")),
    ]
    with store.session() as db:
        _add_takings(db, "lavos", pays)
    with store.reader() as db:
        rows = {
            r.method: r.payments_cents + r.reversals_cents for r in db.scalars(select(CentralTakings).where(CentralTakings.hall == "lavos"))
        }
    assert rows == {"cash": 2000, CREDIT: 1115, PACKAGE: 500, LESS_CREDIT_SOLD: -2000, LESS_PACKAGE_TIME: -500}
    assert sum(rows.values()) == takings([p.record() for p in pays]) == 1115
