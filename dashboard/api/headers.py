"""Security headers on every response, as a pure ASGI middleware (SSE streams pass untouched)."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# JSON loads nothing and is never framed: a browser that renders an API answer as a page (a
# mistyped URL, an attacker's iframe) gets no scripts, no styles and no frame to sit in.
API_HEADERS = [
    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
]


class SecurityHeaders:
    """Adds `headers` to every HTTP response that does not set them itself (an inner app's win)."""

    def __init__(self, app: ASGIApp, headers: list[tuple[bytes, bytes]] = API_HEADERS) -> None:
        self.app = app
        self.headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in self.headers if h[0] not in present]
            await send(message)

        await self.app(scope, receive, with_headers)
