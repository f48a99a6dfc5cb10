"""The member pages over a real service: search, add, edit, fees, cards (typed or tapped on a real
node's reader), CSV in and out; managers only, CSRF on every form, garbage refused with nothing written."""

from __future__ import annotations

import re
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select

from broker.storage.members import add_member, assign_card, record_fee
from broker.storage.models import AuditEntry, FeePayment, Member, MemberCard
from tests.dashboard.conftest import sqlite_only
from tests.dashboard.pages_client import pages  # noqa: F401 - the fixture
from tests.support.hub import card_reader_of, on_writer, running_node

if TYPE_CHECKING:
    from pathlib import Path

    from sim.mosquitto import Mosquitto
    from tests.dashboard.pages_client import Pages


pytestmark = sqlite_only  # the registry itself runs on both backends in test_api_members


def _member(pages: Any, name: str = "Zadražil Miro", *, year: int | None = None, card: str | None = None) -> int:
    def _write(db: Any) -> int:
        m = add_member(db, name, actor="test")
        if year:
            record_fee(db, m.id, year, actor="test")
        if card:
            assign_card(db, m.id, card, actor="test")
        return m.id

    result: int = on_writer(pages.service, _write)
    return result


def counts(pages: Any) -> tuple[int, int, int, int]:
    """Members, cards, fee payments, audit entries: what a refused request must leave alone."""
    with pages.service.store.reader() as db:
        return tuple(db.scalar(select(func.count()).select_from(t)) for t in (Member, MemberCard, FeePayment, AuditEntry))


def names_listed(html: str) -> list[str]:
    return re.findall(r'<tr data-member="\d+"[^>]*>\s*<td><a href="/members/\d+">([^<]+)</a>', html)


def test_search_ignores_accents_and_case(pages: Pages) -> None:
    for name in ("Zadražil Miro", "Axamit Miloš", "Žiak Ľubo"):
        _member(pages, name)
    assert names_listed(pages.page("/members?q=zadrazil")) == ["Zadražil Miro"]
    assert names_listed(pages.page("/members?q=MILOS")) == ["Axamit Miloš"]
    assert names_listed(pages.page("/members?q=ziak%20lubo")) == ["Žiak Ľubo"]
    assert names_listed(pages.page("/members")) == ["Axamit Miloš", "Zadražil Miro", "Žiak Ľubo"]
    assert names_listed(pages.page("/members?q=%25")) == []  # a LIKE wildcard is just a character


def test_add_edit_and_the_audit_log(pages: Pages) -> None:
    r = pages.post("/members", {"name": "  Nový   Člen ", "kind": "honorary", "note": "čestný", "active": "on"})
    member_id = int(r.headers["location"].rsplit("/", 1)[1])
    html = pages.follow(r)
    assert "Nový Člen" in html and "flash-ok" in html
    r = pages.post(f"/members/{member_id}", {"name": "Nový Člen Jr.", "kind": "individual", "note": "", "reason": "preklep"})
    assert r.status_code == 303
    with pages.service.store.reader() as db:
        m = db.get(Member, member_id)
        assert m is not None
        assert (m.name, m.kind, m.active) == ("Nový Člen Jr.", "individual", False)  # an unticked box is "no"
        edit = db.scalars(select(AuditEntry).where(AuditEntry.action == "member.edit")).one()
        assert (edit.actor, edit.reason) == ("boss", "preklep")


def test_the_years_fee(pages: Pages) -> None:
    member_id = _member(pages)
    assert "✗" in pages.page(f"/members/{member_id}").split('id="cards"')[0]
    html = pages.follow(pages.post(f"/members/{member_id}/fee", {"year": "2026", "amount": "10,00"}))
    assert "✓" in html.split('id="cards"')[0] and "10,00\u00a0€" in html
    pages.post(f"/members/{member_id}/fee", {"year": "2027", "amount": "0"})  # honorary: a 0 € year
    with pages.service.store.reader() as db:
        fees = db.scalars(select(FeePayment).order_by(FeePayment.year)).all()
        assert [(f.year, f.amount_cents, f.recorded_by) for f in fees] == [(2026, 1000, "boss"), (2027, 0, "boss")]
        assert fees[0].paid_at == pages.clock()
    r = pages.post(f"/members/{member_id}/fee", {"year": "2026", "amount": "10"})
    assert r.status_code == 400 and "Príspevok za rok 2026 je pre člena Zadražil Miro už zapísaný." in r.text


@pytest.mark.parametrize(
    "year,amount",
    [
        ("20266", "10"),
        ("1900", "10"),
        ("abc", "10"),
        ("", "10"),
        ("２０２６", "10"),
        ("-1", "10"),
        ("2026", "-5"),
        ("2026", "ten"),
        ("2026", "10,001"),
        ("2026", "1e3"),
        ("2026", "1000000"),
        ("2026\x00", "10"),
    ],
)
def test_bad_fee_input_is_refused_and_nothing_written(pages: Pages, year: Any, amount: Any) -> None:
    member_id = _member(pages)
    before = counts(pages)
    r = pages.post(f"/members/{member_id}/fee", {"year": year, "amount": amount})
    # Refused at the form, on the member page, with what was typed kept.
    # (An empty year is refused by the form's validation, and a control character by the pages'
    # one text rule before any route runs (dashboard/web/input_text.py): both on the error page.)
    on_error_page = not year or "\x00" in year
    assert r.status_code == 400 and ("error-box" in r.text if on_error_page else 'id="record-fee-error"' in r.text)
    assert counts(pages) == before


def test_assign_a_typed_card_and_take_it_away(pages: Pages) -> None:
    member_id = _member(pages)
    html = pages.follow(pages.post(f"/members/{member_id}/cards", {"uid": "04:A2:B3:C4"}))
    assert "<code>04a2b3c4</code>" in html
    other = _member(pages, "Axamit Miloš")
    r = pages.post(f"/members/{other}/cards", {"uid": "04a2b3c4"})
    assert r.status_code == 400 and "Karta 04a2b3c4 patrí členovi Zadražil Miro; najprv mu ju odoberte." in r.text
    r = pages.post(f"/members/{other}/cards/remove", {"uid": "04a2b3c4"})
    assert r.status_code == 400  # not theirs to lose
    pages.follow(pages.post(f"/members/{member_id}/cards/remove", {"uid": "04a2b3c4", "reason": "stratená"}))
    with pages.service.store.reader() as db:
        assert db.get(MemberCard, "04a2b3c4") is None


@pytest.mark.parametrize("uid", ["xyz", "12", "", "04a2b3c4" * 5, "04a2\x00b3c4", "<script>"])
def test_bad_card_numbers_are_refused(pages: Pages, uid: Any) -> None:
    member_id = _member(pages)
    before = counts(pages)
    r = pages.post(f"/members/{member_id}/cards", {"uid": uid})
    assert r.status_code == 400 and "<script>" not in r.text
    assert counts(pages) == before


@pytest.mark.parametrize(
    "data",
    [
        {"name": ""},
        {"name": "   "},
        {"name": "x" * 201},
        {"name": "Ok", "kind": "vip"},
        {"name": "a\x00b"},
        {"name": "Zadražil Miro"},  # already a member
    ],
)
def test_bad_member_forms_are_refused(pages: Pages, data: Any) -> None:
    _member(pages)
    before = counts(pages)
    r = pages.post("/members", data)
    # At the form (the hub's refusals) or the error page (a field longer than the form allows).
    assert r.status_code == 400 and ('id="add-member-error"' in r.text or "error-box" in r.text)
    assert counts(pages) == before


def test_unknown_and_malformed_member_ids(pages: Pages) -> None:
    for path in ("/members/999", "/members/999/capture?table=foos-01&wait=0.1"):
        assert pages.manager.get(path).status_code == 404
    assert pages.post("/members/999/fee", {"year": "2026", "amount": "10"}).status_code == 404
    for path in ("/members/abc", "/members/0", "/members/99999999999999"):
        assert pages.manager.get(path).status_code == 400


def test_capture_fills_in_the_card_tapped_on_a_real_reader(pages: Pages, mosquitto: Mosquitto, tmp_path: Path) -> None:
    member_id = _member(pages)
    before = len(pages.service.listeners)  # the hub's own (e.g. the notifications' close-out summary)
    with running_node(mosquitto, tmp_path, "foos-01") as (node, _factory):
        result: dict[str, str] = {}
        waiting = threading.Thread(target=lambda: result.update(html=pages.page(f"/members/{member_id}/capture?table=foos-01&wait=10")))
        waiting.start()
        deadline = time.monotonic() + 5
        while len(pages.service.listeners) == before and time.monotonic() < deadline:  # the capture is listening
            time.sleep(0.01)
        card_reader_of(node).tap("0A1B2C3D")
        waiting.join(15)
    html = result["html"]
    assert 'name="uid" value="0a1b2c3d"' in html and 'id="capture-result"' in html
    with pages.service.store.reader() as db:
        assert db.get(MemberCard, "0a1b2c3d") is None  # captured, not yet assigned: that is the manager's POST
    assert len(pages.service.listeners) == before  # the capture cleaned up after itself


def test_capture_times_out_with_a_message(pages: Pages) -> None:
    member_id = _member(pages)
    html = pages.page(f"/members/{member_id}/capture?table=foos-02&wait=0.2")
    assert 'id="capture-result"' in html and 'name="uid" value=""' in html


@pytest.mark.parametrize(
    "query", ["table=nope", "table=foos-01&wait=0", "table=foos-01&wait=31", "table=foos-01&wait=x", "", "table=" + "x" * 40]
)
def test_capture_refuses_garbage(pages: Pages, query: Any) -> None:
    member_id = _member(pages)
    assert pages.manager.get(f"/members/{member_id}/capture?{query}").status_code == 400


GOOD_CSV = "name,kind,cards,fees_paid,active,note\nZadražil Miro,individuálne,04a2b3c4,2025 2026,áno,\nAxamit Miloš,,,,,\n"


def test_csv_import_then_export_round_trip(pages: Pages) -> None:
    r = pages.post("/members/import", files={"file": ("clenovia.csv", GOOD_CSV.encode("utf-8-sig"), "text/csv")})
    html = pages.follow(r)
    assert "clenovia.csv" in html and names_listed(html) == ["Axamit Miloš", "Zadražil Miro"]
    export = pages.manager.get("/members/export.csv")
    assert export.status_code == 200 and export.content.startswith(b"\xef\xbb\xbf")
    lines = export.content.decode("utf-8-sig").splitlines()
    assert lines[0] == "meno;typ;karty;zaplatené príspevky;aktívny;poznámka"
    assert lines[2] == "Zadražil Miro;riadny;04a2b3c4;2025 2026;áno;"
    before = counts(pages)
    pages.follow(pages.post("/members/import", files={"file": ("again.csv", export.content, "text/csv")}))
    assert counts(pages) == before  # importing the export changes nothing


def test_a_bad_csv_imports_nothing_and_lists_every_bad_line(pages: Pages) -> None:
    _member(pages, "Axamit Miloš", card="0a0b0c0d")
    bad = "name,kind,cards,fees_paid\nNový Člen,,,2026\nZlý Druh,vip,,\nZlý Rok,,,20x6\nCudzia Karta,,0a0b0c0d,\nZlá Karta,,zz,\n"
    before = counts(pages)
    r = pages.post("/members/import", files={"file": ("zle.csv", bad.encode(), "text/csv")})
    assert r.status_code == 400
    errors = re.findall(r"<li>(line \d+|riadok \d+): ", r.text)
    assert len(errors) == 3 and "zle.csv" in r.text  # parse errors first: lines 3, 4, 6
    assert counts(pages) == before
    conflict = "name,cards\nNový Člen,\nCudzia Karta,0a0b0c0d\n"
    r = pages.post("/members/import", files={"file": ("c.csv", conflict.encode(), "text/csv")})
    assert r.status_code == 400 and "patrí členovi Axamit Miloš" in r.text
    assert counts(pages) == before  # the good line 2 was not written either


@pytest.mark.parametrize(
    "header, slovak",
    [
        ("meno;typ;cards", "Hlavička mieša slovenské a anglické názvy stĺpcov (cards)"),
        ("meno;typ;vek", "Neznáme stĺpce vek"),
    ],
)
def test_a_header_of_mixed_or_unknown_columns_is_refused_in_slovak_naming_the_column(pages: Pages, header: Any, slovak: Any) -> None:
    before = counts(pages)
    r = pages.post("/members/import", files={"file": ("zle.csv", f"{header}\nNový Člen;;\n".encode("cp1250"), "text/csv")})
    assert r.status_code == 400 and slovak in r.text, r.text[-3000:]
    assert counts(pages) == before


@pytest.mark.parametrize(
    "content", [b"", b"   \n", b"\x00\x01\x02binary", b"\xff\xfe\x00n\x00a\x00m\x00e", b"just one line without a header"]
)
def test_garbage_files_are_refused(pages: Pages, content: Any) -> None:
    before = counts(pages)
    r = pages.post("/members/import", files={"file": ("x.csv", content, "text/csv")})
    assert r.status_code == 400 and ("import-errors" in r.text or "error-box" in r.text)
    assert counts(pages) == before


def test_import_without_a_file_is_400(pages: Pages) -> None:
    assert pages.post("/members/import", {}).status_code == 400


def test_a_huge_file_is_413(pages: Pages) -> None:
    big = b"name\n" + b"x" * (2 * 1024 * 1024 + 10)
    assert pages.post("/members/import", files={"file": ("big.csv", big, "text/csv")}).status_code == 413


FORMS = [
    ("/members", {"name": "Nový"}),
    ("/members/{id}", {"name": "Nový", "kind": "individual"}),
    ("/members/{id}/fee", {"year": "2026", "amount": "10"}),
    ("/members/{id}/cards", {"uid": "0a1b2c3d"}),
    ("/members/{id}/cards/remove", {"uid": "04a2b3c4"}),
]


@pytest.mark.parametrize("path,data", FORMS)
def test_every_form_needs_the_csrf_token(pages: Pages, path: Any, data: Any) -> None:
    path = path.format(id=_member(pages, card="04a2b3c4"))
    before = counts(pages)
    assert pages.post(path, data, with_csrf=False).status_code == 403
    assert pages.manager.post(path, data={**data, "csrf_token": "forged"}).status_code == 403
    assert counts(pages) == before


def test_csv_import_needs_the_csrf_token(pages: Pages) -> None:
    r = pages.manager.post("/members/import", files={"file": ("a.csv", GOOD_CSV.encode(), "text/csv")})
    assert r.status_code == 403 and counts(pages)[0] == 0


@pytest.mark.parametrize("path,data", FORMS)
def test_every_action_is_for_the_manager(pages: Pages, path: Any, data: Any) -> None:
    path = path.format(id=_member(pages, card="04a2b3c4"))
    before = counts(pages)
    pages.refused_to_others("POST", path, data)
    assert counts(pages) == before


@pytest.mark.parametrize(
    "path",
    [
        "/members",
        "/members?q=zad",
        "/members/{id}",
        "/members/export.csv",
        "/members/import",
        "/members/{id}/capture?table=foos-01&wait=0.1",
    ],
)
def test_every_page_is_for_the_manager(pages: Pages, path: Any) -> None:
    pages.refused_to_others("GET", path.format(id=_member(pages)))


def test_staff_cannot_import(pages: Pages) -> None:
    r = pages.post("/members/import", client=pages.staff, files={"file": ("a.csv", GOOD_CSV.encode(), "text/csv")})
    assert r.status_code == 403 and counts(pages)[0] == 0
