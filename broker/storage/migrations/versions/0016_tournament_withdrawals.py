"""tournaments: a player withdrawn after the draw (issue 29, item 27)

Revision ID: 0016_tournament_withdrawals
Revises: 0015_central_logins
Create Date: 2026-12-07

Before the draw a player who withdraws is removed (`removed_at`); after it they stay in the
bracket and every match of theirs not played yet is a walkover for the other side
(broker/domain/tournaments/progress.py works that out from `withdrawn_at`). Two nullable columns:
nothing existing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import broker.storage.types

revision: str = "0016_tournament_withdrawals"
down_revision: str | None = "0015_central_logins"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('tournament_entrants', schema=None) as batch_op:
        batch_op.add_column(sa.Column('withdrawn_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('withdrawn_by', sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('tournament_entrants', schema=None) as batch_op:
        batch_op.drop_column('withdrawn_by')
        batch_op.drop_column('withdrawn_at')
