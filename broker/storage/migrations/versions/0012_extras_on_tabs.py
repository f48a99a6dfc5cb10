"""extras on tabs: one catalogue (products) for what is sold; a game's extras become its tab's items

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03

Before, a venue file's [[extras]] went on the game's op log at the venue's one VAT rate, and the
till's products on tabs with VAT per item: two catalogues that drifted apart, two void paths, two
readers in the Z report, and extras booked as table time. From now on an extra is a product
(`products.code` says which of the venue file's extras it stands for) put on the game's tab, and
the op log holds table time only.

The data: every extra op already on a game's log becomes an item of that game's tab, as it was
billed (its name from the venue file, its price, quantity, time and who added it, at the venue's
VAT rate the bill charged, the category of the product of its name); a voided one is voided with
who, when and why. The ops stay in the log (it is never changed) and the replay ignores them
(broker.domain.floor.game_ops.MOVED_TO_TAB), so a game and its tab bill what the old bill said, in sum.
A stopped game's stored total drops by its extras (they are the tab's now). A game with extras and
no tab (played before the till existed, migration 0005) gets one, settled at the game's stop: its
money was taken outside the till, so it is never listed as owed.

Names and the VAT rate come from the venue file, which only the server knows: it hands it over
(`open_store(url, venue=...)`). Without it (a CLI command on a database that has extras to move)
the upgrade stops and says so; the server's next start does it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from broker.storage.errors import StoreError
from broker.storage.types import JSONDoc, UTCDateTime

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MOVED = "tab.extras_moved"  # the audit entry of each game whose extras were moved (downgrade reads it)

sessions = sa.table(
    "sessions",
    sa.column("id", sa.Integer),
    sa.column("table_id", sa.String),
    sa.column("state", sa.String),
    sa.column("started_at", UTCDateTime()),
    sa.column("stopped_at", UTCDateTime()),
    sa.column("total_cents", sa.Integer),
)
session_ops = sa.table(
    "session_ops",
    sa.column("session_id", sa.Integer),
    sa.column("seq", sa.Integer),
    sa.column("at", UTCDateTime()),
    sa.column("kind", sa.String),
    sa.column("data", JSONDoc),
    sa.column("actor", sa.String),
    sa.column("reason", sa.Text),
)
tabs = sa.table(
    "tabs",
    sa.column("id", sa.Integer),
    sa.column("table_id", sa.String),
    sa.column("session_id", sa.Integer),
    sa.column("label", sa.String),
    sa.column("opened_at", UTCDateTime()),
    sa.column("opened_by", sa.String),
    sa.column("business_day", sa.Date),
    sa.column("settled_at", UTCDateTime()),
)
tab_items = sa.table(
    "tab_items",
    sa.column("id", sa.Integer),
    sa.column("tab_id", sa.Integer),
    sa.column("product_id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("name_en", sa.String),
    sa.column("category", sa.String),
    sa.column("unit_cents", sa.Integer),
    sa.column("vat_percent", sa.Integer),
    sa.column("quantity", sa.Integer),
    sa.column("added_at", UTCDateTime()),
    sa.column("added_by", sa.String),
    sa.column("voided_at", UTCDateTime()),
    sa.column("voided_by", sa.String),
    sa.column("void_reason", sa.Text),
)
products = sa.table("products", sa.column("id", sa.Integer), sa.column("name", sa.String), sa.column("category", sa.String))
audit_log = sa.table(
    "audit_log",
    sa.column("id", sa.Integer),
    sa.column("at", UTCDateTime()),
    sa.column("actor", sa.String),
    sa.column("action", sa.String),
    sa.column("target", sa.String),
    sa.column("detail", JSONDoc),
    sa.column("reason", sa.Text),
)


def upgrade() -> None:
    # Safe to run again over its own work (a database whose version was stamped back): the column
    # is added once, and a game whose extras were moved (its audit entry) is not moved twice.
    if 'code' not in {c['name'] for c in sa.inspect(op.get_bind()).get_columns('products')}:
        with op.batch_alter_table('products', schema=None) as batch_op:
            batch_op.add_column(sa.Column('code', sa.String(length=32), nullable=True))
            batch_op.create_unique_constraint(batch_op.f('uq_products_code'), ['code'])
    _move_extras(op.get_bind(), context.config.attributes.get("venue"))


def _move_extras(conn: sa.Connection, venue: Any) -> None:
    done = {detail["session_id"] for (detail,) in conn.execute(sa.select(audit_log.c.detail).where(audit_log.c.action == MOVED))}
    rows = [
        row
        for row in conn.execute(
            sa.select(session_ops).where(session_ops.c.kind.in_(("extra", "void"))).order_by(session_ops.c.session_id, session_ops.c.seq)
        )
        if row.session_id not in done
    ]
    if not rows:
        return
    if venue is None:
        raise StoreError(
            "this upgrade (0012) moves the games' extras onto their tabs and needs the venue file for their names and VAT rate: "
            "start `lavos server` with its --venue (it upgrades the database itself), then run this again"
        )
    from broker.domain.schedule import business_day  # the venue's day cut, as the till counts days

    now = datetime.now(UTC)
    named = {e.id: (e.name, e.name_en or e.name) for e in venue.extras}
    product_of = {name.lower(): (pid, category) for pid, name, category in conn.execute(sa.select(products))}
    by_game: dict[int, list[Any]] = {}
    for row in rows:
        by_game.setdefault(row.session_id, []).append(row)
    for game_id, game_ops in by_game.items():
        game = conn.execute(sa.select(sessions).where(sessions.c.id == game_id)).one()
        tab_id = conn.scalar(sa.select(tabs.c.id).where(tabs.c.session_id == game_id))
        made = tab_id is None
        if made:  # played before the till: its money was taken outside it, so the tab is settled at the stop
            tab_id = conn.execute(
                tabs.insert().values(
                    table_id=game.table_id,
                    session_id=game_id,
                    label="",
                    opened_at=game.started_at,
                    opened_by="system",
                    business_day=business_day(game.started_at, venue),
                    settled_at=game.stopped_at,
                ).returning(tabs.c.id)
            ).scalar_one()
        voids = {int((v.data or {}).get("extra_op", 0)): v for v in game_ops if v.kind == "void"}
        item_ids, net = [], 0
        for extra in (o for o in game_ops if o.kind == "extra"):
            data = extra.data or {}
            extra_id, quantity, unit = str(data.get("extra", "")), int(data.get("quantity", 1)), int(data.get("unit_cents", 0))
            name, name_en = named.get(extra_id, (extra_id, extra_id))  # as the old bill printed it
            product_id, category = product_of.get(name.lower(), (None, "other"))
            void = voids.get(extra.seq)
            item = conn.execute(
                tab_items.insert().values(
                    tab_id=tab_id,
                    product_id=product_id,
                    name=name,
                    name_en=name_en,
                    category=category,
                    unit_cents=unit,
                    vat_percent=venue.billing.vat_percent,  # what the game's bill charged it at
                    quantity=quantity,
                    added_at=extra.at,
                    added_by=extra.actor,
                    voided_at=void.at if void is not None else None,
                    voided_by=void.actor if void is not None else None,
                    void_reason=void.reason if void is not None else None,
                ).returning(tab_items.c.id)
            )
            item_ids.append(item.scalar_one())
            net += 0 if void is not None else quantity * unit
        total = game.total_cents
        if game.state == "stopped" and total is not None:
            # The old bill was max(0, time + extras), extras >= 0: without them it is max(0, total - extras).
            conn.execute(sessions.update().where(sessions.c.id == game_id).values(total_cents=max(0, total - net)))
        conn.execute(
            audit_log.insert().values(
                at=now,
                actor="system",
                action=MOVED,
                target=f"tab:{tab_id}",
                detail={"session_id": game_id, "item_ids": item_ids, "amount_cents": net, "tab_made": made, "total_before": total},
                reason="migration 0012: a game's extras are items of its tab",
            )
        )


def downgrade() -> None:
    conn = op.get_bind()
    for entry_id, target, detail in conn.execute(sa.select(audit_log.c.id, audit_log.c.target, audit_log.c.detail).where(audit_log.c.action == MOVED)).all():
        tab_id = int(target.split(":", 1)[1])
        conn.execute(tab_items.delete().where(tab_items.c.id.in_(detail["item_ids"])))
        conn.execute(sessions.update().where(sessions.c.id == detail["session_id"]).values(total_cents=detail["total_before"]))
        if detail["tab_made"]:
            conn.execute(tabs.delete().where(tabs.c.id == tab_id))
        conn.execute(audit_log.delete().where(audit_log.c.id == entry_id))
    with op.batch_alter_table('products', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_products_code'), type_='unique')
        batch_op.drop_column('code')
