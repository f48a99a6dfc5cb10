"""form keys: a tab's and a tab item's one-time form key, unique

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02

A double tap or a resent form on the till is answered with what the first one made. The key was
kept in the hub's memory, so a restart between the two taps put a drink on the tab twice; kept
with the row (like a payment's `request_id`), the database itself answers, and refuses a second
row with the same key. Existing rows have no key (NULL is not unique-checked).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for table in ('tabs', 'tab_items'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('form_key', sa.String(length=64), nullable=True))
            batch_op.create_unique_constraint(batch_op.f(f'uq_{table}_form_key'), ['form_key'])


def downgrade() -> None:
    for table in ('tab_items', 'tabs'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(batch_op.f(f'uq_{table}_form_key'), type_='unique')
            batch_op.drop_column('form_key')
