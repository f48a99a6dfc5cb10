"""What a standby `lavos server` answers over HTTP until it becomes the hub.

It holds no hub (no database state, no MQTT session), so it has nothing of the hall to show:
`/api/health` answers 503 with `"role": "standby"` (keepalived or a load balancer checks it and
sends the tablets to the active hub, which answers 200), other API paths a 503 JSON detail, and
every page a short 503 page in the staff's language that reloads itself, so a screen left on it
shows the dashboard once this process takes over.

`SwitchableApp` is the ASGI app `lavos server` runs: the standby app first, the real dashboard
once the hub is built, without closing the listening socket (uvicorn runs with lifespan off, so
there is no start-up event to replay for the app switched in).
"""

from __future__ import annotations

import html
import json
from typing import Any

from dashboard.web.i18n import DEFAULT_LANG, LANG_COOKIE, LANGS, translations

RETRY_AFTER_S = 5
_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"retry-after", str(RETRY_AFTER_S).encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"default-src 'self'"),
    (b"referrer-policy", b"same-origin"),
]


def _lang(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            for part in value.decode("latin-1").split(";"):
                key, _, val = part.strip().partition("=")
                if key == LANG_COOKIE and val in LANGS:
                    return str(val)  # a str already: the scope is Any to mypy
    return DEFAULT_LANG


def standby_page(lang: str) -> str:
    _ = translations(lang).gettext
    title = _("This is the standby hub")
    text = _(
        "This process takes over when the active hub stops. Open the hall's address (the active hub) instead; this page reloads itself."
    )
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="{RETRY_AFTER_S}"><title>{html.escape(title)}</title></head>'
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>"
    )


async def standby_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The ASGI app of a standby: 503 everywhere, saying so."""
    if scope["type"] != "http":
        return
    path = scope.get("path", "")
    if path == "/api/health":
        body = json.dumps({"ok": False, "role": "standby", "mqtt": None, "db": None, "backend": "postgresql"}).encode()
        ctype = b"application/json"
    elif path.startswith("/api/") or path == "/openapi.json":
        body = json.dumps({"detail": translations(_lang(scope)).gettext("This is the standby hub")}).encode()
        ctype = b"application/json"
    else:
        body = standby_page(_lang(scope)).encode()
        ctype = b"text/html; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), *_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SwitchableApp:
    """Delegates to `app`, which may be replaced while serving (requests in flight finish on the old one)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
