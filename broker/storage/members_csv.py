"""Member registry as CSV: import (all or nothing, idempotent) and export.

Columns: name,kind,cards,fees_paid,active,note. cards and fees_paid hold several values separated
by spaces. Only name is required; a missing column leaves that field alone. A row is matched to
a member by name. Import adds members, sets kind/active/note, and adds cards and fee years that
are not recorded yet; it never removes a card or a payment (that is money and history: do it
one by one, with a reason). Re-importing the same file changes nothing.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from broker.domain.csv_cells import SafeWriter, unguard
from broker.domain.json_shape import derived, every_field_sent
from broker.domain.refusals import N_, Refusal
from broker.storage.members import (
    DEFAULT_FEE_CENTS,
    MemberError,
    add_member,
    assign_card,
    check_year,
    clean_name,
    edit_member,
    fee_paid,
    find_by_name,
    normalize_uid,
    record_fee,
)
from broker.storage.models import MEMBER_KINDS, Member, MemberCard

COLUMNS = ("name", "kind", "cards", "fees_paid", "active", "note")
# The largest file an import takes (the API and the page refuse more before reading it): the
# club's 59 members are 3 kB, this is room for a chain of clubs.
_BOM = b"\xef\xbb\xbf"
# Slovak spellings, as a committee member would type them in Excel.
_KIND_ALIASES = {
    "individuálne": "individual",
    "individualne": "individual",
    "individuálny": "individual",
    "kolektívne": "collective",
    "kolektivne": "collective",
    "kolektívny": "collective",
    "čestné": "honorary",
    "cestne": "honorary",
    "čestný": "honorary",
}
_YES = {"yes", "y", "true", "1", "áno", "ano", "a"}
_NO = {"no", "n", "false", "0", "nie"}


@dataclass(frozen=True)
class LineError:
    """One bad line: an English message id and its params (broker.domain.refusals), so the page
    can say it in the staff's language; `message` is the English text (API, CLI)."""

    line: int
    msgid: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, line: int, refusal: Refusal) -> LineError:
        return cls(line, refusal.msgid, dict(refusal.params))

    @property
    def message(self) -> str:
        return self.msgid % self.params if self.params else self.msgid

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class MemberImportError(ValueError):
    """The file has errors; nothing was written. .errors lists them by line."""

    def __init__(self, errors: list[LineError]) -> None:
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:50])
        more = f"\n  … and {len(errors) - 50} more" if len(errors) > 50 else ""
        super().__init__(f"{len(errors)} error(s) in the member file, nothing was imported; fix them and import again:\n{shown}{more}")


@dataclass
class MemberRow:
    line: int
    name: str
    kind: str | None = None
    cards: list[str] = field(default_factory=list)
    fees_paid: list[int] = field(default_factory=list)
    active: bool | None = None
    note: str | None = None


@every_field_sent
@dataclass
class ImportReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    cards_added: int = 0
    fees_added: int = 0

    @derived
    def summary(self) -> str:
        return (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged; "
            f"{self.cards_added} card(s) and {self.fees_added} fee year(s) recorded"
        )

    def __str__(self) -> str:
        return self.summary


def _decode(data: bytes) -> str:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise MemberImportError([LineError(line, N_("A NUL byte: this is not a CSV text file (export the sheet as CSV)."))])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise MemberImportError(
            [
                LineError(
                    line,
                    N_('Byte 0x%(byte)02x is not UTF-8: save the file as "CSV UTF-8" (Excel: Save As → CSV UTF-8).'),
                    {"byte": data[e.start]},
                )
            ]
        ) from None


def _header(row: list[str]) -> list[LineError]:
    names = [c.strip().lower() for c in row]
    errors = []
    unknown = [c for c in names if c not in COLUMNS]
    if unknown:
        errors.append(
            LineError(
                1,
                N_("Unknown columns %(unknown)s; the columns are %(columns)s."),
                {"unknown": ", ".join(unknown), "columns": ",".join(COLUMNS)},
            )
        )
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        errors.append(LineError(1, N_("The columns %(columns)s appear more than once."), {"columns": ", ".join(twice)}))
    if "name" not in names:
        errors.append(
            LineError(
                1, N_("There is no name column; the first line must be a header such as %(columns)s."), {"columns": ",".join(COLUMNS)}
            )
        )
    return errors


def _parse_row(line: int, values: dict[str, str]) -> MemberRow:
    """One data row → MemberRow; raises MemberError naming the field."""
    row = MemberRow(line, clean_name(values["name"]))
    if kind := values.get("kind", "").strip().lower():
        row.kind = _KIND_ALIASES.get(kind, kind)
        if row.kind not in MEMBER_KINDS:
            raise MemberError(N_("%(kind)s is not a membership type (%(kinds)s)."), kind=kind[:40], kinds=", ".join(MEMBER_KINDS))
    row.cards = [normalize_uid(u) for u in values.get("cards", "").split()]
    for token in values.get("fees_paid", "").replace(",", " ").replace(";", " ").split():
        if not (token.isascii() and token.isdigit()):
            raise MemberError(N_("fees_paid: %(value)s is not a year (e.g. 2026; several separated by spaces)."), value=token[:40])
        row.fees_paid.append(check_year(int(token)))
    if active := values.get("active", "").strip().lower():
        if active not in _YES | _NO:
            raise MemberError(N_("active: %(value)s is not yes or no."), value=active[:40])
        row.active = active in _YES
    if "note" in values:
        row.note = values["note"].strip()
    return row


def parse_members_csv(data: bytes) -> list[MemberRow]:
    """Parse and check a whole file (UTF-8, with or without BOM; ',' or ';' separated).

    Raises MemberImportError listing every bad line, not just the first.
    """
    text = _decode(data)
    first = text.split("\n", 1)[0]
    if not first.strip():
        raise MemberImportError(
            [
                LineError(
                    1,
                    N_("The file is empty or starts with a blank line; the first line must be a header such as %(columns)s."),
                    {"columns": ",".join(COLUMNS)},
                )
            ]
        )
    delimiter = ";" if first.count(";") > first.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    errors: list[LineError] = []
    rows: list[MemberRow] = []
    seen_names: dict[str, int] = {}
    seen_cards: dict[str, int] = {}
    try:
        header = [c.strip().lower() for c in next(reader)]
        errors += _header(header)
        if errors:
            raise MemberImportError(errors)
        for values in reader:
            line = reader.line_num
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                errors.append(
                    LineError(
                        line,
                        N_("%(fields)d fields, the header has %(header)d; put a value that holds a %(delimiter)s in quotes."),
                        {"fields": len(values), "header": len(header), "delimiter": f"'{delimiter}'"},
                    )
                )
                continue
            try:
                row = _parse_row(line, {k: unguard(v) for k, v in zip(header, values)})  # our export's formula guard
            except MemberError as e:
                errors.append(LineError.of(line, e))
                continue
            if row.name in seen_names:
                errors.append(
                    LineError(line, N_("%(name)s is already on line %(other)d."), {"name": row.name, "other": seen_names[row.name]})
                )
            seen_names.setdefault(row.name, line)
            for uid in row.cards:
                if uid in seen_cards:
                    errors.append(
                        LineError(
                            line,
                            N_("Card %(card)s is also on line %(other)d; a card belongs to one member."),
                            {"card": uid, "other": seen_cards[uid]},
                        )
                    )
                seen_cards.setdefault(uid, line)
            rows.append(row)
    except csv.Error as e:
        errors.append(LineError(reader.line_num, N_("This is not valid CSV (%(problem)s)."), {"problem": str(e)}))
    if errors:
        raise MemberImportError(errors)
    return rows


def _conflicting_cards(db: Session, rows: list[MemberRow]) -> list[LineError]:
    """Cards in the file that the database already gives to someone else."""
    owner_of = {row_uid: row.name for row in rows for row_uid in row.cards}
    if not owner_of:
        return []
    errors = []
    line_of = {uid: row.line for row in rows for uid in row.cards}
    for card in db.scalars(select(MemberCard).where(MemberCard.uid.in_(owner_of))):
        if card.member.name != owner_of[card.uid]:
            errors.append(
                LineError(
                    line_of[card.uid],
                    N_("Card %(card)s belongs to %(member)s; take it away from them first."),
                    {"card": card.uid, "member": card.member.name},
                )
            )
    return sorted(errors, key=lambda e: e.line)


def import_members_csv(db: Session, data: bytes, *, actor: str) -> ImportReport:
    """Import a member file into the registry; all of it, or (on any error) none of it.

    Checks run before the first write; the caller's transaction commits (or rolls back, if
    anything raises) the whole import.
    """
    rows = parse_members_csv(data)
    if errors := _conflicting_cards(db, rows):
        raise MemberImportError(errors)
    report = ImportReport()
    for row in rows:
        member = find_by_name(db, row.name)
        added = member is None
        if member is None:
            member = add_member(
                db,
                row.name,
                actor=actor,
                kind=row.kind or "individual",
                note=row.note or "",
                active=True if row.active is None else row.active,
            )
            changed = False
        else:
            before = (member.kind, member.active, member.note)
            edit_member(db, member.id, actor=actor, kind=row.kind, active=row.active, note=row.note, reason="member file import")
            changed = before != (member.kind, member.active, member.note)
        held = {c.uid for c in member.cards}
        for uid in row.cards:
            if uid not in held:
                assign_card(db, member.id, uid, actor=actor)
                report.cards_added += 1
                changed = True
        for year in row.fees_paid:
            if not fee_paid(member, year):
                record_fee(db, member.id, year, actor=actor, amount_cents=DEFAULT_FEE_CENTS)
                report.fees_added += 1
                changed = True
        if added:
            report.added += 1
        elif changed:
            report.updated += 1
        else:
            report.unchanged += 1
    return report


def export_members_csv(db: Session, *, delimiter: str = ",") -> str:
    """The whole registry in the import format, sorted by name; importing it changes nothing.

    Names and notes that a spreadsheet would run as formulas are quoted (broker.domain.csv_cells); the
    import takes the quote off again.
    """
    out = io.StringIO(newline="")
    writer = SafeWriter(out, delimiter=delimiter)
    writer.writerow(COLUMNS)
    members = db.scalars(
        select(Member).options(selectinload(Member.cards), selectinload(Member.fees)).order_by(Member.name_key, Member.name)
    )
    for m in members:
        writer.writerow(
            [
                m.name,
                m.kind,
                " ".join(c.uid for c in m.cards),
                " ".join(str(f.year) for f in m.fees),
                "yes" if m.active else "no",
                m.note,
            ]
        )
    return out.getvalue()
