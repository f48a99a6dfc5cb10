"""server-side dashboard sessions, and the forced password change

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01

web_sessions makes a dashboard login revocable (logout, password change, disabling, role
change end it on the server, not only in the browser); users.must_change_password is set
when a manager hands out a password.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import broker.storage.types

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('web_sessions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('id_hash', sa.String(length=64), nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('expires_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('client', sa.String(length=64), nullable=False),
    sa.Column('user_agent', sa.String(length=200), nullable=False),
    sa.Column('ended_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('ended_by', sa.String(length=64), nullable=True),
    sa.Column('end_reason', sa.String(length=32), nullable=True),
    sa.ForeignKeyConstraint(['username'], ['users.username'], name=op.f('fk_web_sessions_username_users'), onupdate='CASCADE', ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_web_sessions')),
    sa.UniqueConstraint('id_hash', name=op.f('uq_web_sessions_id_hash'))
    )
    op.create_index('ix_web_sessions_username_ended_at', 'web_sessions', ['username', 'ended_at'], unique=False)
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('must_change_password', sa.Boolean(), server_default=sa.text('false'), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('must_change_password')
    op.drop_index('ix_web_sessions_username_ended_at', table_name='web_sessions')
    op.drop_table('web_sessions')
