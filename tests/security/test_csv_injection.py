"""Issue 9 item 11: no CSV this project writes hands a spreadsheet a formula, and numbers stay numbers.

In-process: the pages and the API as `lavos server` mounts them (dashboard.web.mount_web) over a
real Hub (real Mosquitto, SQLite and PostgreSQL). A real server process would add
nothing: the CSV bytes are made by the app, the same function for page, API and CLI.
"""

from __future__ import annotations

import csv
import io
import re
from typing import TYPE_CHECKING, Any

from broker.domain.csv_cells import guard, unguard
from broker.floor.games import CorrectBill, StartGame, StopGame
from broker.storage.foosball import checkin
from broker.storage.members import add_member, record_fee
from tests.dashboard.conftest import START, clock, service  # noqa: F401 - fixtures
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.pages_client import Pages


EVIL_NAMES = ['=HYPERLINK("http://x","y")', "+1", "-2", "@SUM(A1)", "\t=1+1 Tab", "\r=2+2 CR", "'=already quoted", "''@twice"]
EVIL_NOTES = {"+1": "\t=cmd|' /C calc'!A0", "-2": "\r@SUM(A1)", "@SUM(A1)": "-3+3"}
FORMULA_START = tuple("=+-@\t\r")
NUMBER = re.compile(r"-?\d+([.,]\d+)?")  # the reports write decimal commas (Slovak Excel)
REPORTS = ["revenue", "sessions", "utilisation", "drops", "foosball"]


def _rows(r: Any, delimiter: str = ",") -> list[list[str]]:
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv"), r.text[:500]
    return list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"), newline=""), delimiter=delimiter))


def _runnable(rows: list[list[str]]) -> list[str]:
    """Cells a spreadsheet would take for a formula: starting with = + - @ tab CR and not a plain number."""
    return [c for row in rows for c in row if c.startswith(FORMULA_START) and not NUMBER.fullmatch(c)]


def _members(service: Any) -> dict[str, int]:
    def _write(db: Any) -> dict[str, int]:
        ids = {}
        for name in EVIL_NAMES:
            m = add_member(db, name, actor="test", note=EVIL_NOTES.get(name, ""))
            ids[m.name] = m.id
        return ids

    return on_writer(service, _write)


def guard_text(text: str) -> str:
    """guard() of text: text again (it passes other cell values through)."""
    guarded = guard(text)
    assert isinstance(guarded, str), guarded
    return guarded


def test_the_guard_quotes_formula_text_only_and_round_trips() -> None:
    for text in ["=1+1", "+1", "-2", "@SUM(A1)", "\t=1", "\r=1", "'=1", "''-1", "'''@x"]:
        assert guard(text) == "'" + text
        assert unguard(guard_text(text)) == text
    for text in ["Zadražil Miro", "O'Brien", "'quoted", "", "1-2", " =1"]:
        assert guard(text) == text and unguard(text) == text
    for number in (-2, -2.5, 0):
        assert guard(number) == number  # numbers the code writes are not text


def test_the_members_export_holds_no_formula_and_re_imports_unchanged(pages: Pages) -> None:
    ids = _members(pages.service)
    page = _rows(pages.manager.get("/members/export.csv"), ";")
    api = _rows(pages.manager.get("/api/members/export"), ";")
    assert page == api
    assert _runnable(page) == [], page
    by_id = {row[0]: row for row in page[1:]}
    for name in ids:
        assert by_id["'" + name if name.startswith(("=", "+", "-", "@", "'")) else name][0] == guard(name)
    notes = {row[0]: row[5] for row in page[1:]}
    assert notes[guard_text("+1")] == "'\t=cmd|' /C calc'!A0" and notes[guard_text("-2")] == "'\r@SUM(A1)"
    # The export, imported again, gives back every name (the guard quotes come off); notes too,
    # but for the leading whitespace the import strips from every note (a tab- or CR-led one).
    exported = pages.manager.get("/members/export.csv").content
    headers = {"X-CSRF-Token": pages.token(), "Content-Type": "text/csv"}
    report = pages.manager.post("/api/members/import", content=exported, headers=headers).json()
    assert report["added"] == 0, report
    members = {m["name"]: m for m in pages.manager.get("/api/members", params={"q": ""}).json()}
    assert set(members) == set(ids)
    assert {n: members[n]["note"] for n in EVIL_NOTES} == {n: v.strip() for n, v in EVIL_NOTES.items()}
    # And that export, imported through the page, changes nothing at all.
    again = pages.manager.get("/members/export.csv").content
    r = pages.post("/members/import", files={"file": ("lavos-members.csv", again, "text/csv")})
    html = pages.follow(r)
    assert f"pridaných 0, zmenených 0, nezmenených {len(ids)}" in html, html[:3000]


def test_every_report_csv_holds_no_formula_and_amounts_stay_numbers(pages: Pages) -> None:
    ids = _members(pages.service)
    s = pages.service
    evil = '=HYPERLINK("http://x","y")'

    def _write(db: Any) -> None:
        record_fee(db, ids[evil], 2026, actor="test")
        checkin(db, "foos-01", ids[evil], START, "staff")

    on_writer(s, _write)
    one = s.execute(StartGame(table="pool-05", member_id=ids[evil], actor="test"))
    pages.clock.advance(minutes=30)
    s.execute(CorrectBill(game=one, amount_cents=-1000, reason="spilled beer, on the house", actor="test"))
    s.execute(StopGame(game=one, actor="test"))
    found = {}
    for name in REPORTS:
        rows = _rows(pages.manager.get(f"/reports/{name}.csv?day=2026-11-10"), ";")
        assert _runnable(rows) == [], name
        found[name] = rows
    session = found["sessions"][1]
    assert session[4] == guard(evil)  # the member, as text
    assert session[5] == "0,00"  # the correction took the bill down to zero (bills never go below)
    assert [r[0] for r in found["foosball"][1:]] == [guard(evil)]
    assert all(NUMBER.fullmatch(r[2]) for r in found["revenue"][1:])  # euros as numbers a spreadsheet sums


def test_negative_amounts_in_a_report_csv_stay_numbers() -> None:
    """Bills are clamped at zero, so no real report has one yet; the writer must still leave it a number."""
    from dashboard.web.pages_reports import _eur, csv_bytes

    data = csv_bytes([["table", "key", "-2 is a name", -200, _eur(-200)], ["total", "", "", -5, _eur(-5)]])
    assert data == "\ufefftable;key;'-2 is a name;-200;-2,00\r\ntotal;;;-5;-0,05\r\n".encode()


def test_the_cli_export_is_guarded_too(pages: Pages) -> None:
    from broker.storage.members_csv import export_members_csv

    _members(pages.service)
    with pages.service.store.reader() as db:
        rows = list(csv.reader(io.StringIO(export_members_csv(db).decode("utf-8-sig"), newline=""), delimiter=";"))
    assert _runnable(rows) == [] and len(rows) == len(EVIL_NAMES) + 1
