"""Who is looking at a page: the cookie's login (kept on the server), and `page_can(capability)`.

Logging in reuses dashboard.api.auth.login (argon2, lockout: a failed attempt is committed
even though it raises) and starts a broker.accounts.logins row through the hub's facade; the
cookie holds only its id, and
every request re-reads login and user, so that logging out, disabling an account or changing
a role takes effect at once, in every browser that holds a copy of the cookie.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Annotated
from urllib.parse import quote, urlsplit

from fastapi import Depends, Request

from broker.accounts.staff import Staff
from broker.people.logins import LogOut
from dashboard import access
from dashboard.api.auth import LOGIN_ID, cookie_user, older_money, remember_login
from dashboard.api.deps import get_hub
from dashboard.web import csrf

# The one page a user who must change their password may open (and post to).
PASSWORD_PAGE = "/account/password"


class LoginRequired(Exception):
    """Anonymous visitor on a page: answered with 303 to /login?next=<where they were going>."""

    def __init__(self, next_path: str) -> None:
        self.next_path = next_path
        super().__init__(next_path)


class PageForbidden(Exception):
    """Logged in, but the role is too low: answered with the 403 page."""

    def __init__(self, user: Staff, role: str) -> None:
        self.user, self.role = user, role
        super().__init__(f"{user.username} is {user.role}; this needs {role}")


class PasswordChangeRequired(Exception):
    """A manager handed out this password: answered with 303 to the change-password page."""


def safe_next(value: str | None) -> str:
    """Only a path on this site: "//evil.example" or "https://..." after login would be an open redirect."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value or any(ord(c) < 32 for c in value):
        return "/"
    return value


def login_url(next_path: str) -> str:
    return "/login" if next_path in ("", "/") else f"/login?next={quote(next_path, safe='/')}"


def came_from(request: Request) -> str | None:
    """The page of this site the visitor was on (the Referer: the form they sent), as a safe path;
    None for another site, no header or the front page. Referrer-Policy is same-origin, so the
    browser sends it for our own pages only; a forged one still only names a path here."""
    referer = request.headers.get("referer", "")
    if not referer:
        return None
    parts = urlsplit(referer)
    if parts.netloc and parts.netloc != request.url.netloc:
        return None
    path = safe_next(parts.path + (f"?{parts.query}" if parts.query else ""))
    return None if path == "/" else path


def anonymous_post_login(request: Request) -> str:
    """Where an anonymous form post is sent (the pages' body limits refuse it before its route):
    the login page, leading back to the page the form was on."""
    return login_url(came_from(request) or "/")


def page_user(request: Request) -> Staff | None:
    return cookie_user(get_hub(request), request)


def _gate(request: Request, role: str) -> Staff:
    user = page_user(request)
    if user is None:
        path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        # A POST is not replayed after login (it may be stale, or not what the visitor still wants):
        # they land on the page whose form they sent, where app.js puts back what they had typed.
        raise LoginRequired(path if request.method == "GET" else came_from(request) or "/")
    if user.must_change_password and request.url.path != PASSWORD_PAGE:
        raise PasswordChangeRequired()
    if not user.at_least(role):
        raise PageForbidden(user, role)
    request.state.user = user  # base.html shows the name and the manager links from it
    return user


def require_page(role: str = "staff") -> Callable[[Request], Staff]:
    """A dependency returning the logged-in User whose role is at least `role` (staff < manager).

    Anonymous: 303 to the login page, which comes back here afterwards. Too low a role: 403 page
    (for a page and for an action alike). Routes declare a capability with page_can() instead.
    """

    def dependency(request: Request) -> Staff:
        return _gate(request, role)

    dependency.__name__ = f"{role}_page"
    return dependency


@cache
def page_can(capability: str) -> Callable[[Request], Staff]:
    """The dependency a page route declares: the logged-in User whose role has `capability` (dashboard.access)."""
    role = access.role_for(capability)

    def dependency(request: Request) -> Staff:
        return _gate(request, role)

    dependency.__name__ = f"{role}_page"  # tests find the role by this name
    dependency.__dict__["capability"] = capability  # what the route-walking tests read (a function's own attribute)
    return dependency


@cache
def page_can_read_money(capability: str) -> Callable[[Request], Staff]:
    """page_can(capability) for a page of one tab, payment or game: older money is the manager's
    (dashboard.api.auth.older_money), a 403 page for staff."""
    plain = page_can(capability)

    def dependency(request: Request) -> Staff:
        user = plain(request)
        if not access.allows(user.role, "day.history") and older_money(request):
            raise PageForbidden(user, access.role_for("day.history"))
        return user

    dependency.__name__ = plain.__name__
    dependency.__dict__["capability"] = capability  # what the route-walking tests read (a function's own attribute)
    return dependency


StaffPage = Annotated[Staff, Depends(require_page("staff"))]
ManagerPage = Annotated[Staff, Depends(require_page("manager"))]


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


def log_in(request: Request, user: Staff) -> None:
    login_id, live = get_hub(request).start_login(user.username, client=_client(request), user_agent=request.headers.get("user-agent", ""))
    request.session.clear()
    request.session[LOGIN_ID] = login_id
    csrf.rotate(request)
    remember_login(request, live)


def log_out(request: Request) -> None:
    """End every login of this user, on the server: a copy of the cookie is worth nothing after."""
    user = page_user(request)
    if user is not None:
        get_hub(request).execute(LogOut(actor=user.username))
    request.session.clear()
    remember_login(request, None)
    csrf.rotate(request)
