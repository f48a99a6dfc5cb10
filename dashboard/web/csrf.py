"""CSRF protection for the pages: one random token per cookie session.

Every form carries it as a hidden field (`{{ csrf_input() }}` in templates); fetch calls send it
in the X-CSRF-Token header (base.html puts it in <meta name="csrf-token">). `verify_csrf` is the
dependency every POST route takes. The same token guards cookie-authenticated writes to the JSON
API (dashboard.api.auth), so one page token works for both.
"""

from __future__ import annotations

import secrets

from fastapi import Request
from markupsafe import Markup, escape

from dashboard.api.auth import CSRF_HEADER, SESSION_CSRF, csrf_matches

FIELD = "csrf_token"


class CsrfRefused(Exception):
    """The form came without this login's token: stale page, expired login, or forged."""


def token(request: Request) -> str:
    """This cookie's token, made on first use (so a fresh visitor to /login gets one)."""
    value = request.session.get(SESSION_CSRF)
    if not isinstance(value, str) or len(value) < 32:
        value = secrets.token_urlsafe(32)
        request.session[SESSION_CSRF] = value
    return value


def rotate(request: Request) -> None:
    """A new token at login and logout, so a token seen before login is worth nothing after."""
    request.session[SESSION_CSRF] = secrets.token_urlsafe(32)


def hidden_input(request: Request) -> Markup:
    return Markup('<input type="hidden" name="%s" value="%s">') % (FIELD, escape(token(request)))


async def verify_csrf(request: Request) -> None:
    """FastAPI dependency for every state-changing page route: the form field or the header must match."""
    supplied = request.headers.get(CSRF_HEADER)
    if not supplied and request.headers.get("content-type", "").startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        try:
            form = await request.form()  # Starlette caches it: the route's Form() fields read the same parse
        except Exception:  # noqa: BLE001 - a body that is not a form has no token either
            raise CsrfRefused() from None
        field = form.get(FIELD)
        supplied = field if isinstance(field, str) else None  # a file under the token's name is no token
    if not csrf_matches(request, supplied):
        raise CsrfRefused()
