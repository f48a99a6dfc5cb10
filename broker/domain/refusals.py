"""Refusals a person reads: an English message id with named parameters, translated where shown.

The hub refuses in English (logs, the JSON API's `detail`); a page shows the same refusal in the
staff's language by looking `msgid` up in the dashboard's catalogues and filling in `params`.
`N_` only marks a literal for extraction (`python -m dashboard.web.i18n_tools` scans broker/ too).

    raise ServiceError(N_("%(table)s already has game no. %(session)d running; stop or move it first."),
                       table=table_name, session=session_id)

Pass names people know (a table's display name, a member's name), never ids.
"""

from __future__ import annotations

from typing import Any


def N_(msgid: str) -> str:
    """Marks `msgid` for the catalogues; returns it unchanged (translation happens on display)."""
    return msgid


class Refusal(ValueError):
    """Base of every refusal a person may see. str() is the English text with `params` filled in."""

    def __init__(self, msgid: str, /, **params: Any) -> None:
        self.msgid = msgid
        self.params = params
        super().__init__(msgid % params if params else msgid)
