"""shifts: the staff's shifts (clock in, clock out, corrections as new rows) and the drawer counted at a shift change

Revision ID: 0020_shifts
Revises: 0019_warnings_given
Create Date: 2026-12-08
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import broker.storage.types

revision: str = "0020_shifts"
down_revision: str | None = "0019_warnings_given"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN = "ended_at IS NULL AND replaced_at IS NULL"


def upgrade() -> None:
    op.create_table(
        "shifts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("staff", sa.String(length=64), nullable=False),
        sa.Column("business_day", sa.Date(), nullable=False),
        sa.Column("started_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("ended_by", sa.String(length=64), nullable=True),
        sa.Column("made_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("made_by", sa.String(length=64), nullable=False),
        sa.Column("corrects_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("replaced_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.CheckConstraint("ended_at IS NULL OR ended_at > started_at", name=op.f("ck_shifts_ends_after_start")),
        sa.ForeignKeyConstraint(["corrects_id"], ["shifts.id"], name=op.f("fk_shifts_corrects_id_shifts"), ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shifts")),
        sa.UniqueConstraint("corrects_id", name=op.f("uq_shifts_corrects_id")),
    )
    op.create_index("ix_shifts_business_day", "shifts", ["business_day"], unique=False)
    op.create_index(
        "uq_shifts_one_open", "shifts", ["staff"], unique=True, sqlite_where=sa.text(OPEN), postgresql_where=sa.text(OPEN)
    )
    op.create_table(
        "drawer_counts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("business_day", sa.Date(), nullable=False),
        sa.Column("at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("counted_by", sa.String(length=64), nullable=False),
        sa.Column("counted_cents", sa.Integer(), nullable=False),
        sa.Column("expected_cents", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drawer_counts")),
    )
    op.create_index(op.f("ix_drawer_counts_business_day"), "drawer_counts", ["business_day"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_drawer_counts_business_day"), table_name="drawer_counts")
    op.drop_table("drawer_counts")
    op.drop_index("uq_shifts_one_open", table_name="shifts")
    op.drop_index("ix_shifts_business_day", table_name="shifts")
    op.drop_table("shifts")
