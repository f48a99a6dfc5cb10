"""Issue 29, item 15: migration 0017_centre_records fills the centre's daily takings from the payments it already held.

A centre database of revision 0013 holds two halls' payment records (payments and a reversal on two
days, two methods) and a row an unchecked centre once stored (a payment with only id, day and
amount: item 6's). After the upgrade the daily sums are what the Z report counts of the real records,
the stored row is left out (the pages never read it again), "records missing" counts from the new
`received` column, and the pages answer. The downgrade (run first here, from head) works too."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import command

from broker.central.accounts import Viewer
from broker.central.service import Central
from broker.storage.engine import make_engine, open_store
from broker.storage.migrate import alembic_config
from broker.storage.types import UTCDateTime
from tests.central.test_centre_api import _payment

if TYPE_CHECKING:
    from tests.support.postgres import PostgresCluster


DAY = date(2026, 12, 4)
halls = sa.table(
    "central_halls",
    sa.column("hall", sa.String),
    sa.column("name", sa.String),
    sa.column("token_hash", sa.String),
    sa.column("last_seq", sa.BigInteger),
)
records = sa.table(
    "central_records",
    sa.column("hall", sa.String),
    sa.column("seq", sa.BigInteger),
    sa.column("kind", sa.String),
    sa.column("ref", sa.String),
    sa.column("at", UTCDateTime()),
    sa.column("data", sa.JSON),
    sa.column("applied_at", UTCDateTime()),
)
payments = sa.table(
    "central_payments",
    sa.column("hall", sa.String),
    sa.column("payment_id", sa.BigInteger),
    sa.column("business_day", sa.Date),
    sa.column("amount_cents", sa.Integer),
    sa.column("record", sa.JSON),
)


def test_the_daily_takings_are_filled_from_the_payments_held(postgres_cluster: PostgresCluster, postgres_template: str) -> None:
    url = postgres_cluster.create_database(template=postgres_template)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            cfg = alembic_config()
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0013")
            conn.commit()
        held = {
            "a": [_payment(1, 900), _payment(2, -900, reverses=1), _payment(3, 1250, "card"), _payment(4, 500, day=date(2026, 12, 5))],
            "b": [_payment(1, 4000)],
        }
        now = datetime(2026, 12, 6, tzinfo=UTC)
        with engine.begin() as conn:
            for hall, pays in held.items():
                conn.execute(halls.insert().values(hall=hall, name=f"Lavos {hall}", token_hash=hall * 64, last_seq=len(pays) + 2))
                for seq, p in enumerate(pays, 1):
                    conn.execute(
                        records.insert().values(
                            hall=hall, seq=seq, kind="payment", ref=f"payment:{p['id']}", at=now, data=p, applied_at=now
                        )
                    )
                    conn.execute(
                        payments.insert().values(
                            hall=hall,
                            payment_id=p["id"],
                            business_day=DAY if p["business_day"] == "2026-12-04" else date(2026, 12, 5),
                            amount_cents=p["amount_cents"],
                            record=p,
                        )
                    )
            bad = {"id": 777, "business_day": DAY.isoformat(), "amount_cents": 100}
            conn.execute(records.insert().values(hall="a", seq=5, kind="payment", ref="payment:777", at=now, data=bad, applied_at=now))
            conn.execute(payments.insert().values(hall="a", payment_id=777, business_day=DAY, amount_cents=100, record=bad))
    finally:
        engine.dispose()

    store = open_store(url)  # upgrades to head
    try:
        central = Central(store)
        eva = Viewer("eva", "operator", None)
        a = central.month(eva, "a", DAY)
        assert a is not None
        assert [(d.day, d.total_cents, d.payments_count, d.reversals_cents) for d in a.days] == [
            (DAY, 1250, 2, -900),
            (date(2026, 12, 5), 500, 1, 0),
        ]
        assert {m.method: m.cents for m in a.days[0].by_method} == {"cash": 0, "card": 1250}
        assert central.overview(eva, DAY).total_cents == 1250 + 500 + 4000
        assert {h.hall: h.missing for h in central.halls(eva)} == {"a": 1, "b": 2}  # 6 and 3 sent, 5 and 1 held
    finally:
        store.close()
        postgres_cluster.drop_database(url)
