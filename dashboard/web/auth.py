"""Who is looking at a page: the signed cookie session, and `require_page(role)`.

Logging in reuses dashboard.api.auth.login (argon2, lockout: a failed attempt is committed
even though it raises); the session stores only the username, and every request re-reads the
user so that disabling an account or changing a role takes effect at once.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, Request

from broker.db.models import User
from broker.users import role_at_least
from dashboard.api.auth import SESSION_USER, session_user
from dashboard.api.deps import get_service
from dashboard.web import csrf


class LoginRequired(Exception):
    """Anonymous visitor on a page: answered with 303 to /login?next=<where they were going>."""

    def __init__(self, next_path: str) -> None:
        self.next_path = next_path
        super().__init__(next_path)


class PageForbidden(Exception):
    """Logged in, but the role is too low: answered with the 403 page."""

    def __init__(self, user: User, role: str) -> None:
        self.user, self.role = user, role
        super().__init__(f"{user.username} is {user.role}; this needs {role}")


def safe_next(value: str | None) -> str:
    """Only a path on this site: "//evil.example" or "https://..." after login would be an open redirect."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value or any(ord(c) < 32 for c in value):
        return "/"
    return value


def login_url(next_path: str) -> str:
    return "/login" if next_path in ("", "/") else f"/login?next={quote(next_path, safe='/')}"


def page_user(request: Request) -> User | None:
    return session_user(get_service(request).store, request)


def require_page(role: str = "staff"):  # type: ignore[no-untyped-def]
    """A dependency returning the logged-in User whose role is at least `role` (staff < manager).

    Anonymous: 303 to the login page, which comes back here afterwards. Too low a role: 403 page
    (for a page and for an action alike).
    """

    def dependency(request: Request) -> User:
        user = page_user(request)
        if user is None:
            path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            # A POST cannot be replayed after login: land on the floor view instead.
            raise LoginRequired(path if request.method == "GET" else "/")
        if not role_at_least(user.role, role):
            raise PageForbidden(user, role)
        request.state.user = user  # base.html shows the name and the manager links from it
        return user

    dependency.__name__ = f"{role}_page"
    return dependency


StaffPage = Annotated[User, Depends(require_page("staff"))]
ManagerPage = Annotated[User, Depends(require_page("manager"))]


def log_in(request: Request, user: User) -> None:
    request.session.clear()
    request.session[SESSION_USER] = user.username
    csrf.rotate(request)


def log_out(request: Request) -> None:
    request.session.clear()
    csrf.rotate(request)
