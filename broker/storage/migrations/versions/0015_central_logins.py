"""central_logins: the centre's page logins kept on the server, as a hall's dashboard logins are

Revision ID: 0015_central_logins
Revises: 0014_i29_bookings
Create Date: 2026-12-07

`lavos central serve` kept its login only in the signed cookie (the username, 12 h): logging out
ended it in that browser only, and a new password left copies of the cookie working. Its logins
are now rows as web_sessions are (broker/accounts/logins.py: the cookie holds a random id, the row
its SHA-256), for the centre's own accounts (central_users). A new table: nothing existing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import broker.storage.types

revision: str = "0015_central_logins"
down_revision: str | None = "0014_i29_bookings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "central_logins",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", broker.storage.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column("client", sa.String(length=64), nullable=False),
        sa.Column("user_agent", sa.String(length=200), nullable=False),
        sa.Column("ended_at", broker.storage.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column("ended_by", sa.String(length=64), nullable=True),
        sa.Column("end_reason", sa.String(length=32), nullable=True),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["username"],
            ["central_users.username"],
            name=op.f("fk_central_logins_username_central_users"),
            onupdate="CASCADE",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_central_logins")),
        sa.UniqueConstraint("id_hash", name=op.f("uq_central_logins_id_hash")),
    )
    op.create_index("ix_central_logins_username_ended_at", "central_logins", ["username", "ended_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_central_logins_username_ended_at", table_name="central_logins")
    op.drop_table("central_logins")
