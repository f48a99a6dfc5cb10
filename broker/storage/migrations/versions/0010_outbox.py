"""outbox: the hall's committed records waiting for the central reporting hub

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05

Several halls report to one centre (docs/scaling.md, "several halls"). Each record the centre
needs (a payment or reversal, a closed day's Z report, a stopped game, an alert) is written to
`outbox` in the transaction that made it, numbered gap-free per hall by `outbox_counter`, and
deleted when the centre acknowledges it. A hall without a centre writes nothing here. Nothing
existing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from broker.storage.types import JSONDoc, UTCDateTime

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'outbox',
        sa.Column('seq', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('hall', sa.String(length=64), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('ref', sa.String(length=64), nullable=False),
        sa.Column('at', UTCDateTime(), nullable=False),
        sa.Column('record', JSONDoc, nullable=False),
        sa.Column('size', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('seq', name=op.f('pk_outbox')),
    )
    op.create_table(
        'outbox_counter',
        sa.Column('hall', sa.String(length=64), nullable=False),
        sa.Column('last_seq', sa.BigInteger(), nullable=False),
        sa.Column('pending_bytes', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('hall', name=op.f('pk_outbox_counter')),
    )


def downgrade() -> None:
    op.drop_table('outbox_counter')
    op.drop_table('outbox')
