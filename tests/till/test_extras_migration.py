"""Issue 19, item 7: migration 0012 moves every extra on a game's op log onto the game's tab.

A database made by the previous Lavos (revision 0011) holds a running game with extras (one voided),
a stopped game whose tab is paid, and a game played before the till (no tab). After the upgrade each
extra is an item of its game's tab (voided ones voided, who, when and why kept), the op log is
replayed as table time only, and each game with its tab bills what its old bill said, in sum; the
paid tab stays paid, the game before the till owes nothing. SQLite and PostgreSQL (`db_url`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.orm import Session

from broker.domain.schedule import business_day
from broker.domain.till.receipt import ReceiptLine, lines_json
from broker.domain.venue import load_venue
from broker.storage.engine import make_engine, open_store
from broker.storage.errors import StoreError
from broker.storage.migrate import alembic_config, current_revision, head_revision
from broker.storage.models import AuditEntry, Game, GameOp, Tab, TabItem
from broker.storage.types import JSONDoc, UTCDateTime
from broker.till.tabs import VoidTabItem
from tests.support.hub import VENUE
from tests.support.till_days import FakeClock, day_hub, local

LAVOS = load_venue(VENUE)
T0 = local(2026, 12, 1, 18, 0)
products_0011 = sa.table(  # the products table before 0012 (no code column yet)
    "products",
    sa.column("name", sa.String),
    sa.column("name_en", sa.String),
    sa.column("price_cents", sa.Integer),
    sa.column("vat_percent", sa.Integer),
    sa.column("category", sa.String),
    sa.column("active", sa.Boolean),
    sa.column("created_at", UTCDateTime()),
)

tabs_0011 = sa.table(  # the tabs table before 0012 and later revisions (the model has their columns)
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

sessions_0011 = sa.table(  # the sessions table before 0019 (the model has its later columns)
    "sessions",
    sa.column("id", sa.Integer),
    sa.column("table_id", sa.String),
    sa.column("state", sa.String),
    sa.column("started_at", UTCDateTime()),
    sa.column("stopped_at", UTCDateTime()),
    sa.column("total_cents", sa.Integer),
)


def _game(db: Session, **values: Any) -> SimpleNamespace:
    """A game row as the 0011 schema holds it: its id and what it was made with."""
    game_id = db.execute(sessions_0011.insert().values(**values).returning(sessions_0011.c.id)).scalar_one()
    return SimpleNamespace(id=game_id, stopped_at=values.get("stopped_at"))


payments_0011 = sa.table(  # the payments table at 0011 (the model has later revisions' columns: 0019's voucher)
    "payments",
    sa.column("id", sa.Integer),
    sa.column("tab_id", sa.Integer),
    sa.column("method", sa.String),
    sa.column("amount_cents", sa.Integer),
    sa.column("change_cents", sa.Integer),
    sa.column("staff", sa.String),
    sa.column("at", UTCDateTime()),
    sa.column("business_day", sa.Date),
    sa.column("receipt_no", sa.Integer),
    sa.column("lines", JSONDoc),
    sa.column("fiscal_state", sa.String),
    sa.column("fiscal_detail", JSONDoc),
)


@contextmanager
def _connection(url: str) -> Iterator[sa.Connection]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            yield conn
            conn.commit()
    finally:
        engine.dispose()


def _back_to_0011(url: str) -> None:
    with _connection(url) as conn:
        cfg = alembic_config()
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0011")


def _op(db: Session, game: int, seq: int, minutes: float, kind: str, data: dict[str, Any], reason: str | None = None) -> None:
    db.add(GameOp(session_id=game, seq=seq, at=T0 + timedelta(minutes=minutes), kind=kind, data=data, actor="jana", reason=reason))


def _old_hall(url: str) -> dict[str, int]:
    """What a hub before item 7 left: products seeded from the venue, extras on the games' op logs."""
    with _connection(url) as conn:
        now = T0 - timedelta(days=30)
        for name, en, cents, category in (
            ("Prísada na pizzu navyše", "Extra pizza topping", 60, "pizza_toppings"),
            ("Krabica na pizzu so sebou", "Take-away pizza box", 40, "food"),
            ("Štartovné na turnaj (nečlen)", "Tournament entry (non-member)", 500, "tournament_entry"),
        ):
            conn.execute(
                products_0011.insert().values(
                    name=name, name_en=en, price_cents=cents, vat_percent=23, category=category, active=True, created_at=now
                )
            )
        with Session(conn) as db:
            # A: running since 18:00 on Pool 1, 2 toppings (op 2) voided, a box (op 3).
            a = _game(db, table_id="pool-01", state="running", started_at=T0)
            # B: Pool 2, 18:00-19:00 (6,00 €) and a tournament entry (5,00 €): its tab paid in full by card.
            b = _game(db, table_id="pool-02", state="stopped", started_at=T0, stopped_at=T0 + timedelta(hours=1), total_cents=1100)
            # C: before the till (no tab): Pool 3, 17:00-17:30 (3,00 €) and a topping.
            c = _game(
                db,
                table_id="pool-03",
                state="stopped",
                started_at=T0 - timedelta(hours=1),
                stopped_at=T0 - timedelta(minutes=30),
                total_cents=360,
            )
            _op(db, a.id, 1, 0, "start", {"table": "pool-01", "tariff": None, "member": None, "prepaid_minutes": None})
            _op(db, a.id, 2, 5, "extra", {"extra": "topping", "quantity": 2, "unit_cents": 60})
            _op(db, a.id, 3, 6, "extra", {"extra": "pizza_box", "quantity": 1, "unit_cents": 40})
            _op(db, a.id, 4, 7, "void", {"extra_op": 2}, "zadané dvakrát")
            _op(db, b.id, 1, 0, "start", {"table": "pool-02", "tariff": None, "member": None, "prepaid_minutes": None})
            _op(db, b.id, 2, 10, "extra", {"extra": "entry_guest", "quantity": 1, "unit_cents": 500})
            _op(db, b.id, 3, 60, "stop", {})
            _op(db, c.id, 1, -60, "start", {"table": "pool-03", "tariff": None, "member": None, "prepaid_minutes": None})
            _op(db, c.id, 2, -50, "extra", {"extra": "topping", "quantity": 1, "unit_cents": 60})
            _op(db, c.id, 3, -30, "stop", {})
            day = business_day(T0, LAVOS)
            tab_a, tab_b = (
                db.execute(
                    tabs_0011.insert()
                    .values(
                        table_id=table, session_id=game.id, label="", opened_at=T0, opened_by="jana", business_day=day, settled_at=settled
                    )
                    .returning(tabs_0011.c.id)
                ).scalar_one()
                for table, game, settled in (("pool-01", a, None), ("pool-02", b, b.stopped_at))
            )
            frozen = [  # the old bill's lines, both at the venue's rate and booked as table time
                ReceiptLine("Pool 2: Štandard, 6,00 €/h, 60 min", "Pool 2", 1, None, 600, 23, "table_time"),
                ReceiptLine("Štartovné na turnaj (nečlen) 1 × 5,00 €", "Entry", 1, 500, 500, 23, "table_time"),
            ]
            at = T0 + timedelta(hours=1, minutes=5)
            db.execute(
                payments_0011.insert().values(
                    tab_id=tab_b,
                    method="card",
                    amount_cents=1100,
                    change_cents=0,
                    staff="jana",
                    at=at,
                    business_day=day,
                    receipt_no=1,
                    lines=lines_json(frozen),
                    fiscal_state="none",
                    fiscal_detail={},
                )
            )
            db.commit()
            return {"a": a.id, "b": b.id, "c": c.id, "tab_a": tab_a, "tab_b": tab_b}


def test_a_games_extras_become_items_of_its_tab_and_every_game_bills_what_it_did(db_url: str) -> None:
    _back_to_0011(db_url)
    ids = _old_hall(db_url)
    with pytest.raises(StoreError, match="venue file"):  # a CLI command cannot name the extras: it stops, changing nothing
        open_store(db_url).close()
    with _connection(db_url) as conn:
        assert current_revision(conn) == "0011"
    clock = FakeClock(T0 + timedelta(hours=1))  # 19:00: game A has run an hour (6,00 €)
    with day_hub(db_url, clock) as (hub, facade):  # the server hands the venue file to the upgrade
        reads = facade.reads
        # A, running: its bill is table time; the toppings (voided, who and why kept) and the box are on its tab.
        assert reads.floor.bill_of(reads.floor.game_state(ids["a"])).total_cents == 600
        a_items = reads.till.game_items([ids["a"]])[ids["a"]]
        assert [(i.name, i.quantity, i.unit_cents, i.vat_percent, i.category, i.added_by) for i in a_items] == [
            ("Prísada na pizzu navyše", 2, 60, 23, "pizza_toppings", "jana"),
            ("Krabica na pizzu so sebou", 1, 40, 23, "food", "jana"),
        ]
        toppings, box = a_items
        assert (toppings.voided_at, toppings.voided_by, toppings.void_reason) == (T0 + timedelta(minutes=7), "jana", "zadané dvakrát")
        assert toppings.added_at == T0 + timedelta(minutes=5) and box.voided_at is None and box.code == "pizza_box"
        assert reads.till.tab(ids["tab_a"]).total_cents == 600 + 40  # the old bill: 6,00 + 1,20 + 0,40 - 1,20
        # B: its tab says what the old bill said and stays paid; the game's stored total is its table time.
        tab_b = reads.till.tab(ids["tab_b"])
        assert (tab_b.total_cents, tab_b.paid_cents, tab_b.owed_cents, tab_b.status) == (1100, 1100, 0, "paid")
        assert {line.category for line in tab_b.bill.lines} == {"table_time", "tournament_entry"}
        # C, before the till: a tab settled at the game's stop, owing nothing to anyone.
        tab_c = reads.till.game_tab(ids["c"])
        assert reads.till.tab(tab_c).total_cents == 360 and [t.id for t in reads.till.unpaid_tabs()] == []
        with hub.store.reader() as db:
            assert {g.id: g.total_cents for g in db.scalars(sa.select(Game))} == {ids["a"]: None, ids["b"]: 600, ids["c"]: 300}
            settled = db.get(Tab, tab_c)
            assert settled is not None and settled.settled_at == T0 - timedelta(minutes=30)
            # The op logs are never changed: the extras are still there, read and ignored.
            assert db.scalar(sa.select(sa.func.count()).select_from(GameOp).where(GameOp.kind.in_(("extra", "void")))) == 5
            assert db.scalar(sa.select(sa.func.count()).select_from(TabItem)) == 4
            moved = db.scalars(sa.select(AuditEntry).where(AuditEntry.action == "tab.extras_moved")).all()
            assert sorted(e.detail["session_id"] for e in moved) == sorted((ids["a"], ids["b"], ids["c"]))
        # The products stand for the venue's extras by id now (linked at the hub's start by their names).
        assert reads.till.product_of_extra("topping").name == "Prísada na pizzu navyše"
        # The moved extras are voided by the tab's one path: the box, before any payment on A's tab.
        facade.execute(VoidTabItem(tab=ids["tab_a"], item=box.id, reason="nechceli", actor="jana"))
        assert reads.till.tab(ids["tab_a"]).total_cents == 600
    # A database stamped back re-runs the upgrade over its own work: nothing is moved twice. 0012
    # alone (the later revisions' tables are there already: running them again would fail on
    # tables that exist), then the stamp goes back to head.
    with _connection(db_url) as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '0011'"))
        cfg = alembic_config()
        cfg.attributes["connection"] = conn
        cfg.attributes["venue"] = LAVOS
        command.upgrade(cfg, "0012")
        conn.execute(sa.text("UPDATE alembic_version SET version_num = :head"), {"head": head_revision()})
    with _connection(db_url) as conn:
        assert conn.scalar(sa.select(sa.func.count()).select_from(TabItem)) == 4
