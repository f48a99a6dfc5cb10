"""bookings: table bookings, blocks, the waiting list and private calendar feeds

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04

Issue 20. A booking holds one table for [start_at, end_at). Two bookings that hold one table
(held, confirmed, arrived or seated, and not ended early) must never overlap: on PostgreSQL the
database itself refuses it, with an exclusion constraint over the table and the half-open time
range (it needs the btree_gist extension for the `=` on the table id; a trusted extension since
PostgreSQL 13, shipped with the server on Debian); on SQLite the hub's one writer checks it before
it inserts. See broker/storage/models.py and broker/bookings/bookings.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import broker.storage.types

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# The states that hold the table (broker.domain.bookings.ACTIVE), as they are today: a later change
# of that list needs a migration of its own.
HOLDING = "'held', 'confirmed', 'arrived', 'seated'"


def upgrade() -> None:
    op.create_table('booking_blocks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('label', sa.String(length=80), nullable=False),
    sa.Column('start_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('end_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('tables', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('room', sa.String(length=32), nullable=True),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=64), nullable=False),
    sa.Column('removed_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('removed_by', sa.String(length=64), nullable=True),
    sa.CheckConstraint("kind IN ('tournament', 'training', 'private', 'maintenance')", name=op.f('ck_booking_blocks_kind')),
    sa.CheckConstraint('end_at > start_at', name=op.f('ck_booking_blocks_span')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_booking_blocks'))
    )
    with op.batch_alter_table('booking_blocks', schema=None) as batch_op:
        batch_op.create_index('ix_booking_blocks_end_at', ['end_at'], unique=False)

    op.create_table('calendar_feeds',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('revoked_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['username'], ['users.username'], name=op.f('fk_calendar_feeds_username_users'), onupdate='CASCADE', ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_calendar_feeds')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_calendar_feeds_token_hash'))
    )
    with op.batch_alter_table('calendar_feeds', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_calendar_feeds_username'), ['username'], unique=False)

    op.create_table('waiting_parties',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('party_size', sa.Integer(), nullable=False),
    sa.Column('phone', sa.String(length=20), nullable=True),
    sa.Column('sms_ok', sa.Boolean(), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('joined_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('joined_by', sa.String(length=64), nullable=False),
    sa.Column('offered_table', sa.String(length=32), nullable=True),
    sa.Column('offered_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('offer_until', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('passed_table', sa.String(length=32), nullable=True),
    sa.Column('misses', sa.Integer(), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=True),
    sa.Column('left_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('left_reason', sa.String(length=32), nullable=True),
    sa.Column('form_key', sa.String(length=64), nullable=True),
    sa.Column('anonymised_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.CheckConstraint("kind IN ('pool', 'pool9', 'pool8', 'carom')", name=op.f('ck_waiting_parties_kind')),
    sa.CheckConstraint("state IN ('waiting', 'offered', 'seated', 'left')", name=op.f('ck_waiting_parties_state')),
    sa.CheckConstraint('party_size > 0', name=op.f('ck_waiting_parties_party_size')),
    sa.ForeignKeyConstraint(['game_id'], ['sessions.id'], name=op.f('fk_waiting_parties_game_id_sessions'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_waiting_parties')),
    sa.UniqueConstraint('form_key', name=op.f('uq_waiting_parties_form_key'))
    )
    with op.batch_alter_table('waiting_parties', schema=None) as batch_op:
        batch_op.create_index('ix_waiting_parties_state_joined_at', ['state', 'joined_at'], unique=False)

    op.create_table('bookings',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('start_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('end_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('party_size', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=80), nullable=False),
    sa.Column('phone', sa.String(length=20), nullable=True),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('member_id', sa.Integer(), nullable=True),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=64), nullable=False),
    sa.Column('changed_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('game_id', sa.Integer(), nullable=True),
    sa.Column('ended_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('deposit_cents', sa.Integer(), nullable=False),
    sa.Column('deposit_tab_id', sa.Integer(), nullable=True),
    sa.Column('deposit_outcome', sa.String(length=16), nullable=True),
    sa.Column('form_key', sa.String(length=64), nullable=True),
    sa.Column('anonymised_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.CheckConstraint("kind IN ('pool', 'pool9', 'pool8', 'carom')", name=op.f('ck_bookings_kind')),
    sa.CheckConstraint("state IN ('held', 'confirmed', 'arrived', 'seated', 'no_show', 'cancelled')", name=op.f('ck_bookings_state')),
    sa.CheckConstraint('deposit_cents >= 0', name=op.f('ck_bookings_deposit')),
    sa.CheckConstraint('end_at > start_at', name=op.f('ck_bookings_span')),
    sa.CheckConstraint('party_size > 0', name=op.f('ck_bookings_party_size')),
    sa.ForeignKeyConstraint(['deposit_tab_id'], ['tabs.id'], name=op.f('fk_bookings_deposit_tab_id_tabs'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['game_id'], ['sessions.id'], name=op.f('fk_bookings_game_id_sessions'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_bookings_member_id_members'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_bookings')),
    sa.UniqueConstraint('form_key', name=op.f('uq_bookings_form_key'))
    )
    with op.batch_alter_table('bookings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bookings_member_id'), ['member_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bookings_phone'), ['phone'], unique=False)
        batch_op.create_index('ix_bookings_state_start_at', ['state', 'start_at'], unique=False)
        batch_op.create_index('ix_bookings_table_id_start_at', ['table_id', 'start_at'], unique=False)

    if op.get_context().dialect.name == "postgresql":
        op.execute("CREATE EXTENSION IF NOT EXISTS btree_gist")
        op.execute(
            "ALTER TABLE bookings ADD CONSTRAINT ex_bookings_table_time EXCLUDE USING gist "
            "(table_id WITH =, tstzrange(start_at, end_at, '[)') WITH &&) "
            f"WHERE (state IN ({HOLDING}) AND ended_at IS NULL)"
        )


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("ALTER TABLE bookings DROP CONSTRAINT IF EXISTS ex_bookings_table_time")
    with op.batch_alter_table('bookings', schema=None) as batch_op:
        batch_op.drop_index('ix_bookings_table_id_start_at')
        batch_op.drop_index('ix_bookings_state_start_at')
        batch_op.drop_index(batch_op.f('ix_bookings_phone'))
        batch_op.drop_index(batch_op.f('ix_bookings_member_id'))

    op.drop_table('bookings')
    with op.batch_alter_table('waiting_parties', schema=None) as batch_op:
        batch_op.drop_index('ix_waiting_parties_state_joined_at')

    op.drop_table('waiting_parties')
    with op.batch_alter_table('calendar_feeds', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_calendar_feeds_username'))

    op.drop_table('calendar_feeds')
    with op.batch_alter_table('booking_blocks', schema=None) as batch_op:
        batch_op.drop_index('ix_booking_blocks_end_at')

    op.drop_table('booking_blocks')