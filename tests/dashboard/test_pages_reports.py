"""The reports page and its CSV exports, over a real service: numbers that add up, charts drawn, managers only."""

from __future__ import annotations

import csv
import io
import re
import uuid
import xml.etree.ElementTree as ET
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest

from broker.floor.games import StartGame, StopGame
from broker.hall.read_models import HallReads
from broker.storage.events import insert_event_once
from broker.storage.foosball import checkin
from broker.storage.members import add_member, record_fee
from broker.till.payments import PayTab
from broker.till.tabs import AddTabItem, OpenWalkInTab
from tests.dashboard.conftest import START, sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.pages_client import Pages


pytestmark = sqlite_only  # the report SQL runs on both backends in test_api_reports; these test the page
SVG = re.compile(r"<svg .*?</svg>", re.S)
EXPORTS = ["revenue", "sessions", "utilisation", "drops", "foosball"]


def _play(pages: Any) -> None:
    """On Tue 10 Nov 2026 from 18:00 local: pool-01 for an hour (6,00 €, paid by card), a member on
    pool-05 for half an hour at the club-card rate (2,00 €, cash), a Kofola at the bar (2,00 €, cash),
    three drops on pool-01, a foosball check-in. Revenue (paid): 10,00 €; table time billed: 8,00 €."""
    s = pages.service

    def _write(db: Any) -> int:
        m = add_member(db, "Zadražil Miro", actor="test")
        record_fee(db, m.id, 2026, actor="test")
        checkin(db, "foos-01", m.id, START, "staff")
        boot = uuid.uuid4().hex
        for seq, minutes in enumerate([5, 6, 70], start=1):
            insert_event_once(
                db,
                table_id="pool-01",
                boot=boot,
                seq=seq,
                type="pocket",
                node_ts=START,
                ts_synced=False,
                data={"pocket": 2, "pulse_ms": 30.0},
                received_at=START + timedelta(minutes=minutes),
            )
        member_id = m.id
        return member_id

    member_id = on_writer(s, _write)
    one = s.execute(StartGame(table="pool-01", actor="test"))
    five = s.execute(StartGame(table="pool-05", member_id=member_id, actor="test"))
    pages.clock.advance(minutes=30)
    s.execute(StopGame(game=five, actor="test"))
    pages.clock.advance(minutes=30)
    s.execute(StopGame(game=one, actor="test"))
    reads = HallReads(s)
    s.execute(PayTab(tab=reads.till.game_tab(one), method="card", amount_cents=600, actor="test"))
    s.execute(PayTab(tab=reads.till.game_tab(five), method="cash", amount_cents=200, actor="test"))
    bar = s.execute(OpenWalkInTab(label="Bar", actor="test"))
    kofola = next(p.id for p in reads.till.products() if p.name == "Kofola 0,5 l")
    s.execute(AddTabItem(tab=bar, product=kofola, actor="test"))
    s.execute(PayTab(tab=bar, method="cash", amount_cents=200, actor="test"))


def csv_rows(r: Any) -> list[list[str]]:
    """The CSV as Slovak Excel reads it: UTF-8 with a BOM, ';' between cells, CRLF line ends."""
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.content.startswith(b"\xef\xbb\xbf")  # Excel's hint that it is UTF-8
    text = r.content.decode("utf-8-sig")
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))


def svgs(html: str) -> list[ET.Element]:
    found = [ET.fromstring(x) for x in SVG.findall(html)]
    assert found, "no chart on the page"
    return found


def test_a_day_report_adds_up_and_draws_its_charts(pages: Pages) -> None:
    _play(pages)
    html = pages.page("/reports?day=2026-11-10")
    assert "10.\u00a011.\u00a02026" in html
    revenue = html[html.index('id="revenue"') : html.index('id="sessions"')]
    assert "Tržba (s DPH, zaplatené)" in revenue and 'id="revenue-total">10,00\u00a0€' in revenue  # the Z report's takings
    assert "Na bare (bez stola)" in revenue and "Nápoje" in revenue and "Prenájom stola" in revenue
    assert "8,00\u00a0€" in revenue and "6,00\u00a0€" in revenue and "2,00\u00a0€" in revenue  # table time billed: 8,00
    assert "Štandard" in revenue and "Klubová karta" in revenue  # tariffs by their venue names
    z = pages.page("/day/2026-11-10/report")
    assert "Tržba (s DPH, zaplatené)" in z and 'id="z-total">10,00\u00a0€' in z  # one definition, one word for it
    sessions = html[html.index('id="sessions"') : html.index('id="utilisation"')]
    assert "Zadražil Miro" in sessions and "10.\u00a011.\u00a02026 19:00" in sessions
    assert "Zadražil Miro" in html[html.index('id="foosball"') :]
    charts = svgs(html)
    titles = {title.text for c in charts if (title := c.find("{http://www.w3.org/2000/svg}title")) is not None}
    assert len(charts) == 4 and len(titles) == 4  # by table, by tariff, utilisation heatmap, drops heatmap
    today = pages.page("/reports")  # today, by the hub clock
    assert today[today.index("<main") :] == html[html.index("<main") :]


def test_a_month_report_has_every_day(pages: Pages) -> None:
    _play(pages)
    html = pages.page("/reports?month=2026-11")
    # Every day up to today (the hub clock says 10 November), none still to come.
    assert (
        "1.\u00a011.\u00a02026" in html
        and "10.\u00a011.\u00a02026" in html
        and "11.\u00a011.\u00a02026" not in html
        and "8,00\u00a0€" in html
    )
    assert len(svgs(html)) == 5  # plus revenue by day
    rows = csv_rows(pages.manager.get("/reports/revenue.csv?month=2026-11"))
    assert rows[0] == ["Skupina", "Položka", "Suma (€)"]
    days = [r for r in rows if r[0] == "Tržba podľa dní"]
    assert len(days) == 10 and ["Tržba podľa dní", "2026-11-10", "10,00"] in days
    assert ["Tržba (s DPH, zaplatené)", "", "10,00"] in rows and rows[-1] == ["Vyúčtovaný prenájom stolov", "", "8,00"]


def test_csv_exports_match_the_page(pages: Pages) -> None:
    _play(pages)
    q = "day=2026-11-10"
    sessions = csv_rows(pages.manager.get(f"/reports/sessions.csv?{q}"))
    assert sessions[0] == ["Hra č.", "Stôl", "Začiatok", "Koniec", "Člen", "Suma (€)"]
    assert sum(Decimal(r[5].replace(",", ".")) for r in sessions[1:]) == 8 and {r[4] for r in sessions[1:]} == {"Zadražil Miro", ""}
    assert sessions[1][1] == "Pool 5" and sessions[1][3] == "2026-11-10 18:30"  # the table's name, a local time
    # The hours run as the business day does: 06:00 ... 23:00, 00:00 ... 05:00; 18:00 is the 13th.
    util = {r[0]: r for r in csv_rows(pages.manager.get(f"/reports/utilisation.csv?{q}"))}
    assert util["Stôl"][1] == "06:00" and util["Stôl"][13] == "18:00" and util["Stôl"][19] == "00:00"
    assert util["Pool 1"][13] == "60" and util["Pool 5"][13] == "30" and "pool-01" not in util
    drops = {r[0]: r for r in csv_rows(pages.manager.get(f"/reports/drops.csv?{q}"))}
    assert (drops["Pool 1"][13], drops["Pool 1"][14], drops["Pool 1"][-1]) == ("2", "1", "3")
    foos = csv_rows(pages.manager.get(f"/reports/foosball.csv?{q}"))
    assert foos[1][:4] == ["Zadražil Miro", "1", "0", "Futbal 1"]  # the table's name, not foos-01
    r = pages.manager.get(f"/reports/revenue.csv?{q}")
    assert 'filename="lavos-revenue-2026-11-10.csv"' in r.headers["content-disposition"]


def test_english_money_and_dates(pages: Pages) -> None:
    _play(pages)
    assert pages.post("/lang", {"lang": "en", "next": "/reports"}).status_code == 303
    html = pages.page("/reports?day=2026-11-10")
    assert "€8.00" in html and "10\u00a0Nov\u00a02026" in html and "Club card" in html


def test_an_empty_day_says_so(pages: Pages) -> None:
    html = pages.page("/reports?day=2026-11-09")
    assert "0,00\u00a0€" in html
    assert len(svgs(html)) == 4  # empty charts still parse and say why they are empty


@pytest.mark.parametrize(
    "query",
    [
        "day=2026-13-45",
        "day=abc",
        "day=10.11.2026",
        "month=2026-13",
        "month=0000-01",
        "month=9999-12",
        "day=2026-11-10&month=2026-11",
        "day=" + "9" * 30,
        "month=2026-1",
        "day=2026-02-30",
    ],
)
def test_bad_periods_are_a_clear_400(pages: Pages, query: Any) -> None:
    for path in ("/reports", "/reports/revenue.csv"):
        r = pages.manager.get(f"{path}?{query}")
        assert r.status_code == 400, f"{path}?{query} → {r.status_code}"
        assert "error-box" in r.text


def test_unknown_export_is_404(pages: Pages) -> None:
    r = pages.manager.get("/reports/passwords.csv")
    assert r.status_code == 404


@pytest.mark.parametrize("path", ["/reports", "/reports?month=2026-11"] + [f"/reports/{x}.csv" for x in EXPORTS])
def test_only_the_manager_sees_reports(pages: Pages, path: Any) -> None:
    pages.refused_to_others("GET", path)


def test_csv_is_what_slovak_excel_opens(pages: Pages) -> None:
    _play(pages)
    raw = pages.manager.get("/reports/revenue.csv?day=2026-11-10").content
    assert raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw and b";" in raw
    rows = csv_rows(pages.manager.get("/reports/revenue.csv?day=2026-11-10"))
    assert all(len(r) == 3 for r in rows)  # ';' separates the cells, so a decimal comma cannot split one
    tables = {r[1]: r[2] for r in rows if r[0] == "Tržba podľa stolov"}
    assert tables == {"Pool 1": "6,00", "Pool 5": "2,00", "Na bare (bez stola)": "2,00"}  # names, not ids; a decimal comma
    assert sum(Decimal(v.replace(",", ".")) for v in tables.values()) == Decimal("10.00")
    categories = {r[1]: r[2] for r in rows if r[0] == "Tržba podľa kategórií"}
    assert categories == {"Prenájom stola": "8,00", "Nápoje": "2,00"}
    assert pages.post("/lang", {"lang": "en", "next": "/reports"}).status_code == 303
    en = csv_rows(pages.manager.get("/reports/revenue.csv?day=2026-11-10"))
    assert (
        en[0] == ["Group", "Item", "Amount (€)"]
        and ["Revenue (incl. VAT, paid)", "", "10,00"] in en
        and ["Revenue by table", "At the bar (no table)", "2,00"] in en
    )


def test_xlsx_holds_every_section_with_real_numbers_and_times(pages: Pages) -> None:
    from datetime import datetime

    from openpyxl import load_workbook

    _play(pages)
    r = pages.manager.get("/reports/lavos.xlsx?day=2026-11-10")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/vnd.openxmlformats-officedocument.spreadsheetml")
    assert 'filename="lavos-2026-11-10.xlsx"' in r.headers["content-disposition"]
    book = load_workbook(io.BytesIO(r.content))
    assert book.sheetnames == ["Tržba", "Hry", "Vyťaženosť", "Potopené gule", "Stolný futbal"]
    revenue = [[c.value for c in row] for row in book["Tržba"].iter_rows()]
    assert revenue[0] == ["Skupina", "Položka", "Suma (€)"] and ["Tržba (s DPH, zaplatené)", None, 10] in revenue
    assert ["Tržba podľa stolov", "Pool 1", 6] in revenue and book["Tržba"]["C2"].number_format == "0.00"
    games = [[c.value for c in row] for row in book["Hry"].iter_rows(min_row=2)]
    assert {g[1] for g in games} == {"Pool 1", "Pool 5"} and all(isinstance(g[2], datetime) for g in games)
    assert sorted(g[5] for g in games) == [2, 6]
    util = {row[0].value: [c.value for c in row] for row in book["Vyťaženosť"].iter_rows()}
    assert util["Stôl"][13] == "18:00" and util["Pool 1"][13] == 60
    assert book["Stolný futbal"]["A2"].value == "Zadražil Miro" and book["Stolný futbal"]["D2"].value == "Futbal 1"


def test_prev_and_next_arrows_and_no_days_to_come(pages: Pages) -> None:
    html = pages.page("/reports?day=2026-11-09")
    assert 'href="/reports?day=2026-11-08"' in html and 'href="/reports?day=2026-11-10"' in html
    today = pages.page("/reports")  # 10 November by the hub clock: no arrow into the future
    assert 'href="/reports?day=2026-11-09"' in today and 'rel="next"' not in today
    month = pages.page("/reports?month=2026-10")
    assert 'href="/reports?month=2026-09"' in month and 'href="/reports?month=2026-11"' in month
    assert 'rel="next"' not in pages.page("/reports?month=2026-11")
    for future in ("day=2026-11-11", "month=2026-12"):
        r = pages.manager.get(f"/reports?{future}")
        assert r.status_code == 400 and "ešte neprišiel" in r.text


def test_a_game_after_midnight_is_the_evenings(pages: Pages) -> None:
    s = pages.service
    pages.clock.advance(hours=5, minutes=30)  # 23:30
    sid = s.execute(StartGame(table="pool-03", actor="test"))
    pages.clock.advance(minutes=70)  # 00:40 on the 11th
    s.execute(StopGame(game=sid, actor="test"))
    html = pages.page("/reports")  # still the evening of the 10th
    assert "10.\u00a011.\u00a02026" in html and "7,00\u00a0€" in html[html.index('id="sessions"') : html.index('id="utilisation"')]
    heat = html[html.index('id="utilisation"') : html.index('id="drops"')]
    assert heat.index(">23<") < heat.index(">0<")  # the hours after midnight come after 23:00
    util = {r[0]: r for r in csv_rows(pages.manager.get("/reports/utilisation.csv?day=2026-11-10"))}
    assert (util["Pool 3"][18], util["Pool 3"][19], util["Pool 3"][-1]) == ("30", "40", "70")  # 23:00, 00:00, total


def test_xlsx_keeps_a_formula_looking_name_as_text(pages: Pages) -> None:
    from openpyxl import load_workbook

    evil = '=HYPERLINK("http://x","y")'

    def _write(db: Any) -> None:
        m = add_member(db, evil, actor="test")
        record_fee(db, m.id, 2026, actor="test")
        checkin(db, "foos-01", m.id, START, "staff")

    on_writer(pages.service, _write)
    book = load_workbook(io.BytesIO(pages.manager.get("/reports/lavos.xlsx?day=2026-11-10").content))
    cell = book["Stolný futbal"]["A2"]
    assert cell.value == evil and cell.data_type == "s"  # text, not a formula Excel would run
