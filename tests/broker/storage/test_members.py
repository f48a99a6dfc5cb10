"""The member registry and its CSV files, on SQLite and PostgreSQL, with the club's real member list."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from broker.domain.floor.alert_kinds import card_refused
from broker.storage.members import (
    MemberError,
    add_member,
    assign_card,
    edit_member,
    fee_paid,
    find_by_card,
    is_valid_card,
    normalize_uid,
    record_fee,
    remove_card,
    search_members,
)
from broker.storage.members_csv import MemberImportError, export_members_csv, import_members_csv, parse_members_csv
from broker.storage.models import AuditEntry, FeePayment, Member, MemberCard

if TYPE_CHECKING:
    from broker.storage.engine import Store
    from broker.storage.members_csv import ImportReport


SHIPPED = Path(__file__).resolve().parents[3] / "deploy" / "members" / "lavos-members.csv"
HEADER = "name,kind,cards,fees_paid,active,note\n"


def count(db: Any, model: Any) -> int:
    result: int = db.scalar(select(func.count()).select_from(model))
    return result


def import_text(store: Any, text: str | bytes) -> ImportReport:
    data = text.encode("utf-8") if isinstance(text, str) else text
    with store.session() as db:
        return import_members_csv(db, data, actor="test")


# --- the shipped list ----------------------------------------------------------------------


def test_shipped_member_list_imports_59_members_once(store: Store) -> None:
    report = import_text(store, SHIPPED.read_bytes())
    assert (report.added, report.updated, report.unchanged) == (59, 0, 0)
    again = import_text(store, SHIPPED.read_bytes())
    assert (again.added, again.updated, again.unchanged) == (0, 0, 59)
    with store.session() as db:
        assert count(db, Member) == 59
        names = set(db.scalars(select(Member.name)))
        assert {"Ambra Tomáš", "Zadražil Miro", "Čistá Janka", "Šipka Oliver"} <= names
        assert {m.kind for m in db.scalars(select(Member))} == {"individual"}
        sharks = db.scalars(select(Member).where(Member.name == "Blaško Tomáš")).one()
        assert "ŠBK Lavos Sharks" in sharks.note


def test_export_then_import_changes_nothing(store: Store) -> None:
    import_text(store, SHIPPED.read_bytes())
    with store.session() as db:
        m = search_members(db, "zadrazil")[0]
        assign_card(db, m.id, "04A2B3C4", actor="test")
        record_fee(db, m.id, 2026, actor="test")
        edit_member(db, m.id, actor="test", kind="honorary", active=False, note='says "hi", twice; ok')
        exported = export_members_csv(db)
    audit_before = _audit_count(store)
    report = import_text(store, exported)
    assert (report.added, report.updated, report.unchanged) == (0, 0, 59)
    assert _audit_count(store) == audit_before
    assert "Zadražil Miro;čestný;04a2b3c4;2026;nie;" in exported.decode("utf-8-sig")


def _audit_count(store: Any) -> int:
    with store.session() as db:
        return count(db, AuditEntry)


# --- registry operations -------------------------------------------------------------------


def test_search_ignores_accents_and_case(store: Store) -> None:
    import_text(store, SHIPPED.read_bytes())
    with store.session() as db:
        assert [m.name for m in search_members(db, "zadrazil")] == ["Zadražil Miro"]
        assert [m.name for m in search_members(db, "MIRO zadr")] == ["Zadražil Miro"]
        assert [m.name for m in search_members(db, "struhar")] == [
            "Struhár Ladislav",
            "Struhár Oliver",
            "Struhár Stanislav",
            "Struhárová Michaela",
        ]
        assert search_members(db, "100%_") == []
        assert len(search_members(db, "", limit=5)) == 5


def test_add_edit_and_their_audit(store: Store) -> None:
    with store.session() as db:
        m = add_member(db, "  Nový   Člen ", actor="jana", kind="collective", note="firma")
        assert m.name == "Nový Člen"
        with pytest.raises(MemberError, match="already exists"):
            add_member(db, "Nový Člen", actor="jana")
        with pytest.raises(MemberError, match="vip is not a membership type"):
            add_member(db, "Iný", actor="jana", kind="vip")
        with pytest.raises(MemberError, match="name is empty"):
            add_member(db, "   ", actor="jana")
        edit_member(db, m.id, actor="jana", name="Novy Clen", reason="typo")
        assert search_members(db, "novy clen")[0].id == m.id
        with pytest.raises(MemberError, match=r"There is no member no\. 999999"):
            edit_member(db, 999999, actor="jana", active=False)
        actions = [(a.action, a.actor) for a in db.scalars(select(AuditEntry).order_by(AuditEntry.id))]
        assert actions == [("member.add", "jana"), ("member.edit", "jana")]
        edit = db.scalars(select(AuditEntry).where(AuditEntry.action == "member.edit")).one()
        assert edit.detail == {"name": ["Nový Člen", "Novy Clen"]} and edit.reason == "typo"


def test_cards(store: Store) -> None:
    with store.session() as db:
        a = add_member(db, "Ambra Tomáš", actor="t")
        b = add_member(db, "Axamit Miloš", actor="t")
        card = assign_card(db, a.id, "04:A2:B3:C4", actor="t")
        assert card.uid == "04a2b3c4"
        assert assign_card(db, a.id, "04a2b3c4", actor="t") is card  # idempotent
        with pytest.raises(MemberError, match="belongs to Ambra Tomáš"):
            assign_card(db, b.id, "04A2B3C4", actor="t")
        found = find_by_card(db, "04 a2 b3 c4")
        assert found is not None and found.id == a.id
        assert find_by_card(db, "deadbeef") is None and find_by_card(db, "not hex!") is None
        remove_card(db, "04a2b3c4", actor="t", reason="lost")
        assert find_by_card(db, "04a2b3c4") is None
        with pytest.raises(MemberError, match="not assigned"):
            remove_card(db, "04a2b3c4", actor="t")
        assign_card(db, b.id, "04a2b3c4", actor="t")  # free again


@pytest.mark.parametrize("uid", ["", "xyz1", "04a", "0" * 33, "04a2-b3c4-zz"])
def test_bad_uids(uid: Any) -> None:
    with pytest.raises(MemberError, match="is not a card number"):
        normalize_uid(uid)


def test_fees_and_card_validity(store: Store) -> None:
    today = date(2026, 3, 14)
    with store.session() as db:
        m = add_member(db, "Zadražil Miro", actor="t")
        assign_card(db, m.id, "a1b2c3d4", actor="t")
        check = is_valid_card(db, "a1b2c3d4", today)
        assert check.member is not None
        assert (check.ok, check.code, check.member.name, check.year) == (False, "unpaid", "Zadražil Miro", 2026)
        said = card_refused("foos-01", check.code, check.member.name, check.year)  # what the bar is told
        assert said.text_en == "card refused — Zadražil Miro: fee unpaid for 2026"
        assert said.text == "karta odmietnutá — Zadražil Miro: nezaplatený členský príspevok za rok 2026"
        record_fee(db, m.id, 2025, actor="t")
        assert is_valid_card(db, "a1b2c3d4", today).code == "unpaid"  # last year's fee is not this year's
        record_fee(db, m.id, 2026, actor="t", amount_cents=1000)
        with pytest.raises(MemberError, match="The 2026 fee of Zadražil Miro is already recorded"):
            record_fee(db, m.id, 2026, actor="t")
        with pytest.raises(MemberError, match="The year 26 is outside"):
            record_fee(db, m.id, 26, actor="t")
        with pytest.raises(MemberError, match="negative"):
            record_fee(db, m.id, 2027, actor="t", amount_cents=-1)
        assert fee_paid(m, 2026) and not fee_paid(m, 2027)
        ok = is_valid_card(db, "A1B2C3D4", today)
        assert ok.ok and ok.member is not None and ok.member.id == m.id
        assert is_valid_card(db, "a1b2c3d4", date(2027, 1, 1)).code == "unpaid"
        edit_member(db, m.id, actor="t", active=False)
        inactive = is_valid_card(db, "a1b2c3d4", today)
        assert inactive.member is not None
        assert (
            card_refused("foos-01", inactive.code, inactive.member.name, 2026).text_en
            == "card refused — Zadražil Miro: membership is inactive"
        )
        unknown = is_valid_card(db, "ffff0000", today)
        assert (unknown.code, unknown.member) == ("unknown", None)
        told = card_refused("foos-01", unknown.code)
        assert (told.text_en, told.text) == (
            "card refused — unknown card",
            "karta odmietnutá — neznáma karta",
        )  # no UID: it is a credential
        assert db.scalars(select(FeePayment).where(FeePayment.year == 2026)).one().recorded_by == "t"


# --- CSV: what Excel and people produce ----------------------------------------------------


def test_semicolons_bom_slovak_words_and_several_values(store: Store) -> None:
    text = (
        "\ufeffname;kind;cards;fees_paid;active;note\r\n"
        'Bača Lubo;čestné;04a2b3c4 04A2B3C5;2025 2026;áno;"čestný člen; od 2004"\r\n'
        "\r\n"
        "Firma s.r.o.;kolektívne;;;nie;\r\n"
    )
    report = import_text(store, text)
    assert (report.added, report.cards_added, report.fees_added) == (2, 2, 2)
    with store.session() as db:
        baca = search_members(db, "baca")[0]
        assert (baca.kind, [c.uid for c in baca.cards], [f.year for f in baca.fees], baca.note) == (
            "honorary",
            ["04a2b3c4", "04a2b3c5"],
            [2025, 2026],
            "čestný člen; od 2004",
        )
        firma = search_members(db, "firma")[0]
        assert (firma.kind, firma.active) == ("collective", False)


SK_HEADER = "meno;typ;karty;zaplatené príspevky;aktívny;poznámka"


def test_the_export_is_slovak_excels_file_and_imports_back_changing_nothing(store: Store) -> None:
    """Issue 19, item 21: ';', a BOM, Slovak column names and words; export → import changes nothing."""
    import_text(
        store,
        HEADER
        + 'Bača Lubo,honorary,04a2b3c4 04a2b3c5,2025 2026,no,"čestný člen; od 2004"\nFirma s.r.o.,collective,,,yes,\nAmbra Tomáš,,,2026,,\n',
    )
    with store.session() as db:
        exported = export_members_csv(db)
    assert exported.startswith(b"\xef\xbb\xbf") and b"\r\n" in exported
    assert exported.decode("utf-8-sig").split("\r\n") == [
        SK_HEADER,
        "Ambra Tomáš;riadny;;2026;áno;",
        'Bača Lubo;čestný;04a2b3c4 04a2b3c5;2025 2026;nie;"čestný člen; od 2004"',
        "Firma s.r.o.;kolektívny;;;áno;",
        "",
    ]
    audit_before = _audit_count(store)
    report = import_text(store, exported)
    assert (report.added, report.updated, report.unchanged, report.cards_added, report.fees_added) == (0, 0, 3, 0, 0)
    assert _audit_count(store) == audit_before
    with store.session() as db:
        assert export_members_csv(db) == exported


def test_a_windows_1250_file_imports_right(store: Store) -> None:
    """Excel's plain "CSV" on Slovak Windows is Windows-1250 (no BOM): not UTF-8, so read as cp1250."""
    text = SK_HEADER + "\r\nŠťastný Ľubomír;čestný;;2026;áno;Žilina, ďalší ôsmy člen\r\n"
    data = text.encode("cp1250")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    assert import_text(store, data).added == 1
    with store.session() as db:
        m = search_members(db, "stastny")[0]
        assert (m.name, m.kind, m.active, m.note, [f.year for f in m.fees]) == (
            "Šťastný Ľubomír",
            "honorary",
            True,
            "Žilina, ďalší ôsmy člen",
            [2026],
        )


def test_values_read_in_either_language_and_without_accents(store: Store) -> None:
    text = SK_HEADER + "\nA;riadny;;;ano;\nB;kolektivny;;;nie;\nC;cestny;;;áno;\nD;honorary;;;yes;\nE;individual;;;no;\n"
    import_text(store, text)
    with store.session() as db:
        got = {m.name: (m.kind, m.active) for m in db.scalars(select(Member))}
    assert got == {
        "A": ("individual", True),
        "B": ("collective", False),
        "C": ("honorary", True),
        "D": ("honorary", True),
        "E": ("individual", False),
    }


@pytest.mark.parametrize(
    "header, column",
    [
        ("meno;typ;cards;aktívny", "cards"),  # one English column among Slovak ones
        ("name,kind,karty,active", "karty"),
        ("meno;typ;vek", "vek"),  # neither language
        ("Meno;Typ;Karta", "Karta"),
    ],
)
def test_a_header_of_mixed_or_unknown_columns_is_refused_naming_the_column(header: Any, column: Any) -> None:
    with pytest.raises(MemberImportError) as err:  # before anything is written (parsing is the import's first step)
        parse_members_csv((header + "\nA;;;\n").encode())
    [problem] = err.value.errors
    assert problem.line == 1 and column in (problem.params.get("columns"), problem.params.get("unknown")), problem


def test_import_adds_cards_and_years_but_never_removes(store: Store) -> None:
    import_text(store, HEADER + "Fuka Michal,individual,aa11bb22,2025,yes,\n")
    report = import_text(store, HEADER + "Fuka Michal,individual,cc33dd44,2026,yes,league\n")
    assert (report.updated, report.cards_added, report.fees_added) == (1, 1, 1)
    with store.session() as db:
        m = search_members(db, "fuka")[0]
        assert [c.uid for c in m.cards] == ["aa11bb22", "cc33dd44"] and [f.year for f in m.fees] == [2025, 2026]
        assert m.note == "league"


def test_missing_columns_keep_what_is_stored(store: Store) -> None:
    import_text(store, HEADER + "Galo Rudo,honorary,,,no,a note\n")
    import_text(store, "name\nGalo Rudo\n")
    with store.session() as db:
        m = search_members(db, "galo")[0]
        assert (m.kind, m.active, m.note) == ("honorary", False, "a note")


def errors_of(data: bytes | str) -> list[str]:
    with pytest.raises(MemberImportError) as err:
        parse_members_csv(data.encode("utf-8") if isinstance(data, str) else data)
    return [str(e) for e in err.value.errors]


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            "name,kind,card\nA,individual,\n",
            "line 1: Unknown columns card; the columns are meno;typ;karty;zaplatené príspevky;aktívny;poznámka",
        ),
        ("kind,cards\nindividual,\n", "line 1: There is no name column"),
        ("name,name\nA,B\n", "line 1: The columns name appear more than once"),
        (HEADER + "A,vip,,,,\n", "line 2: kind: vip is not a membership type (individual, collective, honorary)"),
        (HEADER + "A,,,20x6,,\n", "line 2: fees_paid: 20x6 is not a year"),
        (HEADER + "A,,,1850,,\n", "line 2: The year 1850 is outside 1990–2100"),
        (HEADER + "A,,,,maybe,\n", "line 2: active: maybe is not yes or no"),
        (HEADER + "A,,zz99,,,\n", "line 2: zz99 is not a card number"),
        (HEADER + "A,,,,\n", "line 2: 5 fields, the header has 6"),
        (HEADER + "B,,,,,\n ,,,,,x\n", "line 3: The name is empty"),
        (HEADER + "A,,aabbccdd,,,\nB,,AA:BB:CC:DD,,,\n", "line 3: Card aabbccdd is also on line 2"),
        (HEADER + "A,,,,,\nC,,,,,\nA,,,,,\n", "line 4: A is already on line 2"),
        ("", "line 1: The file is empty"),
        (b"name\nKov\x81 Stanislav\n", 'line 2: Byte 0x81 is neither UTF-8 nor Windows-1250: save the file as "CSV UTF-8"'),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "line 3: A NUL byte: this is not a CSV text file"),
        (HEADER + 'A,,,,,"unterminated\n', "not valid CSV"),
    ],
)
def test_bad_files_name_the_line_and_the_fix(data: Any, expected: Any) -> None:
    assert any(e.startswith(expected) or expected in e for e in errors_of(data)), errors_of(data)


def test_every_bad_line_is_reported_at_once() -> None:
    errors = errors_of(HEADER + "A,vip,,,,\nB,,,,,\nC,,,abc,,\n")
    assert [e.split(":")[0] for e in errors] == ["line 2", "line 4"]


def test_random_binary_garbage_is_refused_cleanly() -> None:
    import random

    rnd = random.Random(3)
    for _ in range(50):
        blob = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400)))
        try:
            parse_members_csv(blob)
        except MemberImportError as e:
            assert e.errors and all(err.line >= 1 for err in e.errors)


def test_a_file_with_an_error_writes_nothing(store: Store) -> None:
    import_text(store, HEADER + "Ambra Tomáš,,,,,\n")
    with pytest.raises(MemberImportError, match="nothing was imported") as err:
        import_text(store, HEADER + "Ambra Tomáš,honorary,aabbccdd,2026,,\nNew One,,,,,\nBad,kind?,,,,\n")
    assert str(err.value.errors[0]).startswith("line 4: kind: kind? is not a membership type")
    with store.session() as db:
        assert count(db, Member) == 1 and count(db, MemberCard) == 0 and count(db, FeePayment) == 0
        assert db.scalars(select(Member)).one().kind == "individual"


def test_a_card_held_by_someone_else_in_the_database_is_an_error(store: Store) -> None:
    import_text(store, HEADER + "Ambra Tomáš,,aabbccdd,,,\n")
    with pytest.raises(MemberImportError) as err:
        import_text(store, HEADER + "Nový Člen,,,,,\nAxamit Miloš,,AABBCCDD,,,\n")
    assert [str(e) for e in err.value.errors] == ["line 3: Card aabbccdd belongs to Ambra Tomáš; take it away from them first."]
    with store.session() as db:
        assert count(db, Member) == 1


# --- the commands --------------------------------------------------------------------------


def test_cli_import_export_and_errors(db_url: str, tmp_path: Path) -> None:
    from lavos_cli import app

    runner = CliRunner()
    out = runner.invoke(app, ["members", "import", str(SHIPPED), "--db", db_url])
    assert out.exit_code == 0, out.output
    assert "59 added" in out.output
    exported = tmp_path / "out.csv"
    out = runner.invoke(app, ["members", "export", str(exported), "--db", db_url])
    assert out.exit_code == 0 and exported.read_bytes().startswith("\ufeffmeno;typ;karty;zaplatené príspevky;aktívny;poznámka\r\n".encode())
    assert "59 member(s) written" in out.output
    out = runner.invoke(app, ["members", "import", str(exported), "--db", db_url])
    assert out.exit_code == 0 and "0 added, 0 updated, 59 unchanged" in out.output, out.output
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "Ambra Tomáš,boss,,,,\n", encoding="utf-8")
    out = runner.invoke(app, ["members", "import", str(bad), "--db", db_url])
    assert out.exit_code == 2 and "line 2: kind: boss is not a membership type" in out.output and "nothing was imported" in out.output
    out = runner.invoke(app, ["members", "import", str(tmp_path / "missing.csv"), "--db", db_url])
    assert out.exit_code == 2 and "cannot read" in out.output
    out = runner.invoke(app, ["members", "import", str(SHIPPED), "--db", "mysql://x/y"])
    assert out.exit_code == 2 and "not supported" in out.output
    assert "Example: lavos members import" in runner.invoke(app, ["members", "import", "--help"]).output
