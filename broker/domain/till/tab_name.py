"""What staff call a tab, in both languages: the one rule, for its page, its receipt and every refusal.

A game's tab is named by its table and game ("Pool 3, hra č. 12" / "Pool 3, game no. 12"; short:
"Pool 3"), a walk-in's by the label staff gave it ("Novák", "Bar"), and one with neither by its
number: "účet č. 5" / "tab no. 5", or short "č. 5" for a refusal that says "Účet %(what)s".

A sale at the bar needs no typed name: its tab is labelled by the time it opened ("Bar 18:42",
the same in both languages), and a second one in the same minute of the day "Bar 18:42 (2)", so
the unpaid list and the receipts never show two alike.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from broker.domain.refusals import Name

BAR = "Bar"


def tab_name(table: Name | None, game: int | None, label: str | None, tab_id: int, *, short: bool = False) -> Name:
    """`table`: the tab's table as staff call it (None for a walk-in); `game`: its game's number."""
    if table is not None:
        if short or game is None:
            return table
        return Name(f"{table.name}, hra č. {game}", f"{table}, game no. {game}")
    if label:
        return Name(label)
    if short:
        return Name(f"č. {tab_id}", f"tab no. {tab_id}")
    return Name(f"účet č. {tab_id}", f"tab no. {tab_id}")


def bar_label(local_now: datetime, taken: Collection[str]) -> str:
    """The label of a bar sale's tab opened at `local_now` (the venue's time), not one of `taken`
    (the labels of the business day's tabs)."""
    label = f"{BAR} {local_now:%H:%M}"
    n = 2
    found = label
    while found in taken:
        found = f"{label} ({n})"
        n += 1
    return found
