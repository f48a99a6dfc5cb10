"""CSV that is safe to open in a spreadsheet: text that would run as a formula is written as text.

Excel and LibreOffice treat a cell that starts with = + - @ (or a tab or carriage return before
one) as a formula: a member named =HYPERLINK("http://evil","Click") becomes a live link, and
worse formulas can reach other cells or, with DDE, run programs. OWASP's rule is applied to every
text cell: it gets a leading single quote, which the spreadsheet shows as text.

Only text is guarded: numbers the code computed (int, float, Decimal) are written as they are, so
a correction of -2.00 stays a number a spreadsheet can sum. A name that already starts with
quotes before such a character gets one more, so that `unguard` (the member import) gives back
exactly the text that was exported: export → import changes nothing.

`excel_csv` is the one CSV this project hands a person (the reports, the Z report, the member
list): the file Slovak Excel opens right with a double click.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

# Optional quotes, then a character a spreadsheet starts a formula with.
_FORMULA = re.compile(r"'*[=+\-@\t\r]")
_GUARDED = re.compile(r"'+[=+\-@\t\r]")


def guard(value: object) -> object:
    """A cell as it may go into the file: text that would start a formula gets a leading quote."""
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def unguard(text: str) -> str:
    """The text `guard` was given (for a cell read back from our own export)."""
    return text[1:] if _GUARDED.match(text) else text


class SafeWriter:
    """csv.writer with every text cell guarded; the one way this project writes CSV.

    Lines end in CRLF (RFC 4180): the csv module quotes a cell only for the characters of its
    line terminator, so with "\n" a note holding a lone CR was written bare, and a spreadsheet
    broke the row there, the rest of the cell starting a new (unguarded) row.

    decimal_comma=True writes numbers as Slovak Excel reads them (12,50; with delimiter ";"):
    the cell is still a number there, never guarded, so a -2,00 correction still sums.
    """

    def __init__(self, out: SupportsWrite[str], *, delimiter: str = ",", decimal_comma: bool = False) -> None:
        self._writer = csv.writer(out, delimiter=delimiter, lineterminator="\r\n")
        self._comma = decimal_comma

    def _cell(self, value: object) -> object:
        if self._comma and isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            return str(value).replace(".", ",")
        return guard(value)

    def writerow(self, row: Iterable[object]) -> None:
        self._writer.writerow([self._cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


# Slovak Excel's CSV: without a BOM it reads the file in the Windows code page (the accents
# break), with "," as the separator it puts each whole line in one cell ("," is its decimal mark).
EXCEL_DELIMITER = ";"
EXCEL_ENCODING = "utf-8-sig"  # UTF-8 with a BOM


def excel_csv(rows: Iterable[Iterable[object]]) -> bytes:
    """The CSV Slovak Excel opens with a double click: UTF-8 with a BOM, ';' between cells,
    decimal commas, CRLF line ends, every text cell guarded against formulas."""
    out = io.StringIO(newline="")
    SafeWriter(out, delimiter=EXCEL_DELIMITER, decimal_comma=True).writerows(rows)
    return out.getvalue().encode(EXCEL_ENCODING)
