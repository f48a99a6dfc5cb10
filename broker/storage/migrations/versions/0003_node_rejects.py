"""node rejects: refused messages counted per table and reason, with the last samples

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

Replaces the per-topic event_rejects counter (kept, no longer written) with counts per
(table, reason) and a bounded list of samples per table; see broker/domain/floor/reject_tally.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import broker.storage.types

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('node_reject_counts',
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('reason', sa.String(length=32), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('first_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('table_id', 'reason', name=op.f('pk_node_reject_counts'))
    )
    op.create_table('node_reject_samples',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('topic', sa.String(length=250), nullable=False),
    sa.Column('reason', sa.String(length=32), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('excerpt', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_node_reject_samples'))
    )
    with op.batch_alter_table('node_reject_samples', schema=None) as batch_op:
        batch_op.create_index('ix_node_reject_samples_table_id_id', ['table_id', 'id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('node_reject_samples', schema=None) as batch_op:
        batch_op.drop_index('ix_node_reject_samples_table_id_id')
    op.drop_table('node_reject_samples')
    op.drop_table('node_reject_counts')
