"""Who is calling: HTTP Basic (staff password: broker.auth_checks), a bearer token, or the dashboard's
cookie session, and their role.

`user_from_authorization`, `login` and `session_user` are plain functions returning the User, so
the cookie login pages (dashboard.web) reuse them; `StaffUser` / `ManagerUser` are the FastAPI
dependencies. A browser sends its cookie with every request, forged ones included, so a write
authenticated by the cookie alone must also carry the session's CSRF token in X-CSRF-Token.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPBearer
from fastapi.security.http import HTTPBase

from broker.auth_checks import Busy, Throttled, check_password
from broker.db.engine import Store
from broker.db.models import User
from broker.db.types import utcnow
from broker.users import AuthError, find_token, get_user, role_at_least, token_touch_due, touch_token
from dashboard.api.deps import get_service

REALM = "Lavos"
# Keys of the signed cookie session that dashboard.web logs people in with.
SESSION_USER = "user"
SESSION_CSRF = "csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
UNKNOWN_CLIENT = "unknown"  # the address of callers that pass none: they share one throttle, so HTTP code passes client_address()
_CHALLENGE = {"WWW-Authenticate": f'Basic realm="{REALM}", charset="UTF-8", Bearer realm="{REALM}"'}

# Only for the OpenAPI document (so clients see both schemes); the header is parsed below,
# because FastAPI's HTTPBasic decodes ASCII only and Slovak passwords have accents.
_basic_doc = HTTPBase(scheme="basic", auto_error=False, description="Staff username and password")
_bearer_doc = HTTPBearer(auto_error=False, description="API token from `lavos user token`")


def unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers=_CHALLENGE)


def client_address(request: Request) -> str:
    """Who is asking, for throttling: the peer address (behind a reverse proxy, uvicorn's
    --forwarded-allow-ips makes it the real client's)."""
    return request.client.host if request.client else UNKNOWN_CLIENT


def _refusal(e: AuthError) -> HTTPException:
    if isinstance(e, Throttled):
        return HTTPException(429, str(e), headers={"Retry-After": str(e.retry_after)})
    if isinstance(e, Busy):
        return HTTPException(503, str(e), headers={"Retry-After": str(e.retry_after)})
    return unauthorized(str(e))


def login(store: Store, username: str, password: str, *, client: str | None = None) -> User:
    """The user for this username and password; HTTPException 401 (wrong, or disabled), 429 (this
    client made too many wrong guesses; Retry-After) or 503 (too many logins being checked at once).

    `client` is the caller's address (client_address(request)): wrong guesses slow down that
    address, never the account's owner elsewhere.
    """
    try:
        return check_password(store, username, password, client=client or UNKNOWN_CLIENT)
    except AuthError as e:
        raise _refusal(e) from None


def _token_user(store: Store, token: str) -> User:
    now = utcnow()
    try:
        with store.reader() as db:  # a token is checked on every call: no write lock for it
            row, user = find_token(db, token)
    except AuthError as e:
        raise unauthorized(str(e)) from None
    if token_touch_due(row, now):
        with store.session() as db:
            touch_token(db, row.id, now)
    return user


def _basic_credentials(value: str) -> tuple[str, str]:
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise unauthorized("malformed Basic credentials: send base64 of username:password (UTF-8)") from None
    username, sep, password = decoded.partition(":")
    if not sep or not username:
        raise unauthorized("malformed Basic credentials: send base64 of username:password (UTF-8)")
    return username, password


def user_from_authorization(store: Store, header: str | None, *, client: str | None = None) -> User:
    """The user an Authorization header stands for; HTTPException 401/429/503 otherwise (see login).

    Pass `client=client_address(request)`: Basic credentials are throttled per client address.
    """
    if not header:
        raise unauthorized("log in: send HTTP Basic credentials or an Authorization: Bearer token")
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value:
        return _token_user(store, value)
    if scheme.lower() == "basic" and value:
        return login(store, *_basic_credentials(value), client=client)
    raise unauthorized("unsupported Authorization header: use Basic or Bearer")


def csrf_matches(request: Request, supplied: object) -> bool:
    """Whether `supplied` is this cookie session's CSRF token (constant-time compare)."""
    expected = request.session.get(SESSION_CSRF) if "session" in request.scope else None
    return (isinstance(expected, str) and isinstance(supplied, str) and bool(supplied)
            and hmac.compare_digest(expected.encode(), supplied.encode()))


def session_user(store: Store, request: Request) -> User | None:
    """The active user the cookie session names; None without a session (or its middleware)."""
    if "session" not in request.scope:
        return None
    username = request.session.get(SESSION_USER)
    if not isinstance(username, str):
        return None
    with store.reader() as db:
        user = get_user(db, username)
    # Re-read on every request: a disabled account or a changed role takes effect at once.
    return user if user is not None and user.active else None


def current_user(request: Request, _b: object = Depends(_basic_doc), _t: object = Depends(_bearer_doc)) -> User:
    store = get_service(request).store
    header = request.headers.get("authorization")
    if not header:
        user = session_user(store, request)
        if user is not None:
            if request.method not in SAFE_METHODS and not csrf_matches(request, request.headers.get(CSRF_HEADER)):
                raise HTTPException(403, f"a write with the dashboard's cookie needs the {CSRF_HEADER} header from the page; reload it")
            return user
    return user_from_authorization(store, header, client=client_address(request))


def require(role: str):  # type: ignore[no-untyped-def]
    """A dependency: the current user, if their role is at least `role` (staff < manager); else 403."""

    def dependency(user: Annotated[User, Depends(current_user)]) -> User:
        if not role_at_least(user.role, role):
            raise HTTPException(403, f"this needs the {role} role; {user.username} is {user.role}")
        return user

    dependency.__name__ = f"{role}_user"
    return dependency


staff_user = require("staff")
manager_user = require("manager")
StaffUser = Annotated[User, Depends(staff_user)]
ManagerUser = Annotated[User, Depends(manager_user)]
