"""cash rounding: a payment's rounding of cash to 0,05 €

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03

Since 1 July 2022 a Slovak cash payment is rounded to 5 cents; the bill is not. A payment keeps
the amount it counts against the bill and, beside it, what the drawer took beyond it
(`rounding_cents`): the receipt prints it as its own line and the Z report's expected cash adds it.
Every payment made before was not rounded: 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('payments', schema=None) as batch_op:
        batch_op.add_column(sa.Column('rounding_cents', sa.Integer(), server_default=sa.text('0'), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('payments', schema=None) as batch_op:
        batch_op.drop_column('rounding_cents')
