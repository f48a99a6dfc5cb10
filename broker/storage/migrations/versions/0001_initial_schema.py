"""initial schema

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30

The whole schema as of the first release; written by autogenerate, then tidied by hand.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import broker.storage.types
from sqlalchemy.dialects import postgresql

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('alerts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=True),
    sa.Column('cause_key', sa.String(length=200), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('message_en', sa.Text(), nullable=False),
    sa.Column('severity', sa.String(length=16), nullable=False),
    sa.Column('opened_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.Column('acked_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('acked_by', sa.String(length=64), nullable=True),
    sa.Column('closed_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_alerts'))
    )
    with op.batch_alter_table('alerts', schema=None) as batch_op:
        batch_op.create_index('ix_alerts_opened_at', ['opened_at'], unique=False)
        batch_op.create_index('uq_alerts_open_cause_key', ['cause_key'], unique=True, sqlite_where=sa.text('closed_at IS NULL'), postgresql_where=sa.text('closed_at IS NULL'))

    op.create_table('audit_log',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('actor', sa.String(length=64), nullable=False),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('target', sa.String(length=200), nullable=False),
    sa.Column('detail', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_log'))
    )
    with op.batch_alter_table('audit_log', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_audit_log_at'), ['at'], unique=False)

    op.create_table('event_rejects',
    sa.Column('topic', sa.String(length=200), nullable=False),
    sa.Column('reason', sa.String(length=200), nullable=False),
    sa.Column('count', sa.BigInteger(), nullable=False),
    sa.Column('last_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('topic', 'reason', name=op.f('pk_event_rejects'))
    )
    op.create_table('events',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('boot', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.BigInteger(), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('node_ts', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('ts_synced', sa.Boolean(), nullable=False),
    sa.Column('received_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_events')),
    sa.UniqueConstraint('table_id', 'boot', 'seq', name=op.f('uq_events_table_id_boot_seq'))
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_events_received_at'), ['received_at'], unique=False)

    op.create_table('members',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('name_key', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('individual', 'collective', 'honorary')", name=op.f('ck_members_kind')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_members')),
    sa.UniqueConstraint('name', name=op.f('uq_members_name'))
    )
    with op.batch_alter_table('members', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_members_name_key'), ['name_key'], unique=False)

    op.create_table('nodes',
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('online', sa.Boolean(), nullable=False),
    sa.Column('boot', sa.String(length=64), nullable=True),
    sa.Column('version', sa.String(length=64), nullable=True),
    sa.Column('last_seen_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('online_since', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('light_on', sa.Boolean(), nullable=True),
    sa.Column('light_blink', sa.Boolean(), nullable=True),
    sa.Column('light_cause', sa.String(length=16), nullable=True),
    sa.Column('telemetry', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('telemetry_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('reconnects', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('table_id', name=op.f('pk_nodes'))
    )
    op.create_table('users',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.Column('password_hash', sa.String(length=255), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('failed_logins', sa.Integer(), nullable=False),
    sa.Column('locked_until', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint("role IN ('staff', 'manager')", name=op.f('ck_users_role')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('username', name=op.f('uq_users_username'))
    )
    op.create_table('api_tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_used_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('revoked', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['username'], ['users.username'], name=op.f('fk_api_tokens_username_users'), onupdate='CASCADE', ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_tokens_username'), ['username'], unique=False)

    op.create_table('fee_payments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('member_id', sa.Integer(), nullable=False),
    sa.Column('year', sa.Integer(), nullable=False),
    sa.Column('amount_cents', sa.Integer(), nullable=False),
    sa.Column('paid_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('recorded_by', sa.String(length=64), nullable=False),
    sa.CheckConstraint('amount_cents >= 0', name=op.f('ck_fee_payments_amount')),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_fee_payments_member_id_members'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_fee_payments')),
    sa.UniqueConstraint('member_id', 'year', name=op.f('uq_fee_payments_member_id_year'))
    )
    op.create_table('foosball_checkins',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('member_id', sa.Integer(), nullable=False),
    sa.Column('checked_in_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_goal_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('goals', sa.Integer(), nullable=False),
    sa.Column('ended_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('by', sa.String(length=8), nullable=False),
    sa.CheckConstraint("by IN ('card', 'staff')", name=op.f('ck_foosball_checkins_by')),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_foosball_checkins_member_id_members'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_foosball_checkins'))
    )
    with op.batch_alter_table('foosball_checkins', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_foosball_checkins_member_id'), ['member_id'], unique=False)
        batch_op.create_index('ix_foosball_checkins_table_id_ended_at', ['table_id', 'ended_at'], unique=False)

    op.create_table('member_cards',
    sa.Column('uid', sa.String(length=32), nullable=False),
    sa.Column('member_id', sa.Integer(), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_member_cards_member_id_members'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('uid', name=op.f('pk_member_cards'))
    )
    with op.batch_alter_table('member_cards', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_member_cards_member_id'), ['member_id'], unique=False)

    op.create_table('sessions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('started_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('stopped_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('total_cents', sa.Integer(), nullable=True),
    sa.Column('member_id', sa.Integer(), nullable=True),
    sa.CheckConstraint("state IN ('running', 'paused', 'stopped')", name=op.f('ck_sessions_state')),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_sessions_member_id_members'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sessions'))
    )
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_sessions_member_id'), ['member_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_sessions_stopped_at'), ['stopped_at'], unique=False)
        batch_op.create_index('ix_sessions_table_id_state', ['table_id', 'state'], unique=False)

    op.create_table('session_ops',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('session_id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('actor', sa.String(length=64), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['session_id'], ['sessions.id'], name=op.f('fk_session_ops_session_id_sessions'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_session_ops')),
    sa.UniqueConstraint('session_id', 'seq', name=op.f('uq_session_ops_session_id_seq'))
    )


def downgrade() -> None:
    op.drop_table('session_ops')
    op.drop_table('sessions')
    op.drop_table('member_cards')
    op.drop_table('foosball_checkins')
    op.drop_table('fee_payments')
    op.drop_table('api_tokens')
    op.drop_table('users')
    op.drop_table('nodes')
    op.drop_table('members')
    op.drop_table('events')
    op.drop_table('event_rejects')
    op.drop_table('audit_log')
    op.drop_table('alerts')
