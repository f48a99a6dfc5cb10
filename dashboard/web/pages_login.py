"""Logging in and out, and the language switch (the one page anybody may open)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Query, Request
from fastapi.responses import RedirectResponse, Response

from dashboard.api.auth import LOGIN_ENDED, client_address
from dashboard.api.auth import login as check_password
from dashboard.api.deps import get_hub
from dashboard.web.auth import log_in, log_out, page_user, safe_next
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import LANG_COOKIE, LANGS, gettext, ngettext
from dashboard.web.templating import render

router = APIRouter()

NextText = Annotated[str, Form(max_length=2000)]
LANG_COOKIE_MAX_AGE = 365 * 24 * 3600


def _login_page(request: Request, next_path: str, *, error: str | None = None, username: str = "", status: int = 200) -> Response:
    # Sent here because the login ended (14 h after it began, or a manager ended it): say so, and
    # that logging in again leads back to the page they were on (`next`).
    ended = bool(request.session.get(LOGIN_ENDED)) if "session" in request.scope else False
    return render(request, "login.html", {"next": next_path, "error": error, "username": username, "ended": ended}, status=status)


@router.get("/login")
def login_form(request: Request, next: Annotated[str, Query(max_length=2000)] = "/") -> Response:
    if page_user(request) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    return _login_page(request, safe_next(next))


@router.post("/login", dependencies=[Depends(verify_csrf)])
def login(
    request: Request,
    username: Annotated[str, Form(max_length=64)],
    password: Annotated[str, Form(max_length=1024)],
    next: NextText = "/",
) -> Response:
    target = safe_next(next)
    try:
        user = check_password(get_hub(request), username.strip().lower(), password, client=client_address(request))
    except HTTPException as e:
        response = _login_page(request, target, error=login_refusal_text(e), username=username, status=e.status_code)
        if e.headers and "Retry-After" in e.headers:
            response.headers["Retry-After"] = e.headers["Retry-After"]
        return response
    log_in(request, user)
    return RedirectResponse(target, status_code=303)


def login_refusal_text(e: HTTPException) -> str:
    """What the login page says for a refused login (429, 503, 401), in the page's language (also the centre's)."""
    if e.status_code == 429:
        seconds = int((e.headers or {}).get("Retry-After", "60"))
        if seconds < 60:
            return ngettext(
                "Too many failed attempts from this device. Try again in %(num)d second, or ask a manager.",
                "Too many failed attempts from this device. Try again in %(num)d seconds, or ask a manager.",
                seconds,
            ) % {"num": seconds}
        minutes = -(-seconds // 60)
        return ngettext(
            "Too many failed attempts from this device. Try again in %(num)d minute, or ask a manager.",
            "Too many failed attempts from this device. Try again in %(num)d minutes, or ask a manager.",
            minutes,
        ) % {"num": minutes}
    if e.status_code == 503:
        return gettext("The server is busy checking other logins. Try again in a few seconds.")
    return gettext("Wrong username or password.")


@router.post("/logout", dependencies=[Depends(verify_csrf)])
def logout(request: Request) -> Response:
    log_out(request)
    return RedirectResponse("/login", status_code=303)


@router.post("/lang", dependencies=[Depends(verify_csrf)])
def set_lang(request: Request, lang: Annotated[str, Form(max_length=8)], next: NextText = "/") -> Response:
    if lang not in LANGS:
        raise HTTPException(400, gettext("Unknown language; choose one of: %(langs)s") % {"langs": ", ".join(LANGS)})
    response = RedirectResponse(safe_next(next), status_code=303)
    response.set_cookie(LANG_COOKIE, lang, max_age=LANG_COOKIE_MAX_AGE, httponly=True, samesite="lax", secure=request.url.scheme == "https")
    return response
