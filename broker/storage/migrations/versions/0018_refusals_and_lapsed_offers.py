"""vpages: the reasons for refused records kept as message ids with their params; a lapsed offer apart from a declined one

Revision ID: 0018_refusals_and_lapsed_offers
Revises: 0017_centre_records
Create Date: 2026-12-09

A record the centre refused is set aside at the hall (`outbox`) and counted at the centre
(`central_halls`), each with its reason in English (`refused_reason`, `refused_detail`: the log's
words). `refused_why` keeps the same reason as a refusal document (broker.domain.refusals.to_doc:
its message id and params), so the hall's Modules page and the centre's hall page say it in the
reader's language. Rows kept before have none: their pages show the English they hold.

`waiting_parties.lapsed_table`: the table whose offer to the party lapsed with nobody answering,
which is offered to them again when no other party waits for it; `passed_table` is now only a table
staff said the party does not want (never offered to them again). A party waiting now keeps its
`passed_table`, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from broker.storage.types import JSONDoc

revision: str = "0018_refusals_and_lapsed_offers"
down_revision: str | None = "0017_centre_records"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('waiting_parties', schema=None) as batch_op:
        batch_op.add_column(sa.Column('lapsed_table', sa.String(length=32), nullable=True))
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('refused_why', JSONDoc, nullable=True))
    with op.batch_alter_table('central_halls', schema=None) as batch_op:
        batch_op.add_column(sa.Column('refused_why', JSONDoc, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('central_halls', schema=None) as batch_op:
        batch_op.drop_column('refused_why')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_column('refused_why')
    with op.batch_alter_table('waiting_parties', schema=None) as batch_op:
        batch_op.drop_column('lapsed_table')
