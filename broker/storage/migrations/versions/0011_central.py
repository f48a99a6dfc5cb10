"""central: the central reporting hub's tables (`lavos central`, several halls)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05

The centre applies each hall's records once ((hall, seq) unique) and keeps per-hall read models:
payments as the Z report counts them, the halls' own closed days, games, alerts; its own accounts
(an operator: every hall; a hall manager: one). A hall's database gets the tables empty: one
schema and one migration chain for both, so `lavos db upgrade` is the same command everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import broker.storage.types

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "central_alerts",
        sa.Column("hall", sa.String(length=64), nullable=False),
        sa.Column("alert_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("table_id", sa.String(length=32), nullable=True),
        sa.Column("severity", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("message_en", sa.Text(), nullable=False),
        sa.Column("opened_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("acked_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("closed_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("hall", "alert_id", name=op.f("pk_central_alerts")),
    )
    with op.batch_alter_table("central_alerts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_central_alerts_closed_at"), ["closed_at"], unique=False)

    op.create_table(
        "central_days",
        sa.Column("hall", sa.String(length=64), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("total_cents", sa.Integer(), nullable=False),
        sa.Column("report", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False),
        sa.PrimaryKeyConstraint("hall", "day", name=op.f("pk_central_days")),
    )
    op.create_table(
        "central_games",
        sa.Column("hall", sa.String(length=64), nullable=False),
        sa.Column("game_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("table_id", sa.String(length=32), nullable=False),
        sa.Column("table_name", sa.String(length=120), nullable=False),
        sa.Column("started_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("total_cents", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("hall", "game_id", name=op.f("pk_central_games")),
    )
    with op.batch_alter_table("central_games", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_central_games_stopped_at"), ["stopped_at"], unique=False)

    op.create_table(
        "central_halls",
        sa.Column("hall", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_record_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("link_up", sa.Boolean(), nullable=True),
        sa.Column("link_changed_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("hall", name=op.f("pk_central_halls")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_central_halls_token_hash")),
    )
    op.create_table(
        "central_payments",
        sa.Column("hall", sa.String(length=64), nullable=False),
        sa.Column("payment_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("business_day", sa.Date(), nullable=False),
        sa.Column("amount_cents", sa.Integer(), nullable=False),
        sa.Column("record", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False),
        sa.PrimaryKeyConstraint("hall", "payment_id", name=op.f("pk_central_payments")),
    )
    with op.batch_alter_table("central_payments", schema=None) as batch_op:
        batch_op.create_index("ix_central_payments_hall_business_day", ["hall", "business_day"], unique=False)

    op.create_table(
        "central_records",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("hall", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("ref", sa.String(length=64), nullable=False),
        sa.Column("at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("data", sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"), nullable=False),
        sa.Column("applied_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["hall"], ["central_halls.hall"], name=op.f("fk_central_records_hall_central_halls"), ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_central_records")),
        sa.UniqueConstraint("hall", "seq", name=op.f("uq_central_records_hall_seq")),
    )
    op.create_table(
        "central_users",
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("hall", sa.String(length=64), nullable=True),
        sa.Column("created_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.CheckConstraint("(role = 'operator') = (hall IS NULL)", name=op.f("ck_central_users_hall_of_manager")),
        sa.CheckConstraint("role IN ('operator', 'hall_manager')", name=op.f("ck_central_users_role")),
        sa.ForeignKeyConstraint(["hall"], ["central_halls.hall"], name=op.f("fk_central_users_hall_central_halls"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("username", name=op.f("pk_central_users")),
    )


def downgrade() -> None:
    op.drop_table("central_users")
    op.drop_table("central_records")
    with op.batch_alter_table("central_payments", schema=None) as batch_op:
        batch_op.drop_index("ix_central_payments_hall_business_day")

    op.drop_table("central_payments")
    op.drop_table("central_halls")
    with op.batch_alter_table("central_games", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_central_games_stopped_at"))

    op.drop_table("central_games")
    op.drop_table("central_days")
    with op.batch_alter_table("central_alerts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_central_alerts_closed_at"))

    op.drop_table("central_alerts")
