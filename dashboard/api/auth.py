"""Who is calling: HTTP Basic (staff password: broker.accounts.auth_checks), a bearer token, or the dashboard's
cookie session, and their role.

`user_from_authorization`, `login` and `cookie_user` are plain functions returning the Staff
(broker.accounts.staff: a value, never the ORM row), so
the cookie login pages (dashboard.web) reuse them; `can(capability)` makes the FastAPI dependency
a route declares (dashboard.access says which role the capability needs). A browser sends its
cookie with every request, forged ones included, so a write authenticated by the cookie alone must
also carry the cookie's CSRF token in X-CSRF-Token. The cookie holds only the id of a login kept on
the server (broker.accounts.logins): logging out, a new password, disabling or a new role end it for good.
Every check that reads or writes the accounts goes through the hub's facade (broker.hall.facade).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import logging
from collections.abc import Callable
from functools import cache
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPBearer
from fastapi.security.http import HTTPBase

from broker.accounts.auth_checks import Busy, Throttled
from broker.accounts.staff import Staff, StaffLogin
from broker.accounts.users import AuthError
from broker.hall.facade import HubFacade
from dashboard import access
from dashboard.api.deps import get_hub, get_reads

log = logging.getLogger(__name__)

REALM = "Lavos"
# Keys of the signed cookie (Starlette's cookie session) that dashboard.web logs people in with:
# the login's id (broker.accounts.logins; never the username, so a copied cookie dies at logout;
# the key keeps its old short name, which the cookies out there carry) and the CSRF token.
LOGIN_ID = "sid"
SESSION_CSRF = "csrf"
# Set in the cookie when the login it named has ended (14 h, or a manager ended it): the login
# page then says why the visitor is there again (dashboard.web.pages_login). Cleared at login.
LOGIN_ENDED = "ended"
_LIVE = "lavos.login"  # request scope key: the login looked up once per request
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


def auth_refusal(e: AuthError) -> HTTPException:
    """A refused login as the API answers it: 429 (wait), 503 (busy), else 401 with the challenge."""
    if isinstance(e, Throttled):
        return HTTPException(429, str(e), headers={"Retry-After": str(e.retry_after)})
    if isinstance(e, Busy):
        return HTTPException(503, str(e), headers={"Retry-After": str(e.retry_after)})
    return unauthorized(str(e))


def login(hub: HubFacade, username: str, password: str, *, client: str | None = None) -> Staff:
    """The user for this username and password; HTTPException 401 (wrong, or disabled), 429 (this
    client made too many wrong guesses; Retry-After) or 503 (too many logins being checked at once).

    `client` is the caller's address (client_address(request)): wrong guesses slow down that
    address, never the account's owner elsewhere.
    """
    try:
        return hub.check_login(username, password, client=client or UNKNOWN_CLIENT)
    except AuthError as e:
        raise auth_refusal(e) from None


def _token_user(hub: HubFacade, token: str) -> Staff:
    try:
        return hub.token_staff(token)
    except AuthError as e:
        raise unauthorized(str(e)) from None


def _basic_credentials(value: str) -> tuple[str, str]:
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise unauthorized("malformed Basic credentials: send base64 of username:password (UTF-8)") from None
    username, sep, password = decoded.partition(":")
    if not sep or not username:
        raise unauthorized("malformed Basic credentials: send base64 of username:password (UTF-8)")
    return username, password


def user_from_authorization(hub: HubFacade, header: str | None, *, client: str | None = None) -> Staff:
    """The user an Authorization header stands for; HTTPException 401/429/503 otherwise (see login).

    Pass `client=client_address(request)`: Basic credentials are throttled per client address.
    """
    if not header:
        raise unauthorized("log in: send HTTP Basic credentials or an Authorization: Bearer token")
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value:
        return _token_user(hub, value)
    if scheme.lower() == "basic" and value:
        return login(hub, *_basic_credentials(value), client=client)
    raise unauthorized("unsupported Authorization header: use Basic or Bearer")


def csrf_matches(request: Request, supplied: object) -> bool:
    """Whether `supplied` is this cookie session's CSRF token (constant-time compare)."""
    expected = request.session.get(SESSION_CSRF) if "session" in request.scope else None
    return (
        isinstance(expected, str)
        and isinstance(supplied, str)
        and bool(supplied)
        and hmac.compare_digest(expected.encode(), supplied.encode())
    )


def _live_login(hub: HubFacade, request: Request) -> StaffLogin | None:
    """The cookie's login if it is live; looked up once per request (middleware and route share it)."""
    if "session" not in request.scope:
        return None
    if _LIVE in request.scope:
        live: StaffLogin | None = request.scope[_LIVE]  # what this function put there
        return live
    login_id = request.session.get(LOGIN_ID)
    found = None
    if isinstance(login_id, str) and login_id:
        found = hub.live_login(login_id)  # notes when it was last seen, at most every few minutes
        if found is None:
            request.session.pop(LOGIN_ID, None)  # ended or expired: the browser forgets it too
            request.session[LOGIN_ENDED] = True
    request.scope[_LIVE] = found
    return found


def remember_login(request: Request, found: StaffLogin | None) -> None:
    """After a login or logout in this request: what cookie_user answers from now on."""
    request.scope[_LIVE] = found


def cookie_user(hub: HubFacade, request: Request) -> Staff | None:
    """The active user whose live login the cookie names; None without one (or without its middleware).

    Checked on every request: an ended or expired login, a disabled account or a changed role
    take effect at once.
    """
    found = _live_login(hub, request)
    return found.staff if found is not None else None


def login_pk(request: Request) -> int | None:
    """The pk of this request's live login (after cookie_user looked it up), else None."""
    found = request.scope.get(_LIVE)
    return found.pk if found is not None else None


def password_change_pending(user: Staff) -> HTTPException:
    return HTTPException(403, f"{user.username} must change the password first: log in to the dashboard and choose a new one")


def current_user(request: Request, _b: object = Depends(_basic_doc), _t: object = Depends(_bearer_doc)) -> Staff:
    hub = get_hub(request)
    header = request.headers.get("authorization")
    if not header:
        user = cookie_user(hub, request)
        if user is not None:
            if request.method not in SAFE_METHODS and not csrf_matches(request, request.headers.get(CSRF_HEADER)):
                raise HTTPException(403, f"a write with the dashboard's cookie needs the {CSRF_HEADER} header from the page; reload it")
            if user.must_change_password:
                raise password_change_pending(user)
            return user
    user = user_from_authorization(hub, header, client=client_address(request))
    # A password a manager handed out is for logging in once and choosing one's own; tokens are
    # not passwords and keep working.
    if user.must_change_password and (header or "").strip().lower().startswith("basic"):  # a header here (none: refused above)
        raise password_change_pending(user)
    return user


def demand(user: Staff, capability: str) -> None:
    """403 unless the user's role has `capability` (for a query that asks more than the route's own)."""
    if not access.allows(user.role, capability):
        needed = access.role_for(capability)
        raise HTTPException(403, f"this needs the {needed} role ({capability}); {user.username} is {user.role}")


@cache
def can(capability: str) -> Callable[..., Staff]:
    """The dependency an API route declares: the current user, if dashboard.access gives their role `capability`; else 403."""
    access.role_for(capability)  # an unknown capability fails at import, not at the first request

    def dependency(user: Annotated[Staff, Depends(current_user)]) -> Staff:
        demand(user, capability)
        return user

    dependency.__name__ = f"{access.role_for(capability)}_user"
    dependency.__dict__["capability"] = capability  # what the route-walking tests read (a function's own attribute)
    return dependency


def _path_id(request: Request, name: str) -> int | None:
    value = request.path_params.get(name)
    return int(value) if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18 else None


def older_money(request: Request) -> bool:
    """Whether the tab, payment or game the path names is money of a day staff no longer work with
    (broker.till.reads.TillReads.money_at_hand): then it is the manager's (day.history), as
    that day's Z report is. A path that names none, or no such row, is not (the route answers 404)."""
    tab, payment = _path_id(request, "tab_id"), _path_id(request, "payment_id")
    game = _path_id(request, "game_id") or _path_id(request, "session_id")  # a page's path, the API's
    if tab is None and payment is None and game is None:
        return False
    return not get_reads(request).till.money_at_hand(tab=tab, payment=payment, game=game)


@cache
def can_read_money(capability: str) -> Callable[..., Staff]:
    """can(capability) for a per-id read of a tab, payment or game: older money needs day.history too."""
    plain = can(capability)

    # The user through the module-level current_user: this module's annotations are strings, which
    # FastAPI resolves in the module's globals (a closure's `plain` would not be found there).
    def dependency(request: Request, user: Annotated[Staff, Depends(current_user)]) -> Staff:
        demand(user, capability)
        if not access.allows(user.role, "day.history") and older_money(request):
            demand(user, "day.history")
        return user

    dependency.__name__ = plain.__name__
    dependency.__dict__["capability"] = capability
    return dependency


def require(role: str) -> Callable[..., Staff]:
    """A dependency: the current user, if their role is at least `role` (staff < manager); else 403.

    Routes declare a capability with can() instead, so that the role lives in dashboard.access;
    tests/security/test_roles.py fails on a route that declares none.
    """

    def dependency(user: Annotated[Staff, Depends(current_user)]) -> Staff:
        if not user.at_least(role):
            raise HTTPException(403, f"this needs the {role} role; {user.username} is {user.role}")
        return user

    dependency.__name__ = f"{role}_user"
    return dependency


staff_user = require("staff")
manager_user = require("manager")
StaffUser = Annotated[Staff, Depends(staff_user)]
ManagerUser = Annotated[Staff, Depends(manager_user)]
