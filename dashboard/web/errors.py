"""Every refusal on a page is a page: 303 to login, 403, 400 for bad form input, 404, 409; 500 only for our bugs.

The JSON API keeps its own handlers (dashboard.api.errors); this app serves everything outside
/api, except an unknown /api path, which still answers in JSON.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from broker.accounts.users import UserError
from broker.domain.dates import DateRefused
from broker.domain.refusals import Refusal
from broker.hall.facade import MemberError, NotFound, ServiceError
from broker.reports.reports import ReportError
from dashboard.api.errors import on_error
from dashboard.web import i18n
from dashboard.web.auth import PASSWORD_PAGE, LoginRequired, PageForbidden, PasswordChangeRequired, came_from, login_url, page_user
from dashboard.web.csrf import CsrfRefused
from dashboard.web.i18n import N_, gettext
from dashboard.web.input_text import UnprintableInput
from dashboard.web.templating import render

log = logging.getLogger("lavos.web")

_TITLES = {
    400: N_("Wrong input"),
    403: N_("Access denied"),
    404: N_("Not found"),
    409: N_("Cannot be done now"),
    413: N_("Too large"),
    500: N_("Something went wrong"),
}


def back_link(request: Request) -> str | None:
    """Where the visitor came from on this site (the form they sent), for the error page's button;
    None (the button goes to the tables) for anything else or the failing page itself."""
    path = came_from(request)
    if path is None or (urlsplit(path).path == request.url.path and request.method == "GET"):
        return None
    return path


def error_page(request: Request, status: int, message: str | Refusal, details: list[str] | None = None) -> Response:
    """`message` may be a marked msgid (N_) or a refusal: it is translated here, in the visitor's
    language, since an exception handler runs before anything has set the language for the request."""
    token = i18n.use_lang(i18n.lang_of(request))
    try:
        text = i18n.refusal_text(message) if isinstance(message, Refusal) else gettext(message)
        title = gettext(_TITLES.get(status, _TITLES[400] if status < 500 else _TITLES[500]))
    finally:
        i18n.reset_lang(token)
    if getattr(request.state, "user", None) is None:
        try:
            request.state.user = page_user(request)
        except Exception:  # noqa: BLE001 - the error page must render even with the database down
            request.state.user = None
    context = {"status": status, "title": title, "message": text, "details": details or [], "back": back_link(request)}
    return render(request, "error.html", context, status=status)


def _login(request: Request, e: LoginRequired) -> Response:
    return RedirectResponse(login_url(e.next_path), status_code=303)


def _forbidden(request: Request, e: PageForbidden) -> Response:
    return error_page(request, 403, N_("This page is for the manager. Log in with a manager account."))


def _change_password(request: Request, e: PasswordChangeRequired) -> Response:
    return RedirectResponse(PASSWORD_PAGE, status_code=303)


def _csrf(request: Request, e: CsrfRefused) -> Response:
    return error_page(request, 403, N_("The form has expired or did not come from this dashboard. Go back, reload the page and try again."))


# A form field and what was wrong with it, in staff's words (FastAPI's own messages are English).
_FIELDS = {
    "prepaid_minutes": N_("Prepaid time in minutes"),
    "minutes": N_("Minutes"),
    "quantity": N_("Quantity"),
    "member_id": N_("Member"),
    "table": N_("Table"),
    "extra": N_("Extra"),
    "card_uid": N_("Card number"),
    "uid": N_("Card number"),
    "name": N_("Name"),
    "label": N_("Name"),
    "note": N_("Note"),
    "reason": N_("Reason"),
    "phone": N_("Phone"),
    "q": N_("Search"),
    "time": N_("Time"),
    "year": N_("Year"),
    "amount": N_("Amount"),
    "username": N_("Login name"),
    "password": N_("Password"),
    "repeat": N_("The password again"),
    "current": N_("Current password"),
    "role": N_("Role"),
    "active": N_("Access"),
    "must_change": N_("Must choose their own password"),
    "day": N_("Day"),
    "month": N_("Month"),
    "file": N_("File"),
}
_PROBLEMS = {
    "missing": N_("fill it in"),
    "string_too_long": N_("at most %(max_length)s characters"),
    "string_too_short": N_("at least %(min_length)s characters"),
    "less_than_equal": N_("at most %(le)s"),
    "less_than": N_("less than %(lt)s"),
    "greater_than_equal": N_("at least %(ge)s"),
    "greater_than": N_("more than %(gt)s"),
    "int_parsing": N_("a whole number"),
    "int_type": N_("a whole number"),
    "int_from_float": N_("a whole number"),
}


def _problem(err: dict[str, Any]) -> str:
    loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "form")]
    field = ".".join(loc) or "?"
    label = gettext(_FIELDS[field]) if field in _FIELDS else field
    refused = (err.get("ctx") or {}).get("refusal")
    if isinstance(refused, Refusal):  # a date the hall's parser refused (dashboard.api.dates): its own words
        return f"{label}: {i18n.refusal_text(refused)}"
    problem = _PROBLEMS.get(str(err.get("type")), N_("not valid"))
    ctx = {k: v for k, v in (err.get("ctx") or {}).items() if isinstance(v, (int, float, str))}
    try:
        text = gettext(problem) % ctx
    except (KeyError, TypeError, ValueError):
        text = gettext(N_("not valid"))
    return f"{label}: {text}"


def _validation(request: Request, e: RequestValidationError) -> Response:
    token = i18n.use_lang(i18n.lang_of(request))
    try:
        details = [_problem(err) for err in e.errors()]
    finally:
        i18n.reset_lang(token)
    return error_page(request, 400, N_("Some of what was sent is not valid. Go back and correct it."), details)


def _unprintable(request: Request, e: UnprintableInput) -> Response:
    """Where the control character is, as a person knows it: a form field by its label; the page's
    address (its path, or a query parameter that is no field of a form people fill in); a form's
    field that has no label (a hidden one). Never the parameter's name in the code."""
    token = i18n.use_lang(i18n.lang_of(request))
    try:
        if e.where != "path" and e.field in _FIELDS:
            detail = f"{gettext(_FIELDS[e.field])}: {gettext(e.problem)}"
        else:
            whole = N_("The address %(problem)s") if e.where in ("path", "query") else N_("A field of the form %(problem)s")
            detail = gettext(whole) % {"problem": gettext(e.problem)}
    finally:
        i18n.reset_lang(token)
    return error_page(request, 400, N_("Some of what was sent is not valid. Go back and correct it."), [detail])


def _http(request: Request, e: StarletteHTTPException) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": e.detail}, status_code=e.status_code, headers=getattr(e, "headers", None))
    message = e.detail if isinstance(e.detail, str) and e.status_code != 404 else N_("There is no such page.")
    return error_page(request, e.status_code, message)


def _status(code: int) -> Callable[[Request, Exception], Response]:
    def handler(request: Request, e: Exception) -> Response:
        return error_page(request, code, e if isinstance(e, Refusal) else str(e))

    return handler


def _bug(request: Request, e: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=e)
    return error_page(request, 500, N_("An internal error; it has been logged. Tell the manager."))


def install(app: FastAPI) -> None:
    on_error(app, LoginRequired, _login)
    on_error(app, PageForbidden, _forbidden)
    on_error(app, PasswordChangeRequired, _change_password)
    on_error(app, CsrfRefused, _csrf)
    on_error(app, RequestValidationError, _validation)
    on_error(app, UnprintableInput, _unprintable)
    on_error(app, StarletteHTTPException, _http)
    app.add_exception_handler(NotFound, _status(404))
    app.add_exception_handler(ServiceError, _status(409))
    for bad_input in (MemberError, UserError, ReportError, DateRefused):
        app.add_exception_handler(bad_input, _status(400))
    app.add_exception_handler(Exception, _bug)
