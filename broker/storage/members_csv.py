"""Member registry as CSV: import (all or nothing, idempotent) and export.

The file's columns, words and encoding are broker.domain.people.member_file's: the export is the Slovak
Excel file (`meno;typ;karty;zaplatené príspevky;aktívny;poznámka`), the import also reads the
English form (`name,kind,cards,fees_paid,active,note`), UTF-8 or Windows-1250. cards and the paid
years hold several values separated by spaces. Only the name is required; a missing column leaves
that field alone. A row is matched to a member by name. Import adds members, sets
kind/active/note, and adds cards and fee years that are not recorded yet; it never removes a card
or a payment (that is money and history: do it one by one, with a reason). Re-importing the
export changes nothing.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload

from broker.domain.csv_cells import excel_csv, unguard
from broker.domain.json_shape import derived, every_field_sent
from broker.domain.people import member_file
from broker.domain.people.member_file import SK_COLUMNS, Header, NotText, active_of, active_text, kind_of, kind_text, read_header
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
from broker.storage.models import Member, MemberCard


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
    try:
        return member_file.decode(data)[0]
    except NotText as e:
        if e.byte is None:
            raise MemberImportError([LineError(e.line, N_("A NUL byte: this is not a CSV text file (export the sheet as CSV)."))]) from None
        raise MemberImportError(
            [
                LineError(
                    e.line,
                    N_('Byte 0x%(byte)02x is neither UTF-8 nor Windows-1250: save the file as "CSV UTF-8" (Excel: Save As → CSV UTF-8).'),
                    {"byte": e.byte},
                )
            ]
        ) from None


def _parse_row(line: int, header: Header, values: dict[str, str]) -> MemberRow:
    """One data row (by column key) → MemberRow; raises MemberError naming the column as the file does."""
    row = MemberRow(line, clean_name(values["name"]))
    row.kind = kind_of(values.get("kind", ""), column=header.name_of("kind"), language=header.language)
    row.cards = [normalize_uid(u) for u in values.get("cards", "").split()]
    for token in values.get("fees_paid", "").replace(",", " ").replace(";", " ").split():
        if not (token.isascii() and token.isdigit()):
            raise MemberError(
                N_("%(column)s: %(value)s is not a year (e.g. 2026; several separated by spaces)."),
                column=header.name_of("fees_paid"),
                value=token[:40],
            )
        row.fees_paid.append(check_year(int(token)))
    row.active = active_of(values.get("active", ""), column=header.name_of("active"), language=header.language)
    if "note" in values:
        row.note = values["note"].strip()
    return row


def parse_members_csv(data: bytes) -> list[MemberRow]:
    """Parse and check a whole file (UTF-8 with or without a BOM, or Windows-1250; ',' or ';' separated;
    a Slovak or an English header).

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
                    {"columns": ";".join(SK_COLUMNS)},
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
        header = read_header(next(reader))
        if header.problems:
            raise MemberImportError([LineError(1, p.msgid, p.params) for p in header.problems])
        for values in reader:
            line = reader.line_num
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header.keys):
                errors.append(
                    LineError(
                        line,
                        N_("%(fields)d fields, the header has %(header)d; put a value that holds a %(delimiter)s in quotes."),
                        {"fields": len(values), "header": len(header.keys), "delimiter": f"'{delimiter}'"},
                    )
                )
                continue
            try:
                cells = {k: unguard(v) for k, v in zip(header.keys, values) if k is not None}  # our export's formula guard
                row = _parse_row(line, header, cells)
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


def export_members_csv(db: Session) -> bytes:
    """The whole registry as the Slovak Excel file (broker.domain.csv_cells.excel_csv), sorted by
    name; importing it changes nothing.

    Names and notes that a spreadsheet would run as formulas are quoted (broker.domain.csv_cells); the
    import takes the quote off again.
    """
    members = db.scalars(
        select(Member).options(selectinload(Member.cards), selectinload(Member.fees)).order_by(Member.name_key, Member.name)
    )
    rows: list[list[object]] = [list(SK_COLUMNS)]
    rows += [
        [
            m.name,
            kind_text(m.kind),
            " ".join(c.uid for c in m.cards),
            " ".join(str(f.year) for f in m.fees),  # text, not numbers: "2025 2026" is one cell
            active_text(m.active),
            m.note,
        ]
        for m in members
    ]
    return excel_csv(rows)
