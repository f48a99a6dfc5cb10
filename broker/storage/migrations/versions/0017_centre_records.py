"""centre records: the centre's daily takings kept as records arrive, refused records set aside

Revision ID: 0017_centre_records
Revises: 0016_tournament_withdrawals
Create Date: 2026-12-07

The centre's pages read per-hall daily takings (`central_takings`, one row per hall, business day
and payment method) kept in the transaction that applies each payment record, instead of rebuilding
every hall's month from its raw records on each load; `central_halls.received` counts the records
held, so "records missing" is no count over all of them. Filled here from what the centre holds
(a payment row that is not a payment record, as an unchecked centre could store, is left out: the
centre's pages never read it again). `central_halls.refused*`: the records the centre refused and
the last one's reason. `central_days.total_cents` becomes 64-bit. A hall's `outbox` keeps a record
the centre refused, set aside (`refused_at`, `refused_reason`), instead of offering it for ever.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

import broker.storage.types

revision: str = "0017_centre_records"
down_revision: str | None = "0016_tournament_withdrawals"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('refused_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('refused_reason', sa.Text(), nullable=True))
    with op.batch_alter_table('central_halls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('received', sa.BigInteger(), server_default=sa.text('0'), nullable=False))
        batch_op.add_column(sa.Column('refused', sa.BigInteger(), server_default=sa.text('0'), nullable=False))
        batch_op.add_column(sa.Column('refused_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('refused_detail', sa.Text(), nullable=True))
    with op.batch_alter_table('central_days', schema=None) as batch_op:
        batch_op.alter_column('total_cents', existing_type=sa.Integer(), type_=sa.BigInteger(), existing_nullable=False)
    takings = op.create_table(
        'central_takings',
        sa.Column('hall', sa.String(length=64), nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('method', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=120), nullable=False),
        sa.Column('name_en', sa.String(length=120), nullable=False),
        sa.Column('cash', sa.Boolean(), nullable=False),
        sa.Column('count', sa.BigInteger(), nullable=False),
        sa.Column('payments_cents', sa.BigInteger(), nullable=False),
        sa.Column('reversals_cents', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('hall', 'day', 'method', name=op.f('pk_central_takings')),
    )
    op.create_index('ix_central_takings_day', 'central_takings', ['day'], unique=False)
    _fill(takings)


def _text(value: Any, default: str) -> str:
    return value[:120] if isinstance(value, str) and value else default


def _fill(takings: sa.Table) -> None:
    """The daily takings of the payments the centre holds: per method, payments counted and
    summed, reversals summed apart (the Z report's by_method, broker.domain.till.zreport)."""
    conn = op.get_bind()
    halls = sa.table('central_halls', sa.column('hall', sa.String), sa.column('received', sa.BigInteger))
    records = sa.table('central_records', sa.column('hall', sa.String))
    for hall, n in conn.execute(sa.select(records.c.hall, sa.func.count()).group_by(records.c.hall)).all():
        conn.execute(halls.update().where(halls.c.hall == hall).values(received=n))
    payments = sa.table(
        'central_payments',
        sa.column('hall', sa.String),
        sa.column('business_day', sa.Date),
        sa.column('amount_cents', sa.Integer),
        sa.column('record', sa.JSON),
    )
    sums: dict[tuple[str, Any, str], dict[str, Any]] = {}
    skipped = 0
    rows = conn.execute(
        sa.select(payments.c.hall, payments.c.business_day, payments.c.amount_cents, payments.c.record),
        execution_options={'yield_per': 5000},  # this statement only: the connection goes on with alembic's
    )
    for hall, day, amount, record in rows:
        method = record.get('method') if isinstance(record, dict) else None
        reverses = record.get('reverses_id') if isinstance(record, dict) else None
        if not isinstance(method, str) or not 0 < len(method) <= 32 or not isinstance(amount, int) or not isinstance(reverses, int | None):
            skipped += 1
            continue
        row = sums.setdefault(
            (hall, day, method),
            {
                'name': _text(record.get('method_name'), method),
                'name_en': _text(record.get('method_name_en'), method),
                'cash': record.get('cash') is True,
                'count': 0,
                'payments_cents': 0,
                'reversals_cents': 0,
            },
        )
        if reverses is None:
            row['count'] += 1
            row['payments_cents'] += amount
        else:
            row['reversals_cents'] += amount
    if skipped:
        log.warning("central_takings: %d stored payment rows are no payment records and are left out", skipped)
    values = [{'hall': h, 'day': d, 'method': m, **v} for (h, d, m), v in sums.items()]
    for start in range(0, len(values), 1000):
        conn.execute(takings.insert(), values[start : start + 1000])


def downgrade() -> None:
    op.drop_index('ix_central_takings_day', table_name='central_takings')
    op.drop_table('central_takings')
    with op.batch_alter_table('central_days', schema=None) as batch_op:
        batch_op.alter_column('total_cents', existing_type=sa.BigInteger(), type_=sa.Integer(), existing_nullable=False)
    with op.batch_alter_table('central_halls', schema=None) as batch_op:
        batch_op.drop_column('refused_detail')
        batch_op.drop_column('refused_at')
        batch_op.drop_column('refused')
        batch_op.drop_column('received')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_column('refused_reason')
        batch_op.drop_column('refused_at')
