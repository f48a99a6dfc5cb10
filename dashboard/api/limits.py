"""Request bodies: bounded per route, read only once the caller is known, never waited on forever.

FastAPI reads and parses a body before it solves a route's dependencies, the login included, so
without this an anonymous client could make the server hold a JSON body of any size, or spool a
multipart one to a temporary file, before the 401. `BodyLimits` is a pure ASGI middleware, one
around the API (its caps below) and one around the pages (dashboard.web.limits), both inside the
session cookie middleware (so `request.session` exists):

- A request with a body to a route that needs a login is authenticated first, by the same
  functions the route's dependency calls (dashboard.api.auth); the refusal is sent before a byte
  of the body is read. The route checks the role and CSRF as it always did.
- The body is capped by the first `Cap` whose path matches: a Content-Length above the cap is
  refused on the first read, a body that streams past it (chunked, or longer than declared) is
  cut there. The app's receive raises HTTPException(413), so the app's own handlers answer:
  JSON under /api, the error page in the visitor's language on pages.
- A body that stops arriving for BODY_IDLE_S ends with 408.
- A response sent while the body is still unread closes the connection: the rest is never read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from dataclasses import dataclass

import anyio.to_thread
from fastapi import HTTPException
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from broker.domain.people.membership import MAX_IMPORT_BYTES
from broker.hall.facade import HubFacade
from dashboard.api.auth import client_address, cookie_user, user_from_authorization

KIB = 1024
# The largest JSON the API takes (a member: name 200, note 2000, reason 500 characters) is under
# 35 kB even with every character a \u escape; an API client sends far less.
API_BODY_BYTES = 64 * KIB
BODY_IDLE_S = 30.0  # a LAN upload never pauses this long; a stalled one holds a connection and a task
API_PREFIX = "/api/"
_CLOSE = (b"connection", b"close")


@dataclass(frozen=True)
class Cap:
    path: str  # an exact path, or a prefix when it ends with "/"
    max_bytes: int
    message: str  # the 413's detail: English for the API, a msgid the pages translate

    def matches(self, path: str) -> bool:
        return path.startswith(self.path) if self.path.endswith("/") else path == self.path


API_CAPS = (
    Cap("/api/members/import", MAX_IMPORT_BYTES, f"the file is larger than {MAX_IMPORT_BYTES // KIB} kB; split it"),
    Cap(API_PREFIX, API_BODY_BYTES, f"the request body is larger than {API_BODY_BYTES // KIB} kB, more than any API route takes"),
)
API_STALLED = f"the request body stopped arriving for {BODY_IDLE_S:.0f} s"


def _declared_length(headers: Headers) -> int | None:
    value = headers.get("content-length")
    return int(value) if value is not None and value.isdigit() else None


def has_body(headers: Headers) -> bool:
    return bool(_declared_length(headers)) or "transfer-encoding" in headers


class BodyLimits:
    """Caps, login-before-body and the stall timeout for the paths one of `caps` matches.

    `public`: the paths that need no login (None: none does here, the app checks its callers itself
    once the capped body is in: the centre, dashboard.web.central). `api`: refuse an anonymous caller
    with the API's 401 JSON (else the pages' 303 to /login). `skip`: path prefixes another instance handles.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        caps: tuple[Cap, ...],
        public: Collection[str] | None,
        api: bool,
        stalled_message: str,
        skip: tuple[str, ...] = (),
        login_location: Callable[[Request], str] | None = None,
    ) -> None:
        self.app = app
        self.login_location = login_location  # the pages: where an anonymous form post goes to log in
        self.caps = caps
        self.public = frozenset(public) if public is not None else None
        self.api = api
        self.stalled_message = stalled_message
        self.skip = skip

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        cap = self._cap(path) if scope["type"] == "http" else None
        if cap is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        body = has_body(headers)
        if body and self.public is not None and path not in self.public:
            refusal = await self._refuse_anonymous(scope, headers)
            if refusal is not None:
                refusal.headers.append("connection", "close")
                await refusal(scope, receive, send)
                return
        reader = _CappedBody(receive, cap, _declared_length(headers), self.stalled_message, body=body)

        async def closing_send(message: Message) -> None:
            if message["type"] == "http.response.start" and not reader.complete:
                message["headers"] = [*message.get("headers", []), _CLOSE]
            await send(message)

        await self.app(scope, reader.receive, closing_send)

    def _cap(self, path: str) -> Cap | None:
        if any(path.startswith(prefix) for prefix in self.skip):
            return None
        return next((c for c in self.caps if c.matches(path)), None)

    async def _refuse_anonymous(self, scope: Scope, headers: Headers) -> Response | None:
        """None when the caller is a known, active user; else the response that turns them away."""
        # The HubFacade the routes use (the app's state, as dashboard.api.deps reads it): the same login checks.
        hub: HubFacade = scope["app"].state.hub
        header = headers.get("authorization")
        try:
            if header is None and await anyio.to_thread.run_sync(cookie_user, hub, Request(scope)) is not None:
                return None
            if not self.api:
                # As require_page answers an anonymous POST: log in, then back to the form's page.
                return RedirectResponse(self.login_location(Request(scope)) if self.login_location else "/login", status_code=303)
            # The caller's address, as the route's own check passes it: wrong passwords slow down
            # the address that sent them, not everybody who reaches this middleware.
            client = client_address(Request(scope))
            await anyio.to_thread.run_sync(lambda: user_from_authorization(hub, header, client=client))
        except HTTPException as e:
            return JSONResponse({"detail": e.detail}, status_code=e.status_code, headers=dict(e.headers or {}))
        return None


class _CappedBody:
    """The app's receive: counts the body against its cap and times out a stalled one."""

    def __init__(self, receive: Receive, cap: Cap, declared: int | None, stalled_message: str, *, body: bool) -> None:
        self._receive = receive
        self.cap = cap
        self.declared = declared
        self.stalled_message = stalled_message
        self.seen = 0
        self.complete = not body  # no body: nothing left to read

    async def receive(self) -> Message:
        if self.complete:  # the body is in: what is left to wait for is the disconnect, however long
            return await self._receive()
        if self.declared is not None and self.declared > self.cap.max_bytes:
            raise HTTPException(413, self.cap.message)
        try:
            async with asyncio.timeout(BODY_IDLE_S):
                message = await self._receive()
        except TimeoutError:
            raise HTTPException(408, self.stalled_message) from None
        if message["type"] == "http.request":
            self.seen += len(message.get("body", b""))
            if self.seen > self.cap.max_bytes:
                raise HTTPException(413, self.cap.message)
            self.complete = not message.get("more_body", False)
        else:
            self.complete = True  # disconnected
        return message
