"""A game's tab follows its game (issue 19, items 11 and 14), over the real hub and pages, on SQLite
and PostgreSQL: a moved game's tab, pay page, receipt, bills list and floor card name the table it
moved to (a receipt printed before the move keeps the table it was printed at); two tables still
playing merge into one tab, each floor card says the tab is shared and what still runs on it, and
the party pays once when both games are over."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from alembic import command
from sqlalchemy import create_engine, select, text, update

from broker.floor.games import StartGame
from broker.hall.facade import HubFacade
from broker.storage import migrate
from broker.storage.models import Product, Tab
from broker.till.tabs import AddTabItem
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import on_writer
from tests.support.matching import found

if TYPE_CHECKING:
    from tests.dashboard.pages_client import Pages


STAFF = "jana"


def _tab_of(pages: Any, sid: int) -> int:
    with pages.service.store.reader() as db:
        result: int = db.scalars(select(Tab.id).where(Tab.session_id == sid)).one()
        return result


def _beer(pages: Any) -> int:
    with pages.service.store.reader() as db:
        result: int = db.scalars(select(Product.id).where(Product.name == "Pivo 0,5 l")).one()
        return result


def _text(html: str) -> str:
    """The page as words (tags gone, spaces squeezed), to read what staff read."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("\u00a0", " ")


def _card(pages: Any, table: str) -> str:
    result: str = pages.page(f"/tables/{table}/card", client=pages.staff)
    return result


def _receipt_id(pages: Any, r: Any) -> int:
    assert r.status_code == 303, r.text[:2000]
    return int(found(r"/receipts/(\d+)", r.headers["location"]).group(1))


def _pay_card(pages: Any, tab: int, euros: str) -> int:
    html = pages.page(f"/tabs/{tab}/pay", client=pages.staff)
    key = found(r'name="request_id" value="([^"]+)"', html).group(1)
    return _receipt_id(
        pages, pages.post(f"/tabs/{tab}/pay", {"method": "card", "amount": euros, "part": "", "request_id": key}, client=pages.staff)
    )


def test_a_moved_games_tab_names_the_table_it_moved_to_everywhere(pages: Pages) -> None:
    sid = pages.service.execute(StartGame(table="pool-01", actor=STAFF))
    tab = _tab_of(pages, sid)
    pages.service.execute(AddTabItem(tab=tab, product=_beer(pages), quantity=2, actor=STAFF))
    before_move = _pay_card(pages, tab, "1,00")  # a receipt printed at Pool 1
    pages.clock.advance(minutes=20)
    r = pages.post(f"/sessions/{sid}/transfer", {"table": "pool-05", "next": "/tables/pool-01"}, client=pages.staff)
    assert r.status_code == 303
    pages.clock.advance(minutes=10)

    page = _text(pages.page(f"/tabs/{tab}", client=pages.staff))
    assert f"Pool 5, hra č. {sid}" in page and "Pool 1," not in page, page[:600]
    assert 'href="/tables/pool-05"' in pages.page(f"/tabs/{tab}", client=pages.staff)
    assert "Platba: Pool 5" in _text(pages.page(f"/tabs/{tab}/pay", client=pages.staff))
    after_move = _pay_card(pages, tab, "1,00")
    assert "Pool 5" in _text(pages.page(f"/receipts/{after_move}", client=pages.staff))
    printed_before = _text(pages.page(f"/receipts/{before_move}", client=pages.staff))
    assert "Pool 1" in printed_before and "Pool 5" not in printed_before  # as it was printed

    pages.post(f"/sessions/{sid}/stop", {"next": "/tables/pool-05"}, client=pages.staff)
    assert f'data-tab="{tab}"' in _card(pages, "pool-05")  # the floor card of the table the party left from is free
    assert "data-tab=" not in _card(pages, "pool-01")
    bills = _text(pages.page("/bills", client=pages.staff))
    assert f"Pool 5, hra č. {sid}" in bills and f"Pool 1, hra č. {sid}" not in bills
    assert pages.page("/tables/pool-01", client=pages.staff).count(f"/tabs/{tab}") == 0


def test_the_migration_moves_the_tabs_of_games_moved_before_it(pages: Pages) -> None:
    sid = pages.service.execute(StartGame(table="pool-02", actor=STAFF))
    tab = _tab_of(pages, sid)
    pages.post(f"/sessions/{sid}/transfer", {"table": "pool-06", "next": "/"}, client=pages.staff)
    # The rows as the hub before the fix left them: the tab on the table the game started on.
    on_writer(pages.service, lambda db: db.execute(update(Tab).where(Tab.id == tab).values(table_id="pool-02")))
    # Run 0008 alone on the database, as stamped before it (the later revisions' tables are there
    # already: running them again would fail on tables that exist), then put the stamp back.
    head = migrate.head_revision()
    on_writer(pages.service, lambda db: db.execute(text("UPDATE alembic_version SET version_num = '0007'")))
    engine = create_engine(pages.service.store.url)
    try:
        with engine.begin() as conn:
            cfg = migrate.alembic_config()
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "0008")
            conn.execute(text("UPDATE alembic_version SET version_num = :head"), {"head": head})
        with engine.connect() as conn:
            assert conn.scalars(select(Tab.table_id).where(Tab.id == tab)).one() == "pool-06"
    finally:
        engine.dispose()


def test_two_tables_still_playing_merge_and_the_party_pays_once(pages: Pages) -> None:
    one = pages.service.execute(StartGame(table="pool-01", actor=STAFF))
    two = pages.service.execute(StartGame(table="pool-02", actor=STAFF))
    tab_one, tab_two = _tab_of(pages, one), _tab_of(pages, two)
    pages.clock.advance(minutes=30)

    # The tab page offers the other table's running game to merge, and merging works.
    html = pages.page(f"/tabs/{tab_one}", client=pages.staff)
    merge_form = html[html.index('id="tab-merge"') :]
    assert f'<option value="{tab_two}"' in merge_form[: merge_form.index("</section>")], "a running game's tab is not offered for merging"
    r = pages.post(f"/tabs/{tab_one}/merge", {"other": str(tab_two)}, client=pages.staff)
    assert r.status_code == 303, _text(r.text)[:800]

    # Both cards say the tab is shared and what still runs on it.
    for table, other in (("pool-01", "Pool 2"), ("pool-02", "Pool 1")):
        card = _text(_card(pages, table))
        assert f"Spoločný účet s {other}" in card and "Ešte sa hrá: Pool 1, Pool 2" in card, (table, card)
    # Drinks from the second table go onto the shared tab.
    assert f'action="/tabs/{tab_one}/items"' in pages.page("/tables/pool-02", client=pages.staff)

    pages.post(f"/sessions/{two}/stop", {"next": "/tables/pool-02"}, client=pages.staff)  # its time goes onto the shared tab
    card = _text(_card(pages, "pool-02"))
    assert "Spoločný účet s Pool 1" in card and "Ešte sa hrá: Pool 1" in card and "Pool 1, Pool 2" not in card, card
    pages.clock.advance(minutes=30)
    pages.post(f"/sessions/{one}/stop", {"next": "/tables/pool-01"}, client=pages.staff)
    assert "Ešte sa hrá" not in _text(_card(pages, "pool-01"))
    assert "9,00 €" in _text(pages.page(f"/tabs/{tab_one}", client=pages.staff))  # 60 min on Pool 1 and 30 on Pool 2 at 6,00 €/h
    _pay_card(pages, tab_one, "9,00")
    assert HubFacade(pages.service).reads.till.tab(tab_one).status == "paid"
    assert "data-tab=" not in _card(pages, "pool-01") and "data-tab=" not in _card(pages, "pool-02")
