"""What counts as text a person typed: the one rule for every text the API and the pages take.

Line breaks and tabs are text (a note has lines); every other control character (Unicode
category Cc: NUL, ESC, DEL, the C1 range) is not something a person types, PostgreSQL refuses
NUL bytes outright, and a lone surrogate cannot be encoded as UTF-8 at all.
"""

from __future__ import annotations

import unicodedata

from broker.domain.refusals import N_

_TEXT_CONTROLS = frozenset("\t\n\r")


def unprintable(value: str) -> str | None:
    """Why `value` is not text the hall stores (a message id: N_), or None when it is."""
    if any(unicodedata.category(c) == "Cc" and c not in _TEXT_CONTROLS for c in value):
        return N_("contains a control character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return N_("is not valid Unicode text")
    return None
