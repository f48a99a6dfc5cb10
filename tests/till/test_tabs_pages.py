"""The tab pages over a real hub, as a browser's forms send them (CSRF, cookies): product buttons,
a double-tapped form is one item, a void with a reason, refusals in Slovak in place with what was
typed kept, a walk-in tab, merge, split, the product list, the unpaid list and the floor badge."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from broker.bookings.bookings import BookTable
from broker.floor.games import StartGame, StopGame
from broker.storage.models import Booking, Product, Tab, TabItem
from broker.till.tabs import OpenWalkInTab
from broker.tournaments.setup import AddEntrant, CreateTournament
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.matching import found, some

if TYPE_CHECKING:
    from tests.dashboard.pages_client import Pages


pytestmark = sqlite_only  # the SQL of both backends is in test_tabs_api; these test the pages


def _product_id(pages: Any, name: str) -> int:
    with pages.service.store.reader() as db:
        result: int = db.scalars(select(Product.id).where(Product.name == name)).one()
        return result


def _items(pages: Any) -> list[tuple[Any, ...]]:
    with pages.service.store.reader() as db:
        return [(i.id, i.tab_id, i.name, i.quantity, i.voided_at, i.void_reason) for i in db.scalars(select(TabItem).order_by(TabItem.id))]


def _staff_follow(pages: Any, r: Any) -> str:
    """The page a staff user's POST redirected to, seen by that user (with its flash message)."""
    assert r.status_code == 303, f"{r.status_code} {r.text[:2000]}"
    result: str = pages.page(r.headers["location"], client=pages.staff)
    return result


def _game_tab(pages: Any, table: str = "pool-01") -> tuple[int, int]:
    sid = pages.service.execute(StartGame(table=table, actor="jana"))
    with pages.service.store.reader() as db:
        return sid, db.scalars(select(Tab.id).where(Tab.session_id == sid)).one()


def test_the_table_page_puts_products_on_the_games_tab_and_a_double_tap_is_one_item(pages: Pages) -> None:
    _sid, tab = _game_tab(pages)
    html = pages.page("/tables/pool-01", client=pages.staff)
    assert ("Na účet stola" in html and "Pivo 0,5\u00a0l" in html) or "Pivo 0,5 l" in html
    beer = _product_id(pages, "Pivo 0,5 l")
    key = found(
        rf'name="product_id" value="{beer}"><input type="hidden" name="quantity" value="1">\s*<input type="hidden" name="form_key" value="(\w+)"',
        html,
    ).group(1)
    form = {"product_id": str(beer), "quantity": "1", "form_key": key, "next": "/tables/pool-01"}
    first = pages.post(f"/tabs/{tab}/items", form, client=pages.staff)
    again = pages.post(f"/tabs/{tab}/items", form, client=pages.staff)
    assert first.status_code == again.status_code == 303 and first.headers["location"] == "/tables/pool-01"
    assert [(i[2], i[3]) for i in _items(pages)] == [("Pivo 0,5 l", 1)]
    html = _staff_follow(pages, pages.post(f"/tabs/{tab}/items", {**form, "form_key": "other1234"}, client=pages.staff))
    assert "Pridané: 1 × Pivo" in html, re.findall(r"flash-.*", html)
    assert len(_items(pages)) == 2


def test_a_void_needs_a_reason_and_the_tab_page_shows_it_struck_through(pages: Pages) -> None:
    _, tab = _game_tab(pages)
    beer = _product_id(pages, "Pivo 0,5 l")
    pages.post(f"/tabs/{tab}/items", {"product_id": str(beer), "quantity": "2"}, client=pages.staff)
    item = _items(pages)[0][0]
    before = _items(pages)
    r = pages.post(f"/tabs/{tab}/items/{item}/void", {"reason": "x"}, client=pages.staff)
    assert r.status_code == 409 and "Napíšte, prečo" in r.text and 'id="tab-error"' in r.text
    assert _items(pages) == before
    html = _staff_follow(pages, pages.post(f"/tabs/{tab}/items/{item}/void", {"reason": "zadané omylom"}, client=pages.staff))
    assert "Položka stornovaná" in html and "zadané omylom" in html and "voided" in html
    assert "Základ dane (bez DPH)" in html and 'id="pay" href="/tabs/' in html


def test_bad_quantities_on_the_tab_page_keep_what_was_typed_and_change_nothing(pages: Pages) -> None:
    _, tab = _game_tab(pages)
    beer = _product_id(pages, "Pivo 0,5 l")
    for bad in ("0", "-1", "1,5", "abc", "100", "99999999999999"):
        r = pages.post(f"/tabs/{tab}/items", {"product_id": str(beer), "quantity": bad}, client=pages.staff)
        assert r.status_code == 400 and "Množstvo je celé číslo od 1 do 99" in r.text, bad
        assert f'value="{bad}"' in r.text
    assert _items(pages) == []


def test_a_walk_in_tab_from_the_bills_page_merged_onto_a_table_then_split_in_two(pages: Pages) -> None:
    sid, tab = _game_tab(pages)
    html = pages.page("/bills", client=pages.staff)
    key = found(r'name="form_key" value="(\w+)"', html).group(1)
    r = pages.post("/tabs", {"label": "Peter pri bare", "form_key": key}, client=pages.staff)
    again = pages.post("/tabs", {"label": "Peter pri bare", "form_key": key}, client=pages.staff)
    assert r.headers["location"] == again.headers["location"]  # a double tap opens one tab
    walk = int(r.headers["location"].rsplit("/", 1)[1])
    pages.post(f"/tabs/{walk}/items", {"product_id": str(_product_id(pages, "Kofola 0,5 l")), "quantity": "2"}, client=pages.staff)
    assert "Peter pri bare" in pages.page("/bills", client=pages.staff)
    pages.clock.advance(minutes=30)
    html = _staff_follow(pages, pages.post(f"/tabs/{tab}/merge", {"other": str(walk)}, client=pages.staff))
    assert "Z účtu Peter pri bare" in html
    assert "Zlúčené do účtu" in pages.page(f"/tabs/{walk}", client=pages.staff)
    r = pages.post(f"/tabs/{tab}/split", {"mode": "equal", "parts": "2"}, client=pages.staff)
    assert r.status_code == 409 and "ešte hrá" in r.text
    pages.service.execute(StopGame(game=sid, actor="jana"))
    html = _staff_follow(pages, pages.post(f"/tabs/{tab}/split", {"mode": "equal", "parts": "2"}, client=pages.staff))
    assert "Rozdelené na 2 časti" in html and "prvé časti dostanú cent navyše" in html
    r = pages.post(f"/tabs/{tab}/split", {"mode": "amounts", "amounts": "1,00 2,00"}, client=pages.staff)
    assert (r.status_code == 409 and "Účet je rozdelený" in r.text) or "rozdelen" in r.text


def test_the_product_list_is_the_managers(pages: Pages) -> None:
    pages.refused_to_others("GET", "/products")
    html = pages.page("/products")
    assert "Prísada na pizzu navyše" in html
    r = pages.post("/products", {"name": "Tatranský čaj", "name_en": "Tatra tea", "price": "-1", "vat": "23", "category": "drinks"})
    assert r.status_code == 400 and 'value="Tatranský čaj"' in r.text
    html = pages.follow(
        pages.post("/products", {"name": "Tatranský čaj", "name_en": "Tatra tea", "price": "3,20", "vat": "23", "category": "drinks"})
    )
    assert "Tatranský čaj" in html
    pid = _product_id(pages, "Tatranský čaj")
    pages.follow(
        pages.post(
            f"/products/{pid}", {"name": "Tatranský čaj", "name_en": "Tatra tea", "price": "3,50", "vat": "19", "category": "drinks"}
        )
    )
    with pages.service.store.reader() as db:
        p = db.get(Product, pid)
        assert p is not None
        assert (p.price_cents, p.vat_percent, p.active) == (350, 19, False)


def test_a_free_tables_card_shows_its_last_games_unpaid_tab(pages: Pages) -> None:
    sid, tab = _game_tab(pages)
    pages.clock.advance(minutes=30)
    pages.service.execute(StopGame(game=sid, actor="jana"))
    card = pages.page("/tables/pool-01/card", client=pages.staff)
    assert "nezaplatené" in card and f'data-tab="{tab}"' in card
    assert f'href="/tabs/{tab}"' in pages.page("/tables/pool-01", client=pages.staff)


def test_split_by_items_on_the_page_and_a_form_for_another_tabs_lines_is_refused(pages: Pages) -> None:
    sid, tab = _game_tab(pages)
    for name in ("Pivo 0,5 l", "Kofola 0,5 l"):
        pages.post(f"/tabs/{tab}/items", {"product_id": str(_product_id(pages, name)), "quantity": "1"}, client=pages.staff)
    pages.clock.advance(minutes=20)
    pages.service.execute(StopGame(game=sid, actor="jana"))
    html = pages.page(f"/tabs/{tab}", client=pages.staff)
    keys = re.findall(r'name="part-([\w:]+)"', html)
    assert len(keys) == 3  # the time line and the two drinks
    with pages.service.store.reader() as db:
        before = some(db.get(Tab, tab)).split
    r = pages.post(f"/tabs/{tab}/split", {"mode": "items", **{f"part-{k}": "1" for k in keys}, "part-item:999": "2"}, client=pages.staff)
    assert r.status_code == 409 and "Každú položku účtu dajte do niektorej časti" in r.text
    r = pages.post(f"/tabs/{tab}/split", {"mode": "items", **{f"part-{k}": "x" for k in keys}}, client=pages.staff)
    assert r.status_code == 400
    with pages.service.store.reader() as db:
        assert some(db.get(Tab, tab)).split == before is None
    parts = {f"part-{k}": ("1" if n == 0 else "2") for n, k in enumerate(keys)}
    html = _staff_follow(pages, pages.post(f"/tabs/{tab}/split", {"mode": "items", **parts}, client=pages.staff))
    assert "Rozdelené na 2 časti" in html
    with pages.service.store.reader() as db:
        split = some(db.get(Tab, tab)).split
        assert split is not None
    assert split["mode"] == "items" and [p["keys"] for p in split["parts"]] == [keys[:1], keys[1:]]
    assert "Rozdelenie zrušené" in _staff_follow(pages, pages.post(f"/tabs/{tab}/split/cancel", {}, client=pages.staff))


def test_a_fee_tab_and_a_deposit_tab_offer_only_what_they_hold_and_no_merge(pages: Pages) -> None:
    """Issue 29's independent check: a tournament fee tab's page offered the whole product list,
    each a one-tap button refused (409) when tapped. A tab for one thing (`Tab.holds`) offers what
    the till's rule lets on it (the entry fees; nothing on a deposit's tab), and no merge (it is
    merged with no tab, either way: nor is it offered on another tab's merge)."""
    hub = pages.service
    tid = hub.execute(CreateTournament(name="Lavosliga", starts_at=pages.clock(), tables=("pool-09",), actor="boss"))
    fee = hub.execute(AddEntrant(tournament=tid, name="Kováč", check_in=True, actor="jana"))
    with hub.store.reader() as db:
        fee_tab = db.scalars(select(Tab.id).where(Tab.holds == "tournament_entry")).one()
        fees = {p.id for p in db.scalars(select(Product).where(Product.category == "tournament_entry", Product.active))}
        everything = {p.id for p in db.scalars(select(Product).where(Product.active))}
    assert fee and fees and everything - fees
    html = pages.page(f"/tabs/{fee_tab}", client=pages.staff)
    assert {int(p) for p in re.findall(r'data-product="(\d+)"', html)} == fees
    assert 'id="tab-merge"' not in html
    start = pages.clock() + timedelta(hours=3)
    booking = hub.execute(
        BookTable(
            table="pool-10", start=start, end=start + timedelta(hours=2), party_size=2, name="Opatrný", deposit_cents=1000, actor="jana"
        )
    )
    with hub.store.reader() as db:
        deposit = db.scalars(select(Booking.deposit_tab_id).where(Booking.id == booking)).one()
    html = pages.page(f"/tabs/{deposit}", client=pages.staff)
    assert 'id="tab-add"' not in html and "data-product=" not in html and 'id="tab-merge"' not in html
    bar = hub.execute(OpenWalkInTab(label="Bar", actor="jana"))
    merge = pages.page(f"/tabs/{bar}", client=pages.staff).split('id="tab-merge"')[1].split("</section>")[0]
    assert f'value="{fee_tab}"' not in merge and f'value="{deposit}"' not in merge
