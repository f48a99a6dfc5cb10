"""The bar's stock (issue 32 §1): items, recipes, stocktakes and the movements whose sum is a level

Revision ID: 0022_stock
Revises: 0021_wallet
Create Date: 2026-12-07

New tables only: `stock_items` (with `level_milli`, the sum of the item's movements kept beside
them), `stock_recipes` (what one of a product takes), `stock_counts` (a stocktake) and
`stock_movements` (every change, never changed). Nothing existing changes: no product is tracked
until the manager gives it a recipe.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import broker.storage.types
from broker.storage.types import JSONDoc

revision: str = '0022_stock'
down_revision: str | None = "0021_wallet"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('stock_counts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('by', sa.String(length=64), nullable=False),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('counts', JSONDoc, nullable=False),
    sa.Column('form_key', sa.String(length=64), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_stock_counts')),
    sa.UniqueConstraint('form_key', name=op.f('uq_stock_counts_form_key'))
    )
    op.create_table('stock_items',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('unit', sa.String(length=8), nullable=False),
    sa.Column('threshold_milli', sa.BigInteger(), nullable=False),
    sa.Column('level_milli', sa.BigInteger(), nullable=False),
    sa.Column('unit_cost_cents', sa.Integer(), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint("unit IN ('piece', 'litre', 'kg')", name=op.f('ck_stock_items_unit')),
    sa.CheckConstraint('threshold_milli >= 0', name=op.f('ck_stock_items_threshold_not_negative')),
    sa.CheckConstraint('unit_cost_cents >= 0', name=op.f('ck_stock_items_cost_not_negative')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_stock_items')),
    sa.UniqueConstraint('name', name=op.f('uq_stock_items_name'))
    )
    op.create_table('stock_recipes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('product_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('quantity_milli', sa.Integer(), nullable=False),
    sa.CheckConstraint('quantity_milli > 0', name=op.f('ck_stock_recipes_quantity_positive')),
    sa.ForeignKeyConstraint(['item_id'], ['stock_items.id'], name=op.f('fk_stock_recipes_item_id_stock_items'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['product_id'], ['products.id'], name=op.f('fk_stock_recipes_product_id_products'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_stock_recipes')),
    sa.UniqueConstraint('product_id', 'item_id', name=op.f('uq_stock_recipes_product_id_item_id'))
    )
    with op.batch_alter_table('stock_recipes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_stock_recipes_product_id'), ['product_id'], unique=False)

    op.create_table('stock_movements',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('quantity_milli', sa.BigInteger(), nullable=False),
    sa.Column('value_cents', sa.BigInteger(), nullable=False),
    sa.Column('at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.String(length=64), nullable=False),
    sa.Column('tab_item_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('product_id', sa.Integer(), nullable=True),
    sa.Column('reason', sa.String(length=16), nullable=True),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('supplier', sa.String(length=120), nullable=True),
    sa.Column('price_net_cents', sa.Integer(), nullable=True),
    sa.Column('price_gross_cents', sa.Integer(), nullable=True),
    sa.Column('vat_percent', sa.Integer(), nullable=True),
    sa.Column('count_id', sa.Integer(), nullable=True),
    sa.Column('form_key', sa.String(length=64), nullable=True),
    sa.CheckConstraint("kind IN ('sale', 'void', 'return', 'delivery', 'write_off', 'stocktake')", name=op.f('ck_stock_movements_kind')),
    sa.ForeignKeyConstraint(['count_id'], ['stock_counts.id'], name=op.f('fk_stock_movements_count_id_stock_counts'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['item_id'], ['stock_items.id'], name=op.f('fk_stock_movements_item_id_stock_items'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['product_id'], ['products.id'], name=op.f('fk_stock_movements_product_id_products'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['tab_item_id'], ['tab_items.id'], name=op.f('fk_stock_movements_tab_item_id_tab_items'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_stock_movements')),
    sa.UniqueConstraint('form_key', name=op.f('uq_stock_movements_form_key'))
    )
    with op.batch_alter_table('stock_movements', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_stock_movements_count_id'), ['count_id'], unique=False)
        batch_op.create_index('ix_stock_movements_item_id_id', ['item_id', 'id'], unique=False)
        batch_op.create_index('ix_stock_movements_kind_at', ['kind', 'at'], unique=False)
        batch_op.create_index(batch_op.f('ix_stock_movements_tab_item_id'), ['tab_item_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('stock_movements', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_stock_movements_tab_item_id'))
        batch_op.drop_index('ix_stock_movements_kind_at')
        batch_op.drop_index('ix_stock_movements_item_id_id')
        batch_op.drop_index(batch_op.f('ix_stock_movements_count_id'))

    op.drop_table('stock_movements')
    with op.batch_alter_table('stock_recipes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_stock_recipes_product_id'))

    op.drop_table('stock_recipes')
    op.drop_table('stock_items')
    op.drop_table('stock_counts')
