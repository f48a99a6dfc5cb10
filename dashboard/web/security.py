"""Cookies and headers: the signed session cookie, its secret, and the security headers of pages."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from broker.accounts.logins import LIFETIME
from dashboard.api.headers import SecurityHeaders

SESSION_COOKIE = "lavos_session"
# The browser may keep the cookie as long as a login can live; Starlette re-sends it with every
# answer, but the login's end is its server-side row's expires_at (login + LIFETIME), never moved.
SESSION_MAX_AGE_S = int(LIFETIME.total_seconds())
SECRET_BYTES = 32

# Only our own files: the dashboard must work on the LAN with the internet down, and a page
# that can load nothing foreign cannot be made to run anything foreign either.
PAGE_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        b"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
        b"form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
]


def load_secret(path: Path) -> str:
    """The cookie-signing secret in `path`, created (0600, random) at first start.

    Kept in a file so that a restart does not log everybody out; whoever reads it can forge
    any login, hence 0600 and created with O_EXCL (never through a world-readable moment).
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        secret = path.read_text(encoding="utf-8").strip()
        if len(secret) < 32:
            raise ValueError(f"the web secret file {path} holds fewer than 32 characters; delete it and a new one is made") from None
        return secret
    secret = secrets.token_urlsafe(SECRET_BYTES)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secret + "\n")
    return secret


class SessionCookies:
    """Starlette's signed session cookie (HTTP-only, SameSite=Lax), marked Secure when it must be.

    It carries the login's id and the CSRF token only (dashboard.api.auth).

    Secure when configured (`lavos server --https-cookies`) or when the request came over https:
    uvicorn sets the scheme from X-Forwarded-Proto for a trusted reverse proxy (--forwarded-allow-ips),
    so a TLS-terminating proxy in front gets Secure cookies with no flag. Over plain http on the
    LAN a Secure cookie would never be sent back, so it cannot be the default.
    """

    def __init__(self, app: ASGIApp, secret: str, always_secure: bool = False) -> None:
        common: dict[str, Any] = {"secret_key": secret, "session_cookie": SESSION_COOKIE, "max_age": SESSION_MAX_AGE_S, "same_site": "lax"}
        self.secure = SessionMiddleware(app, https_only=True, **common)
        self.plain = self.secure if always_secure else SessionMiddleware(app, https_only=False, **common)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.secure if scope.get("scheme") in ("https", "wss") else self.plain
        await chosen(scope, receive, send)


class PageHeaders(SecurityHeaders):
    """The pages' headers on every response of the pages app; the API's own wrap the whole app."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app, PAGE_HEADERS)
