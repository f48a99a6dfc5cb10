"""lead: the warnings a game's players were given (closing time, prepaid end), so a hub that takes over does not blink them again

Revision ID: 0019_warnings_given
Revises: 0018_refusals_and_lapsed_offers
Create Date: 2026-12-08

`sessions.closing_warned_for`: the closing time the table's light blinked to warn of;
`sessions.prepaid_warned_for`: the prepaid end it blinked to warn of. Kept in memory before, so a
standby that took over (or a restarted hub) inside the warning window blinked every lit table once
more. Games open now have neither: they may be warned once more, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from broker.storage.types import UTCDateTime

revision: str = "0019_warnings_given"
down_revision: str | None = "0018_refusals_and_lapsed_offers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("closing_warned_for", UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("prepaid_warned_for", UTCDateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_column("prepaid_warned_for")
        batch_op.drop_column("closing_warned_for")
