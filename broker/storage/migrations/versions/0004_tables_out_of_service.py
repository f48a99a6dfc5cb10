"""tables out of service: a table staff took out of service (cleaning, repair), with why and since when

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

One row per table that is out of service now; putting it back deletes the row (the audit log
keeps who did what and when). See broker/floor/table_service.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import broker.storage.types

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('tables_out_of_service',
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('since', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('by', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('table_id', name=op.f('pk_tables_out_of_service'))
    )


def downgrade() -> None:
    op.drop_table('tables_out_of_service')
