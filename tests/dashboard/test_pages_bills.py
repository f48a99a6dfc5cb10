"""The bills page's receipts journal (a business day's receipts, to find one again and reprint the
receipt itself) and changing a bill from its page (a manager's correction; an extra is voided on
the game's tab), over a real hub: forms with CSRF, Slovak refusals that keep what was typed."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from broker.floor.games import StartGame, StopGame
from broker.hall.read_models import HallReads
from broker.till.payments import PayTab
from broker.till.tabs import AddTabItem, OpenWalkInTab
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.matching import found

if TYPE_CHECKING:
    from tests.dashboard.pages_client import Pages


pytestmark = sqlite_only  # the SQL of both backends is in test_api_bills; these test the pages


def _games(pages: Any) -> tuple[int, int, int]:
    """On 10 Nov 2026 from 18:00: Pool 1 for an hour with 2 toppings on its tab, Pool 2 from
    23:30 to 00:40 (after midnight: still the evening's), Pool 3 still running."""
    s = pages.service
    one = s.execute(StartGame(table="pool-01", actor="jana"))
    _toppings(pages, one, 2)
    pages.clock.advance(minutes=60)
    s.execute(StopGame(game=one, actor="jana"))
    pages.clock.advance(hours=4, minutes=30)  # 23:30
    two = s.execute(StartGame(table="pool-02", actor="jana"))
    three = s.execute(StartGame(table="pool-03", actor="jana"))
    pages.clock.advance(minutes=70)  # 00:40 on the 11th
    s.execute(StopGame(game=two, actor="jana"))
    return one, two, three


def _toppings(pages: Any, game: int, quantity: int) -> int:
    """Toppings on the game's tab (an extra is a product there); the item's id."""
    reads = HallReads(pages.service)
    topping = reads.till.product_of_extra("topping").id
    result: int = pages.service.execute(AddTabItem(tab=reads.till.game_tab(game), product=topping, quantity=quantity, actor="jana"))
    return result


def _rows(html: str) -> list[str]:
    """The receipt numbers of the journal, in the page's order."""
    return re.findall(r'<tr class="receipt-row[^"]*" data-payment="\d+" data-receipt="(\d+)"', html)


def _product(pages: Any, name: str) -> int:
    return next(p.id for p in HallReads(pages.service).till.products() if p.name == name)


def _owed(pages: Any, tab: int) -> int:
    view = HallReads(pages.service).till.tab_payments(tab)
    assert view is not None
    return view.owed_cents


def _evening(pages: Any) -> dict[str, int]:
    """An evening's receipts on 10 Nov 2026: Pool 1 (an hour and 2 toppings, 7,20 €) paid at 19:00 in
    cash from a 10 € note; Peter's beer at the bar paid in cash at 19:05; a sale at the bar with no
    name (a Kofola, "Bar 19:06") by card; Pool 2 from 23:30 to 00:40 (7,00 €) by card; Pool 3 still
    playing. Its payments' ids, receipt numbers 1 to 4 in that order."""
    s, reads = pages.service, HallReads(pages.service)
    one = s.execute(StartGame(table="pool-01", actor="jana"))
    _toppings(pages, one, 2)
    pages.clock.advance(minutes=60)
    s.execute(StopGame(game=one, actor="jana"))
    tab_one = reads.till.tab_of_game(one)
    assert tab_one is not None
    cash = s.execute(PayTab(tab=tab_one, method="cash", amount_cents=_owed(pages, tab_one), tendered_cents=1000, actor="jana"))
    pages.clock.advance(minutes=5)
    peter = s.execute(OpenWalkInTab(label="Peter pri bare", actor="jana"))
    s.execute(AddTabItem(tab=peter, product=_product(pages, "Pivo 0,5 l"), actor="jana"))
    beer = s.execute(PayTab(tab=peter, method="cash", amount_cents=250, actor="jana"))
    pages.clock.advance(minutes=1)
    bar = s.execute(OpenWalkInTab(actor="jana"))
    s.execute(AddTabItem(tab=bar, product=_product(pages, "Kofola 0,5 l"), actor="jana"))
    kofola = s.execute(PayTab(tab=bar, method="card", amount_cents=200, actor="jana"))
    pages.clock.advance(hours=4, minutes=24)  # 23:30
    two = s.execute(StartGame(table="pool-02", actor="jana"))
    s.execute(StartGame(table="pool-03", actor="jana"))
    pages.clock.advance(minutes=70)  # 00:40 on the 11th
    s.execute(StopGame(game=two, actor="jana"))
    tab_two = reads.till.tab_of_game(two)
    assert tab_two is not None
    card = s.execute(PayTab(tab=tab_two, method="card", amount_cents=_owed(pages, tab_two), actor="jana"))
    return {
        "one": one,
        "two": two,
        "peter": peter,
        "bar": bar,
        **{k: t.payment_id for k, t in (("cash", cash), ("beer", beer), ("kofola", kofola), ("card", card))},
    }


def test_the_journal_lists_the_days_receipts_to_find_and_reprint_the_real_receipt(pages: Pages) -> None:
    e = _evening(pages)
    html = pages.page("/bills", client=pages.staff)  # 00:40: today is still the 10th's evening
    assert "Dnešné účty" in html and "10.\u00a011.\u00a02026" in html and "Doklady" in html
    assert _rows(html) == ["4", "3", "2", "1"]  # every receipt of the day, the latest first
    row = html[html.index(f'data-payment="{e["cash"]}"') :].split("</tr>")[0]
    for text in ("č. 1", "19:00", f"Pool 1, hra č. {e['one']}", "7,20\u00a0€", "Hotovosť", "výdavok 2,80\u00a0€"):
        assert text in row, (text, row)
    # "Tlačiť" prints the receipt (its lines, the cash received, the change), not the game's bill.
    assert f'href="/receipts/{e["cash"]}?print=1"' in row and f"/sessions/{e['one']}/bill?print=1" not in html
    receipt = pages.page(f"/receipts/{e['cash']}?print=1", client=pages.staff)
    assert "Prísada na pizzu navyše" in receipt and "Prijaté" in receipt and "2,80\u00a0€" in receipt
    # Paid sales at the bar stay findable: by name, by their "Bar 19:06", by "at the bar".
    assert "Peter pri bare" in html and "Bar 19:06" in html and f'data-tab="{e["peter"]}"' not in html.split('id="journal"')[0]
    assert "19:05" in html and "Karta" in html
    assert found(r'id="receipts-total">([^<]+)<', html).group(1) == "18,70\u00a0€"  # 7,20 + 2,50 + 2,00 + 7,00
    assert _rows(pages.page("/bills?q=peter", client=pages.staff)) == ["2"]
    assert _rows(pages.page("/bills?q=bar+19%3A06", client=pages.staff)) == ["3"]
    assert _rows(pages.page("/bills?table=bar", client=pages.staff)) == ["3", "2"]
    assert _rows(pages.page("/bills?table=pool-02", client=pages.staff)) == ["4"]
    assert _rows(pages.page("/bills?q=pool+1", client=pages.staff)) == ["1"]
    assert _rows(pages.page("/bills?q=4", client=pages.staff)) == ["4"]  # a receipt's number
    assert _rows(pages.page(f"/bills?q=hra+%C4%8D.+{e['two']}", client=pages.staff)) == ["4"]  # a game's number
    assert "Hľadaniu nezodpovedá žiadny doklad." in pages.page("/bills?q=nikto", client=pages.staff)


def test_other_days_are_the_managers(pages: Pages) -> None:
    _games(pages)
    assert pages.staff.get("/bills?day=2026-11-09").status_code == 403
    html = pages.page("/bills?day=2026-11-09")
    assert "V tento deň zatiaľ nie je žiadny doklad." in html
    assert 'href="/bills?day=2026-11-10"' in html and 'href="/bills?day=2026-11-08"' in html
    today = pages.page("/bills")
    assert 'rel="next"' not in today and 'href="/bills?day=2026-11-09"' in today
    assert pages.manager.get("/bills?day=2026-11-12").status_code == 400  # not yet
    assert pages.manager.get("/bills?day=11.11.2026").status_code == 400


def test_an_extra_is_voided_on_the_games_tab_not_on_its_bill(pages: Pages) -> None:
    s = pages.service
    sid = s.execute(StartGame(table="pool-01", actor="jana"))
    _toppings(pages, sid, 2)
    pages.clock.advance(minutes=10)
    html = pages.page(f"/sessions/{sid}/bill", client=pages.staff)
    tab = HallReads(s).till.game_tab(sid)
    assert 'id="void-on-tab"' in html and f'href="/tabs/{tab}"' in html and 'id="correct-form"' not in html
    assert "Prísada na pizzu" not in html.split('id="bill-total"')[0]  # the game's bill: its table time
    assert pages.post(f"/bills/{sid}/void", {"extra_op": "2", "reason": "zadané dvakrát"}, client=pages.staff).status_code in (404, 405)


def test_the_manager_corrects_an_issued_bill_in_euros(pages: Pages) -> None:
    s = pages.service
    sid = s.execute(StartGame(table="pool-01", actor="jana"))
    pages.clock.advance(minutes=60)
    s.execute(StopGame(game=sid, actor="jana"))
    bad = pages.post(f"/bills/{sid}/correct", {"amount": "dve eurá", "reason": "stôl sa kýval"})
    assert bad.status_code == 400 and "Zadajte sumu v eurách" in bad.text and 'value="stôl sa kýval"' in bad.text
    assert pages.post(f"/bills/{sid}/correct", {"amount": "0", "reason": "stôl sa kýval"}).status_code == 400
    html = pages.follow(pages.post(f"/bills/{sid}/correct", {"amount": "-2,50", "reason": "stôl sa kýval"}))
    assert "Účet opravený." in html and "-2,50\u00a0€" in html and "3,50\u00a0€" in html and "Korekcia" in html
    assert pages.post(f"/bills/{sid}/correct", {"amount": "-1", "reason": "nope"}, client=pages.staff).status_code == 403


def test_the_bill_uses_the_bartenders_words(pages: Pages) -> None:
    s = pages.service
    sid = s.execute(StartGame(table="pool-01", actor="jana"))
    pages.clock.advance(minutes=60)
    s.execute(StopGame(game=sid, actor="jana"))
    html = pages.page(f"/sessions/{sid}/bill", client=pages.staff)
    for words in (f"Účet č. {sid}", "Základ dane (bez DPH)", "Spolu na úhradu", "Vystavené"):
        assert words in html, words
    assert "Bez DPH" not in html and "Vytlačené" not in html
    pages.post("/lang", {"lang": "en", "next": "/"}, client=pages.staff)
    en = pages.page(f"/sessions/{sid}/bill", client=pages.staff)
    for words in (f"Bill no. {sid}", "Tax base (without VAT)", "Total to pay", "Issued"):
        assert words in en, words


def test_pages_day_boundary_is_six_in_the_morning(pages: Pages) -> None:
    _evening(pages)
    pages.clock.advance(hours=5, minutes=20)  # 06:00 on the 11th: a new business day
    html = pages.page("/bills", client=pages.staff)
    assert _rows(html) == [] and "11.\u00a011.\u00a02026" in html
    assert _rows(pages.page("/bills?day=2026-11-10", client=pages.staff)) == ["4", "3", "2", "1"]  # an unclosed day: still at hand
