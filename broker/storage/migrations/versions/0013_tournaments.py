"""tournaments: the Lavosliga's tournaments, entrants, results and table calls (issue 21)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06

A tournament keeps its rules, its tables, fees and payouts, and its draw (seed and order, stored
the first time it is drawn, so a second draw gives the same bracket); entrants are members or
walk-ins by name (a pair: two of them); a result is voided and replaced by a correction, never
deleted; a call is a match on a table with its game (the light, the tournament's table time).
The bracket itself is not stored: it is worked out from the draw and the results
(broker/domain/tournaments/progress.py). New tables only: nothing existing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import broker.storage.types

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('tournaments',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=120), nullable=False),
    sa.Column('starts_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('league_group', sa.String(length=8), nullable=False),
    sa.Column('discipline', sa.String(length=16), nullable=False),
    sa.Column('format', sa.String(length=16), nullable=False),
    sa.Column('race_winners', sa.Integer(), nullable=False),
    sa.Column('race_losers', sa.Integer(), nullable=False),
    sa.Column('race_final', sa.Integer(), nullable=False),
    sa.Column('break_rule', sa.String(length=16), nullable=False),
    sa.Column('grand_final_reset', sa.Boolean(), nullable=False),
    sa.Column('group_size', sa.Integer(), nullable=False),
    sa.Column('advance', sa.Integer(), nullable=False),
    sa.Column('swiss_rounds', sa.Integer(), nullable=True),
    sa.Column('shot_clock_s', sa.Integer(), nullable=True),
    sa.Column('pairs', sa.Boolean(), nullable=False),
    sa.Column('seeding', sa.String(length=8), nullable=False),
    sa.Column('fee_member_product_id', sa.Integer(), nullable=True),
    sa.Column('fee_guest_product_id', sa.Integer(), nullable=True),
    sa.Column('club_share_percent', sa.Integer(), nullable=False),
    sa.Column('tariff', sa.String(length=32), nullable=True),
    sa.Column('options', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('draw_seed', sa.BigInteger(), nullable=True),
    sa.Column('draw_order', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('drawn_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('drawn_by', sa.String(length=64), nullable=True),
    sa.Column('finished_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('tv_token_hash', sa.String(length=64), nullable=True),
    sa.Column('created_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=64), nullable=False),
    sa.CheckConstraint("league_group IN ('', 'I', 'II')", name=op.f('ck_tournaments_league_group')),
    sa.CheckConstraint("seeding IN ('random', 'seeded')", name=op.f('ck_tournaments_seeding')),
    sa.CheckConstraint('club_share_percent BETWEEN 0 AND 100', name=op.f('ck_tournaments_club_share')),
    sa.ForeignKeyConstraint(['fee_guest_product_id'], ['products.id'], name=op.f('fk_tournaments_fee_guest_product_id_products'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['fee_member_product_id'], ['products.id'], name=op.f('fk_tournaments_fee_member_product_id_products'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tournaments')),
    sa.UniqueConstraint('tv_token_hash', name=op.f('uq_tournaments_tv_token_hash'))
    )
    op.create_index(op.f('ix_tournaments_starts_at'), 'tournaments', ['starts_at'], unique=False)
    op.create_table('tournament_entrants',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tournament_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('member_id', sa.Integer(), nullable=True),
    sa.Column('name2', sa.String(length=200), nullable=False),
    sa.Column('member2_id', sa.Integer(), nullable=True),
    sa.Column('handicap', sa.Integer(), nullable=False),
    sa.Column('fee_tab_id', sa.Integer(), nullable=True),
    sa.Column('checked_in_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('checked_in_by', sa.String(length=64), nullable=True),
    sa.Column('added_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('added_by', sa.String(length=64), nullable=False),
    sa.Column('removed_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('removed_by', sa.String(length=64), nullable=True),
    sa.ForeignKeyConstraint(['fee_tab_id'], ['tabs.id'], name=op.f('fk_tournament_entrants_fee_tab_id_tabs'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['member2_id'], ['members.id'], name=op.f('fk_tournament_entrants_member2_id_members'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['member_id'], ['members.id'], name=op.f('fk_tournament_entrants_member_id_members'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['tournament_id'], ['tournaments.id'], name=op.f('fk_tournament_entrants_tournament_id_tournaments'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tournament_entrants'))
    )
    op.create_index('ix_tournament_entrants_tournament_id', 'tournament_entrants', ['tournament_id'], unique=False)
    op.create_table('tournament_calls',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tournament_id', sa.Integer(), nullable=False),
    sa.Column('match', sa.String(length=16), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=False),
    sa.Column('game_id', sa.Integer(), nullable=True),
    sa.Column('a', sa.Integer(), nullable=False),
    sa.Column('b', sa.Integer(), nullable=False),
    sa.Column('called_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('called_by', sa.String(length=64), nullable=False),
    sa.Column('started_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('score_a', sa.Integer(), nullable=False),
    sa.Column('score_b', sa.Integer(), nullable=False),
    sa.Column('walkover_offered_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('ended_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('end_reason', sa.String(length=16), nullable=True),
    sa.ForeignKeyConstraint(['a'], ['tournament_entrants.id'], name=op.f('fk_tournament_calls_a_tournament_entrants'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['b'], ['tournament_entrants.id'], name=op.f('fk_tournament_calls_b_tournament_entrants'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['game_id'], ['sessions.id'], name=op.f('fk_tournament_calls_game_id_sessions'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['tournament_id'], ['tournaments.id'], name=op.f('fk_tournament_calls_tournament_id_tournaments'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tournament_calls'))
    )
    op.create_index(op.f('ix_tournament_calls_game_id'), 'tournament_calls', ['game_id'], unique=False)
    op.create_index('ix_tournament_calls_tournament_id', 'tournament_calls', ['tournament_id'], unique=False)
    op.create_index('uq_tournament_calls_live_match', 'tournament_calls', ['tournament_id', 'match'], unique=True, sqlite_where=sa.text('ended_at IS NULL'), postgresql_where=sa.text('ended_at IS NULL'))
    op.create_index('uq_tournament_calls_live_table', 'tournament_calls', ['table_id'], unique=True, sqlite_where=sa.text('ended_at IS NULL'), postgresql_where=sa.text('ended_at IS NULL'))
    op.create_table('tournament_results',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('tournament_id', sa.Integer(), nullable=False),
    sa.Column('match', sa.String(length=16), nullable=False),
    sa.Column('a', sa.Integer(), nullable=False),
    sa.Column('b', sa.Integer(), nullable=False),
    sa.Column('score_a', sa.Integer(), nullable=False),
    sa.Column('score_b', sa.Integer(), nullable=False),
    sa.Column('walkover', sa.Boolean(), nullable=False),
    sa.Column('table_id', sa.String(length=32), nullable=True),
    sa.Column('finished_at', broker.storage.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('entered_by', sa.String(length=64), nullable=False),
    sa.Column('voided_at', broker.storage.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('voided_by', sa.String(length=64), nullable=True),
    sa.Column('void_reason', sa.Text(), nullable=True),
    sa.CheckConstraint('score_a >= 0 AND score_b >= 0', name=op.f('ck_tournament_results_scores')),
    sa.ForeignKeyConstraint(['a'], ['tournament_entrants.id'], name=op.f('fk_tournament_results_a_tournament_entrants'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['b'], ['tournament_entrants.id'], name=op.f('fk_tournament_results_b_tournament_entrants'), ondelete='RESTRICT'),
    sa.ForeignKeyConstraint(['tournament_id'], ['tournaments.id'], name=op.f('fk_tournament_results_tournament_id_tournaments'), ondelete='RESTRICT'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tournament_results'))
    )
    op.create_index('uq_tournament_results_live', 'tournament_results', ['tournament_id', 'match'], unique=True, sqlite_where=sa.text('voided_at IS NULL'), postgresql_where=sa.text('voided_at IS NULL'))


def downgrade() -> None:
    op.drop_index('uq_tournament_results_live', table_name='tournament_results', sqlite_where=sa.text('voided_at IS NULL'), postgresql_where=sa.text('voided_at IS NULL'))
    op.drop_table('tournament_results')
    op.drop_index('uq_tournament_calls_live_table', table_name='tournament_calls', sqlite_where=sa.text('ended_at IS NULL'), postgresql_where=sa.text('ended_at IS NULL'))
    op.drop_index('uq_tournament_calls_live_match', table_name='tournament_calls', sqlite_where=sa.text('ended_at IS NULL'), postgresql_where=sa.text('ended_at IS NULL'))
    op.drop_index('ix_tournament_calls_tournament_id', table_name='tournament_calls')
    op.drop_index(op.f('ix_tournament_calls_game_id'), table_name='tournament_calls')
    op.drop_table('tournament_calls')
    op.drop_index('ix_tournament_entrants_tournament_id', table_name='tournament_entrants')
    op.drop_table('tournament_entrants')
    op.drop_index(op.f('ix_tournaments_starts_at'), table_name='tournaments')
    op.drop_table('tournaments')
