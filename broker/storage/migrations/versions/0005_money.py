"""money: products, tabs, tab items, payments, business days, settings

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01

The till (issue 12): what the bar sells, the tabs it goes on, the payments that settle them and
the business days they are closed in. Nothing here is ever deleted: items are voided, payments
reversed. `settings` holds what the manager sets on a page (the eKasa client). See
broker/storage/models.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import broker.storage.types

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('business_days',
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('opened_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('opened_by', sa.String(length=64), nullable=False),
    sa.Column('float_cents', sa.Integer(), nullable=False),
    sa.Column('closed_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('closed_by', sa.String(length=64), nullable=True),
    sa.Column('counted_cents', sa.Integer(), nullable=True),
    sa.Column('report', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.PrimaryKeyConstraint('day', name=op.f('pk_business_days'))
    )
    op.create_table('products',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('name_en', sa.String(length=120), nullable=True),
    sa.Column('price_cents', sa.Integer(), nullable=False),
    sa.Column('vat_percent', sa.Integer(), nullable=False),
    sa.Column('category', sa.String(length=32), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint('price_cents >= 0', name=op.f('ck_products_price_not_negative')),
    sa.CheckConstraint('vat_percent IN (23, 19, 5, 0)', name=op.f('ck_products_vat_rate')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_products')),
    sa.UniqueConstraint('name', name=op.f('uq_products_name'))
    )
    op.create_table('settings',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('value', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('updated_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_by', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_settings'))
    )
    op.create_table('tabs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=True),
    sa.Column('session_id', sa.Integer(), nullable=True),
    sa.Column('label', sa.String(length=120), nullable=False),
    sa.Column('opened_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('opened_by', sa.String(length=64), nullable=False),
    sa.Column('business_day', sa.Date(), nullable=False),
    sa.Column('merged_into', sa.Integer(), nullable=True),
    sa.Column('split', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('settled_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['merged_into'], ['tabs.id'], name=op.f('fk_tabs_merged_into_tabs'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_tabs_session_id_sessions'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tabs')),
    sa.UniqueConstraint('session_id', name=op.f('uq_tabs_session_id'))
    )
    with op.batch_alter_table('tabs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tabs_business_day'), ['business_day'], unique=False)
        batch_op.create_index(batch_op.f('ix_tabs_merged_into'), ['merged_into'], unique=False)
        batch_op.create_index(batch_op.f('ix_tabs_settled_at'), ['settled_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_tabs_table_id'), ['table_id'], unique=False)

    op.create_table('payments',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('tab_id', sa.Integer(), nullable=False),
    sa.Column('part', sa.Integer(), nullable=True),
    sa.Column('method', sa.String(length=32), nullable=False),
    sa.Column('amount_cents', sa.Integer(), nullable=False),
    sa.Column('tendered_cents', sa.Integer(), nullable=True),
    sa.Column('change_cents', sa.Integer(), nullable=False),
    sa.Column('staff', sa.String(length=64), nullable=False),
    sa.Column('at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('business_day', sa.Date(), nullable=False),
    sa.Column('reverses_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('receipt_no', sa.Integer(), nullable=True),
    sa.Column('request_id', sa.String(length=64), nullable=True),
    sa.Column('lines', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('fiscal_state', sa.String(length=16), nullable=False),
    sa.Column('fiscal_id', sa.String(length=120), nullable=True),
    sa.Column('fiscal_detail', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('fiscal_updated_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('paragon_no', sa.String(length=40), nullable=True),
    sa.Column('paragon_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.CheckConstraint("fiscal_state IN ('none', 'pending', 'registered', 'offline', 'failed', 'paragon')", name=op.f('ck_payments_fiscal_state')),
    sa.CheckConstraint('change_cents >= 0', name=op.f('ck_payments_change_not_negative')),
    sa.ForeignKeyConstraint(['reverses_id'], ['payments.id'], name=op.f('fk_payments_reverses_id_payments'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['tab_id'], ['tabs.id'], name=op.f('fk_payments_tab_id_tabs'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_payments')),
    sa.UniqueConstraint('receipt_no', name=op.f('uq_payments_receipt_no')),
    sa.UniqueConstraint('request_id', name=op.f('uq_payments_request_id')),
    sa.UniqueConstraint('reverses_id', name=op.f('uq_payments_reverses_id'))
    )
    with op.batch_alter_table('payments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_payments_at'), ['at'], unique=False)
        batch_op.create_index(batch_op.f('ix_payments_business_day'), ['business_day'], unique=False)
        batch_op.create_index(batch_op.f('ix_payments_tab_id'), ['tab_id'], unique=False)

    op.create_table('tab_items',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('tab_id', sa.Integer(), nullable=False),
    sa.Column('product_id', sa.Integer(), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('name_en', sa.String(length=255), nullable=True),
    sa.Column('category', sa.String(length=32), nullable=False),
    sa.Column('unit_cents', sa.Integer(), nullable=False),
    sa.Column('vat_percent', sa.Integer(), nullable=False),
    sa.Column('quantity', sa.Integer(), nullable=False),
    sa.Column('added_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('added_by', sa.String(length=64), nullable=False),
    sa.Column('voided_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('voided_by', sa.String(length=64), nullable=True),
    sa.Column('void_reason', sa.Text(), nullable=True),
    sa.CheckConstraint('quantity > 0', name=op.f('ck_tab_items_quantity_positive')),
    sa.CheckConstraint('unit_cents >= 0', name=op.f('ck_tab_items_unit_not_negative')),
    sa.ForeignKeyConstraint(['product_id'], ['products.id'], name=op.f('fk_tab_items_product_id_products'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['tab_id'], ['tabs.id'], name=op.f('fk_tab_items_tab_id_tabs'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tab_items'))
    )
    with op.batch_alter_table('tab_items', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tab_items_tab_id'), ['tab_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('tab_items', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tab_items_tab_id'))

    op.drop_table('tab_items')
    with op.batch_alter_table('payments', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_payments_tab_id'))
        batch_op.drop_index(batch_op.f('ix_payments_business_day'))
        batch_op.drop_index(batch_op.f('ix_payments_at'))

    op.drop_table('payments')
    with op.batch_alter_table('tabs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tabs_table_id'))
        batch_op.drop_index(batch_op.f('ix_tabs_settled_at'))
        batch_op.drop_index(batch_op.f('ix_tabs_merged_into'))
        batch_op.drop_index(batch_op.f('ix_tabs_business_day'))

    op.drop_table('tabs')
    op.drop_table('settings')
    op.drop_table('products')
    op.drop_table('business_days')
