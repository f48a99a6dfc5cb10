"""The bill list (today's business day, to find a bill again and reprint it) and changing a bill from
its page (a manager's correction; an extra is voided on the game's tab), over a real hub: forms with
CSRF, Slovak refusals that keep what was typed."""

from __future__ import annotations

import re

from broker.hall.games import StartGame, StopGame
from broker.hall.read_models import HallReads
from broker.hall.till.tabs import AddTabItem
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture

pytestmark = sqlite_only  # the SQL of both backends is in test_api_bills; these test the pages


def _games(pages) -> tuple[int, int, int]:
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


def _toppings(pages, game: int, quantity: int) -> int:
    """Toppings on the game's tab (an extra is a product there); the item's id."""
    reads = HallReads(pages.service)
    topping = reads.product_of_extra("topping").id
    return pages.service.execute(AddTabItem(tab=reads.game_tab(game), product=topping, quantity=quantity, actor="jana"))


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr class="bill-row" data-session="(\d+)"', html)


def test_todays_bills_are_the_business_days_latest_first(pages):
    one, two, _three = _games(pages)
    html = pages.page("/bills", client=pages.staff)  # 00:40: today is still the 10th's evening
    assert "Dnešné účty" in html and "10.\u00a011.\u00a02026" in html
    assert _rows(html) == [str(two), str(one)]  # stopped ones only, the latest first
    assert f"Účet č. {one}" in html and "Pool 1" in html and "pool-01" not in html.split("<main")[1].split("<select")[0]
    assert f'href="/sessions/{one}/bill?print=1"' in html and "13,00\u00a0€" in html  # 6,00 + 7,00, both games' bills
    assert "23:30 – 00:40" in html
    assert _rows(pages.page("/bills?table=pool-02", client=pages.staff)) == [str(two)]
    assert _rows(pages.page("/bills?q=pool+1", client=pages.staff)) == [str(one)]
    assert "Hľadaniu nezodpovedá žiadny účet." in pages.page("/bills?q=nikto", client=pages.staff)


def test_other_days_are_the_managers(pages):
    _games(pages)
    assert pages.staff.get("/bills?day=2026-11-09").status_code == 403
    html = pages.page("/bills?day=2026-11-09")
    assert "V tento deň zatiaľ nebol vystavený žiadny účet." in html
    assert 'href="/bills?day=2026-11-10"' in html and 'href="/bills?day=2026-11-08"' in html
    today = pages.page("/bills")
    assert 'rel="next"' not in today and 'href="/bills?day=2026-11-09"' in today
    assert pages.manager.get("/bills?day=2026-11-12").status_code == 400  # not yet
    assert pages.manager.get("/bills?day=11.11.2026").status_code == 400


def test_an_extra_is_voided_on_the_games_tab_not_on_its_bill(pages):
    s = pages.service
    sid = s.execute(StartGame(table="pool-01", actor="jana"))
    _toppings(pages, sid, 2)
    pages.clock.advance(minutes=10)
    html = pages.page(f"/sessions/{sid}/bill", client=pages.staff)
    tab = HallReads(s).game_tab(sid)
    assert 'id="void-on-tab"' in html and f'href="/tabs/{tab}"' in html and 'id="correct-form"' not in html
    assert "Prísada na pizzu" not in html.split('id="bill-total"')[0]  # the game's bill: its table time
    assert pages.post(f"/bills/{sid}/void", {"extra_op": "2", "reason": "zadané dvakrát"}, client=pages.staff).status_code in (404, 405)


def test_the_manager_corrects_an_issued_bill_in_euros(pages):
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


def test_the_bill_uses_the_bartenders_words(pages):
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


def test_pages_day_boundary_is_six_in_the_morning(pages):
    _games(pages)
    pages.clock.advance(hours=5, minutes=20)  # 06:00 on the 11th: a new business day
    html = pages.page("/bills", client=pages.staff)
    assert _rows(html) == [] and "11.\u00a011.\u00a02026" in html
