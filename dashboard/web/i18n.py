"""Language, translations and Slovak number/date formats for the pages.

Slovak is the default (the bar speaks it), English is the second language; the choice lives in
a cookie so it survives logout. Message ids in code and templates are English; the Slovak text
is in translations/sk. Money and dates go through Babel in the chosen locale.

The language of the request being rendered sits in a ContextVar set by templating.render, so
`_()` in templates and in the helpers below needs no request argument.
"""

from __future__ import annotations

import gettext as _gettext
from contextvars import ContextVar, Token
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from babel.dates import format_date as _babel_date
from babel.dates import format_datetime as _babel_datetime
from babel.numbers import format_currency, format_decimal
from starlette.requests import Request

TRANSLATIONS = Path(__file__).parent / "translations"
DOMAIN = "messages"
LANGS = ("sk", "en")
DEFAULT_LANG = "sk"
LANG_COOKIE = "lavos_lang"
LANG_NAMES = {"sk": "Slovensky", "en": "English"}
_LOCALES = {"sk": "sk_SK", "en": "en_GB"}
# Babel separates groups and the currency sign with no-break spaces; the API's texts and staff's
# eyes expect plain ones, and CSS (white-space: nowrap on .money) keeps them on one line anyway.
_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " "})

_lang: ContextVar[str] = ContextVar("lavos_lang", default=DEFAULT_LANG)


def N_(message: str) -> str:
    """Mark a message for extraction without translating it now (translated where it is shown)."""
    return message


@cache
def translations(lang: str) -> _gettext.NullTranslations:
    # fallback=True: a missing catalogue shows the English message ids rather than failing a page.
    return _gettext.translation(DOMAIN, TRANSLATIONS, languages=[lang], fallback=True)


def lang_of(request: Request) -> str:
    lang = request.cookies.get(LANG_COOKIE, "")
    return lang if lang in LANGS else DEFAULT_LANG


def current_lang() -> str:
    return _lang.get()


def use_lang(lang: str) -> Token[str]:
    """Set the language for what follows in this context; returns the token to reset it with."""
    return _lang.set(lang if lang in LANGS else DEFAULT_LANG)


def reset_lang(token: Token[str]) -> None:
    _lang.reset(token)


def gettext(message: str) -> str:
    return translations(_lang.get()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(_lang.get()).ngettext(singular, plural, n)


_ = gettext


def refusal_text(error: object, lang: str | None = None) -> str:
    """A refusal (broker.domain.refusals.Refusal) in `lang` (default: the rendering language).

    The msgid is looked up in the catalogue and its named params filled in, a venue name
    (refusals.Name) and a refusal inside it in this language; anything else, or a msgid the catalogue lacks, reads as
    str(error), the English text.
    """
    msgid, params = getattr(error, "msgid", None), getattr(error, "params", None)
    if not isinstance(msgid, str) or not isinstance(params, dict):
        return str(error)
    lang = lang or _lang.get()
    catalogue = translations(lang)
    text = catalogue.gettext(msgid)
    values = {k: _local_name(v, lang) for k, v in params.items()}
    try:
        return text % values if values else text
    except (KeyError, TypeError, ValueError):  # a translation with a broken placeholder: say it in English
        return str(error)


def _local_name(value: object, lang: str) -> object:
    if isinstance(getattr(value, "msgid", None), str) and isinstance(getattr(value, "params", None), dict):
        return refusal_text(value, lang)  # a reason inside a longer refusal: in the same language
    if hasattr(value, "name_en") and hasattr(value, "name"):
        return value.name if lang == "sk" else (value.name_en or value.name)
    return value


def money(cents: int | None) -> str:
    """6,00 € in Slovak, €6.00 in English; integer cents in, never floats in between."""
    if cents is None:
        return ""
    whole, part = divmod(abs(int(cents)), 100)
    text = format_currency(f"{'-' if cents < 0 else ''}{whole}.{part:02d}", "EUR", locale=_LOCALES[_lang.get()])
    return text.translate(_SPACES)


def number(value: int | float) -> str:
    return format_decimal(value, locale=_LOCALES[_lang.get()]).translate(_SPACES)


def _local(dt: datetime, tz: ZoneInfo | None) -> datetime:
    if dt.tzinfo is None:  # the database hands back naive UTC on some backends
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(tz) if tz else dt


def when(dt: datetime | None, tz: ZoneInfo | None = None) -> str:
    """30. 11. 2026 18:05 in Slovak; 30 Nov 2026, 18:05 in English; in the venue's time zone."""
    if dt is None:
        return ""
    pattern = "d. M. y H:mm" if _lang.get() == "sk" else "d MMM y, HH:mm"
    return _babel_datetime(_local(dt, tz), pattern, locale=_LOCALES[_lang.get()]).translate(_SPACES)


def clock(dt: datetime | None, tz: ZoneInfo | None = None) -> str:
    """Only the time of day, 18:05 (for things that happened this evening)."""
    if dt is None:
        return ""
    return _local(dt, tz).strftime("%H:%M")


def day(d: date | None) -> str:
    if d is None:
        return ""
    pattern = "d. M. y" if _lang.get() == "sk" else "d MMM y"
    return _babel_date(d, pattern, locale=_LOCALES[_lang.get()]).translate(_SPACES)


def duration(seconds: int | float | timedelta | None) -> str:
    """1:05 h style elapsed time: hours and minutes, as a table clock reads."""
    if seconds is None:
        return ""
    if isinstance(seconds, timedelta):
        seconds = seconds.total_seconds()
    minutes = max(0, int(seconds)) // 60
    return f"{minutes // 60}:{minutes % 60:02d}"
