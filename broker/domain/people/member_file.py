"""The member list as a file a committee member keeps in Excel: its columns, words and encoding (pure: no I/O).

The export is Slovak, as the club reads it (broker.domain.csv_cells.excel_csv: ';', UTF-8 with a
BOM): `meno;typ;karty;zaplatené príspevky;aktívny;poznámka`, the type riadny / kolektívny /
čestný, active áno / nie. The import takes that and the English form the list was first written
in (`name,kind,cards,fees_paid,active,note`; deploy/members/lavos-members.csv), one language per
header: a header that mixes them, or names a column of neither, is refused by its column.
Values may be in either language in either file (a committee member types "áno" under "active").

Encoding: a file Excel saved as "CSV UTF-8" (a BOM) or any other UTF-8 is UTF-8; anything else
is read as Windows-1250, what Slovak Windows Excel writes as plain "CSV". UTF-8 goes first
because a Windows-1250 Slovak text is almost never valid UTF-8 (an accented letter there is one
byte from 0x80 up, which UTF-8 allows only inside a multi-byte sequence it must also end right),
while ASCII reads the same in both.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

from broker.domain.people.membership import MemberError
from broker.domain.refusals import N_

Language = Literal["sk", "en"]
# The columns by their key (the English name), in the file's order.
COLUMNS = ("name", "kind", "cards", "fees_paid", "active", "note")
SK_COLUMNS = ("meno", "typ", "karty", "zaplatené príspevky", "aktívny", "poznámka")
HEADERS: dict[Language, tuple[str, ...]] = {"sk": SK_COLUMNS, "en": COLUMNS}

KIND_WORDS: dict[str, str] = {"individual": "riadny", "collective": "kolektívny", "honorary": "čestný"}
YES_NO: dict[Language, tuple[str, str]] = {"sk": ("áno", "nie"), "en": ("yes", "no")}

_BOM = b"\xef\xbb\xbf"
FALLBACK_ENCODING = "cp1250"


def _key(text: str) -> str:
    """A cell as it is matched: trimmed, lower case, without accents ("Aktívny" = "aktivny")."""
    decomposed = unicodedata.normalize("NFKD", text.strip().lower())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


_HEADER_KEYS: dict[str, tuple[Language, str]] = {
    **{_key(sk): ("sk", en) for sk, en in zip(SK_COLUMNS, COLUMNS)},
    **{_key(en): ("en", en) for en in COLUMNS},
}
# Earlier Slovak words for the types (the dashboard said "individuálne", "čestné") still read.
_KINDS: dict[str, str] = {
    **{_key(k): k for k in KIND_WORDS},
    **{_key(sk): k for k, sk in KIND_WORDS.items()},
    **{_key(w): "individual" for w in ("individuálne", "individuálny", "riadny člen")},
    **{_key(w): "collective" for w in ("kolektívne", "kolektívny člen")},
    **{_key(w): "honorary" for w in ("čestné", "čestný člen")},
}
_YES = {_key(w) for w in ("yes", "y", "true", "1", "áno", "a")}
_NO = {_key(w) for w in ("no", "n", "false", "0", "nie")}


@dataclass(frozen=True)
class HeaderProblem:
    """Why a header line cannot be read: an English message id with its parameters (refusals)."""

    msgid: str
    params: dict[str, object]


@dataclass(frozen=True)
class Header:
    """A header line read: each column's key (None for one not understood) and the file's language."""

    keys: tuple[str | None, ...]
    language: Language
    problems: tuple[HeaderProblem, ...]

    def name_of(self, key: str) -> str:
        """What the file calls the column `key` (in messages about its values)."""
        return HEADERS[self.language][COLUMNS.index(key)]


def _listing(language: Language) -> str:
    return ";".join(HEADERS[language]) if language == "sk" else ",".join(HEADERS[language])


def read_header(cells: list[str]) -> Header:
    """The header's columns; problems name each column that is unknown, in the other language, or twice."""
    found = [_HEADER_KEYS.get(_key(c)) for c in cells]
    languages = [f[0] for f in found if f is not None]
    # The language of most known columns (Slovak on a tie: the export's); the rest are "mixed".
    language: Language = "en" if languages.count("en") > languages.count("sk") else "sk"
    both = f"{_listing('sk')} ({_listing('en')})"
    problems: list[HeaderProblem] = []
    unknown = [c.strip() for c, f in zip(cells, found) if f is None]
    if unknown:
        problems.append(
            HeaderProblem(N_("Unknown columns %(unknown)s; the columns are %(columns)s."), {"unknown": ", ".join(unknown), "columns": both})
        )
    other = [c.strip() for c, f in zip(cells, found) if f is not None and f[0] != language]
    if other:
        problems.append(
            HeaderProblem(
                N_("The header mixes Slovak and English column names (%(columns)s); write all of them in one language: %(sk)s or %(en)s."),
                {"columns": ", ".join(other), "sk": _listing("sk"), "en": _listing("en")},
            )
        )
    keys = [f[1] if f is not None else None for f in found]
    twice = [HEADERS[language][COLUMNS.index(k)] for k in COLUMNS if keys.count(k) > 1]
    if twice:
        problems.append(HeaderProblem(N_("The columns %(columns)s appear more than once."), {"columns": ", ".join(twice)}))
    if "name" not in keys:
        problems.append(
            HeaderProblem(
                N_("There is no %(name)s column; the first line must be a header such as %(columns)s."),
                {"name": HEADERS[language][0], "columns": _listing(language)},
            )
        )
    return Header(tuple(keys), language, tuple(problems))


def kind_of(text: str, *, column: str, language: Language) -> str | None:
    """The membership type a cell names (None for an empty one); MemberError naming the column otherwise."""
    if not text.strip():
        return None
    kind = _KINDS.get(_key(text))
    if kind is None:
        words = ", ".join(KIND_WORDS.values()) if language == "sk" else ", ".join(KIND_WORDS)
        raise MemberError(
            N_("%(column)s: %(kind)s is not a membership type (%(kinds)s)."), column=column, kind=text.strip()[:40], kinds=words
        )
    return kind


def active_of(text: str, *, column: str, language: Language) -> bool | None:
    """Whether a cell says yes (None for an empty one); MemberError naming the column otherwise."""
    key = _key(text)
    if not key:
        return None
    if key not in _YES | _NO:
        yes, no = YES_NO[language]
        raise MemberError(N_("%(column)s: %(value)s is not %(yes)s or %(no)s."), column=column, value=text.strip()[:40], yes=yes, no=no)
    return key in _YES


def kind_text(kind: str) -> str:
    """A membership type as the export writes it."""
    return KIND_WORDS.get(kind, kind)


def active_text(active: bool) -> str:
    yes, no = YES_NO["sk"]
    return yes if active else no


class NotText(ValueError):
    """The bytes are not a text file in an encoding we read: `line` and `byte` say where."""

    def __init__(self, line: int, byte: int | None) -> None:
        self.line, self.byte = line, byte
        super().__init__(f"line {line}: not text")


def decode(data: bytes) -> tuple[str, str]:
    """(the text, the encoding it was read in): UTF-8 (with or without a BOM), else Windows-1250.

    NotText for a file with a NUL byte (a spreadsheet's own format, a picture) or a byte neither
    encoding has."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if b"\x00" in data:
        raise NotText(data[: data.index(b"\x00")].count(b"\n") + 1, None)
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode(FALLBACK_ENCODING), FALLBACK_ENCODING
    except UnicodeDecodeError as e:
        raise NotText(data[: e.start].count(b"\n") + 1, data[e.start]) from None
