"""The bill list (today's business day, to find a bill again and reprint it) and changing a bill from
its page (void an extra, a manager's correction), over a real hub: forms with CSRF, Slovak refusals
that keep what was typed."""

from __future__ import annotations

import re

from sqlalchemy import select

from broker.hall.games import AddExtra, StartGame, StopGame
from broker.storage.models import GameOp
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture

pytestmark = sqlite_only  # the SQL of both backends is in test_api_bills; these test the pages


def _games(pages) -> tuple[int, int, int]:
    """On 10 Nov 2026 from 18:00: Pool 1 for an hour with 2 toppings (voidable op 2), Pool 2 from
    23:30 to 00:40 (after midnight: still the evening's), Pool 3 still running."""
    s = pages.service
    one = s.execute(StartGame(table="pool-01", actor="jana"))
    s.execute(AddExtra(game=one, extra="topping", quantity=2, actor="jana"))
    pages.clock.advance(minutes=60)
    s.execute(StopGame(game=one, actor="jana"))
    pages.clock.advance(hours=4, minutes=30)  # 23:30
    two = s.execute(StartGame(table="pool-02", actor="jana"))
    three = s.execute(StartGame(table="pool-03", actor="jana"))
    pages.clock.advance(minutes=70)  # 00:40 on the 11th
    s.execute(StopGame(game=two, actor="jana"))
    return one, two, three


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr class="bill-row" data-game="(\d+)"', html)


def test_todays_bills_are_the_business_days_latest_first(pages):
    one, two, _three = _games(pages)
    html = pages.page("/bills", client=pages.staff)  # 00:40: today is still the 10th's evening
    assert "Dnešné účty" in html and "10.\u00a011.\u00a02026" in html
    assert _rows(html) == [str(two), str(one)]  # stopped ones only, the latest first
    assert f"Účet č. {one}" in html and "Pool 1" in html and "pool-01" not in html.split("<main")[1].split("<select")[0]
    assert f'href="/sessions/{one}/bill?print=1"' in html and "14,20\u00a0€" in html  # 7,20 + 7,00, both bills
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


def test_staff_void_an_extra_on_the_running_games_bill(pages):
    s = pages.service
    sid = s.execute(StartGame(table="pool-01", actor="jana"))
    s.execute(AddExtra(game=sid, extra="topping", quantity=2, actor="jana"))
    pages.clock.advance(minutes=10)
    html = pages.page(f"/sessions/{sid}/bill", client=pages.staff)
    assert 'id="void-form"' in html and 'id="correct-form"' not in html  # staff: void yes, correct no
    r = pages.post(f"/bills/{sid}/void", {"extra_op": "2", "reason": "zadané dvakrát"}, client=pages.staff)
    assert r.status_code == 303
    bill = pages.page(r.headers["location"], client=pages.staff)
    assert "Položka stornovaná" in bill and "Storno: " in bill
    assert "line-void" in bill and "-1,20\u00a0€" in bill and "zadané dvakrát" in bill
    with s.store.reader() as db:
        last = db.scalars(select(GameOp).where(GameOp.session_id == sid).order_by(GameOp.seq.desc())).first()
        assert (last.kind, last.actor, last.reason) == ("void", "jana", "zadané dvakrát")


def test_a_refused_void_says_why_in_slovak_and_keeps_the_text(pages):
    s = pages.service
    sid = s.execute(StartGame(table="pool-01", actor="jana"))
    s.execute(AddExtra(game=sid, extra="topping", quantity=1, actor="jana"))
    r = pages.post(f"/bills/{sid}/void", {"extra_op": "2", "reason": "ab"}, client=pages.staff)
    assert r.status_code == 409 and "Napíšte dôvod (aspoň 3 znaky)" in r.text and 'value="ab"' in r.text
    s.execute(StopGame(game=sid, actor="jana"))
    html = pages.page(f"/sessions/{sid}/bill", client=pages.staff)
    assert 'id="void-form"' not in html and "Účet je vystavený: položku teraz môže stornovať len vedúci." in html
    r = pages.post(f"/bills/{sid}/void", {"extra_op": "2", "reason": "omylom"}, client=pages.staff)
    assert r.status_code == 409 and f"Účet hry č. {sid} je už vystavený" in r.text
    assert 'id="void-form"' in pages.page(f"/sessions/{sid}/bill")  # the manager may
    assert pages.follow(pages.post(f"/bills/{sid}/void", {"extra_op": "2", "reason": "omylom"})).count("line-void") == 1


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
