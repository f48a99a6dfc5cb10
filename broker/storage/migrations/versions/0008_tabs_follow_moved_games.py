"""tabs follow moved games: a moved game's tab names the table the game is on

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03

A game's tab kept the table its game started on, so after a move its page, its pay page, its
receipt and the floor named the table the game had left (and linked it, free by then). The hub now
moves the tab with its game (Till.game_moved); this puts the tabs of games moved before that on
their game's table. Nothing is lost: where a game was and when is in its op log, and a receipt
names the table of its own moment from there (broker.till.payment_reads). There is nothing
to undo on downgrade (the old code reads the new values as well as the old ones).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_GAME_TABLE = "(SELECT sessions.table_id FROM sessions WHERE sessions.id = tabs.session_id)"


def upgrade() -> None:
    op.execute(f"UPDATE tabs SET table_id = {_GAME_TABLE} WHERE session_id IS NOT NULL AND table_id <> {_GAME_TABLE}")


def downgrade() -> None:
    pass
