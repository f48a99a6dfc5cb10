"""What the pages take as text is text: one check of every form field, query parameter and path
part of every page request, before the route runs.

The JSON API refuses a control character (NUL, ESC, ...) in any text field (dashboard.api.schemas);
the pages read their forms with plain `Form()` strings and some with `request.form()`, so without
this a NUL typed into a walk-in tab's name was stored (and PostgreSQL refuses NUL bytes outright).
Checked here once, by the same rule (broker.domain.plain_text), for every page there is and every page to come:
the app-wide dependency of the pages (dashboard.web.app.create_web) runs before the route's own.
"""

from __future__ import annotations

from fastapi import Request

from broker.domain.plain_text import unprintable

_FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


class UnprintableInput(Exception):
    """A part of the request holds a control character: `where` it is ("path", "query" or "form"),
    `field` the name it came under ("?" when the name itself holds it), `problem` (a msgid) says what."""

    def __init__(self, where: str, field: str, problem: str) -> None:
        super().__init__(f"{where} {field}: {problem}")
        self.where = where
        self.field = field
        self.problem = problem


def _check(where: str, pairs: list[tuple[str, object]]) -> None:
    for name, value in pairs:
        for text in (name, value):
            if isinstance(text, str) and (problem := unprintable(text)) is not None:
                raise UnprintableInput(where, name if text is value else "?", problem)


async def printable_input(request: Request) -> None:
    """FastAPI dependency of every page: UnprintableInput (a 400 page) for a control character anywhere."""
    _check("path", list(request.path_params.items()))
    _check("query", list(request.query_params.multi_items()))
    if request.method != "GET" and request.headers.get("content-type", "").startswith(_FORMS):
        try:
            form = await request.form()  # Starlette caches it: the route's Form() fields read this same parse
        except Exception:  # noqa: BLE001 - not a form after all: the route refuses it as it always has
            return
        _check("form", list(form.multi_items()))
