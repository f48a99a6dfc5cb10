"""wallet: members' prepaid credit and packages (hours, lessons), every change a row; a payment's voucher

Revision ID: 0021_wallet
Revises: 0020_shifts
Create Date: 2026-12-08

`wallet_packages`: a package sold to a member (a single-purpose voucher). `wallet_entries`: every
change of a member's credit or of a package (top-up, use, expiry, refund, reversal, sale), never
updated or deleted. `payments.voucher`: the package a payment redeemed (eKasa's voucherNumber).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from broker.storage.types import UTCDateTime

revision: str = "0021_wallet"
down_revision: str | None = "0020_shifts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "wallet_packages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("member_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("units", sa.Integer(), nullable=False),
        sa.Column("rate_cents", sa.Integer(), nullable=False),
        sa.Column("price_cents", sa.Integer(), nullable=False),
        sa.Column("vat_percent", sa.Integer(), nullable=False),
        sa.Column("sold_at", UTCDateTime(), nullable=False),
        sa.Column("sold_by", sa.String(length=64), nullable=False),
        sa.Column("expires_on", sa.Date(), nullable=True),
        sa.Column("payment_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.CheckConstraint("kind IN ('hours', 'lessons')", name=op.f("ck_wallet_packages_kind")),
        sa.CheckConstraint("units > 0", name=op.f("ck_wallet_packages_units_positive")),
        sa.CheckConstraint("rate_cents >= 0", name=op.f("ck_wallet_packages_rate_not_negative")),
        sa.ForeignKeyConstraint(["member_id"], ["members.id"], name=op.f("fk_wallet_packages_member_id_members"), ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(["payment_id"], ["payments.id"], name=op.f("fk_wallet_packages_payment_id_payments"), ondelete="RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wallet_packages")),
    )
    op.create_index(op.f("ix_wallet_packages_member_id"), "wallet_packages", ["member_id"], unique=False)
    op.create_table(
        "wallet_entries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("member_id", sa.Integer(), nullable=False),
        sa.Column("package_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("cents", sa.Integer(), nullable=False),
        sa.Column("units", sa.Integer(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("staff", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("expires_on", sa.Date(), nullable=True),
        sa.Column("tab_id", sa.Integer(), nullable=True),
        sa.Column("payment_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("reverses_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.CheckConstraint(
            "kind IN ('topup', 'use', 'expiry', 'refund', 'reversal', 'sale')", name=op.f("ck_wallet_entries_kind")
        ),
        sa.ForeignKeyConstraint(["member_id"], ["members.id"], name=op.f("fk_wallet_entries_member_id_members"), ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(
            ["package_id"], ["wallet_packages.id"], name=op.f("fk_wallet_entries_package_id_wallet_packages"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(["tab_id"], ["tabs.id"], name=op.f("fk_wallet_entries_tab_id_tabs"), ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(["payment_id"], ["payments.id"], name=op.f("fk_wallet_entries_payment_id_payments"), ondelete="RESTRICT"),
        sa.ForeignKeyConstraint(
            ["reverses_id"], ["wallet_entries.id"], name=op.f("fk_wallet_entries_reverses_id_wallet_entries"), ondelete="RESTRICT"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wallet_entries")),
        sa.UniqueConstraint("request_id", name=op.f("uq_wallet_entries_request_id")),
        sa.UniqueConstraint("reverses_id", name=op.f("uq_wallet_entries_reverses_id")),
    )
    op.create_index(op.f("ix_wallet_entries_member_id"), "wallet_entries", ["member_id"], unique=False)
    op.create_index(op.f("ix_wallet_entries_package_id"), "wallet_entries", ["package_id"], unique=False)
    with op.batch_alter_table("payments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("voucher", sa.String(length=50), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payments", schema=None) as batch_op:
        batch_op.drop_column("voucher")
    op.drop_index(op.f("ix_wallet_entries_package_id"), table_name="wallet_entries")
    op.drop_index(op.f("ix_wallet_entries_member_id"), table_name="wallet_entries")
    op.drop_table("wallet_entries")
    op.drop_index(op.f("ix_wallet_packages_member_id"), table_name="wallet_packages")
    op.drop_table("wallet_packages")
