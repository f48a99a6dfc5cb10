"""Messages in the visitor's language from inside a route, before render() sets the language.

A route that refuses input raises an error whose text becomes the error page; at that moment the
template's language context is not set yet, so the message is translated here from the cookie.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from dashboard.web import i18n


def translated(request: Request, message: str, **values: Any) -> str:
    text = i18n.translations(i18n.lang_of(request)).gettext(message)
    return text % values if values else text


def refusal(request: Request, error: object) -> str:
    """A refusal raised by the hub, or a CSV line error (a msgid and params), in the visitor's language."""
    return i18n.refusal_text(error, i18n.lang_of(request))
