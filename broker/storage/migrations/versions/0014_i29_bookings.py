"""a tab that holds one thing; no iCal link of a disabled account

Revision ID: 0014_i29_bookings
Revises: 0013
Create Date: 2026-12-07

`tabs.holds`: a tab opened for one thing holds items of that category only and merges with no
other tab (broker.till.tabs): a player's tournament entry fee tab ("tournament_entry", whose
payments are the prize pot) and a booking's deposit tab ("deposit"). The tabs of both already
made are marked here from the rows that point at them.

A disabled account's iCal links end (broker.accounts.links: disabling an account, or a new role,
ends them from now on); those of accounts disabled before this are ended here.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014_i29_bookings'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('tabs', sa.Column('holds', sa.String(length=32), nullable=True))
    op.execute(
        "UPDATE tabs SET holds = 'tournament_entry' WHERE id IN "
        "(SELECT fee_tab_id FROM tournament_entrants WHERE fee_tab_id IS NOT NULL)"
    )
    op.execute("UPDATE tabs SET holds = 'deposit' WHERE id IN (SELECT deposit_tab_id FROM bookings WHERE deposit_tab_id IS NOT NULL)")
    op.execute(
        "UPDATE calendar_feeds SET revoked_at = CURRENT_TIMESTAMP WHERE revoked_at IS NULL AND username IN "
        "(SELECT username FROM users WHERE active = false)"
    )


def downgrade() -> None:
    # Not a batch (SQLite would copy the table, which rows of payments and items point at): SQLite
    # drops a plain column in place since 3.35 (Debian 12 has 3.40).
    op.drop_column('tabs', 'holds')
