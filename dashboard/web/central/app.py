"""`lavos central`'s web app: the halls' records in, a read-only view out, scoped by who asks.

- `POST /api/central/records`: a hall's sender delivers a batch (broker.central.records) with the
  hall's own bearer credential; 401 for no hall's, 403 for another hall's records, 400 for a
  malformed batch (nothing applied; `refused` names each record that is not what a hall sends, by
  seq, with why: `detail` in English and `why` as a message id and its params, which the hall's page
  says in its language; the hall sets those aside and sends the rest), 409 for a seq the centre holds with another
  record, 413 past MAX_BODY (counted as it streams: a chunked body is cut there, never read whole).
  The answer `{"acked": N}` lets the hall delete up to N.
- `GET /api/central/halls` (each hall with its month's takings), `/api/central/takings?month=2026-12`
  (every visible hall's month and their total), `/api/central/halls/<hall>/takings?month=2026-12`,
  `/api/central/alerts`: JSON for an operator (every hall) or a hall manager (their hall only; another
  hall is a 404, as if it did not exist), by HTTP Basic or the pages' login.
- Pages (Slovak first, the `lavos_lang` cookie as on the hall, `/lang` switches): `/` every visible
  hall's floor, link, nodes and takings, and all halls' together; `/halls/<hall>` takings per
  business day and the month; `/alerts`. A login form (`/login`); nothing on the pages changes
  anything. A login is kept on the server (broker.central.accounts, as a hall's dashboard logins):
  the cookie holds its random id, and logout or a new password ends it wherever the cookie was
  copied to.

The hall's rules hold here too, with the hall's own parts: the pages' security headers (CSP
`default-src 'self'`, no framing) and the API's; CSRF tokens (dashboard.web.csrf) on every form;
passwords checked behind the hall's throttle, credential cache and hash slots
(broker.accounts.auth_checks), so guessing waits and a flood of logins cannot take every core;
request bodies capped as they stream (dashboard.api.limits.BodyLimits).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, FastAPI, Form, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from broker.central.service import Busy, Central, CentralConflict, CentralDenied, CentralError, RecordsRefused, Throttled, Viewer
from broker.domain.refusals import Refusal, to_doc
from dashboard.api.auth import auth_refusal, client_address
from dashboard.api.headers import SecurityHeaders
from dashboard.api.limits import KIB, Cap
from dashboard.api.limits import BodyLimits as _BodyLimits
from dashboard.web import csrf, i18n
from dashboard.web.auth import safe_next
from dashboard.web.csrf import CsrfRefused, verify_csrf
from dashboard.web.i18n import LANG_COOKIE, LANGS, N_, gettext
from dashboard.web.pages_login import LANG_COOKIE_MAX_AGE, login_refusal_text
from dashboard.web.security import PageHeaders
from dashboard.web.templating import make_env

MAX_BODY = 2 * 1024 * 1024  # a batch of 200 records is ~250 kB
# The overview lists every hall's tables while it shows this many halls at most; past it, a line per
# hall (its tables on its page): 100 halls' 1,400 tables were a 250 kB page at 0.6-1.2 s (bench/centre_overview.py).
FULL_FLOORS_UPTO = 10
RECORDS_PATH = "/api/central/records"
TZ = ZoneInfo("Europe/Bratislava")  # the halls' zone (a centre of Slovak halls); times are stored UTC
SESSION_COOKIE = "lavos_central"
STATIC = Path(__file__).resolve().parents[1] / "static"
BODY_CAPS = (
    Cap(RECORDS_PATH, MAX_BODY, f"at most {MAX_BODY} bytes a request"),
    Cap("/", 16 * KIB, N_("Too large")),  # the login and language forms: a few hundred bytes
)
_TITLES = {400: N_("Wrong input"), 403: N_("Access denied"), 404: N_("Not found"), 413: N_("Too large"), 429: N_("Log in")}

env = make_env()
env.filters.update(when=lambda dt: i18n.when(dt, TZ), clock=lambda dt: i18n.clock(dt, TZ))


def today() -> date:
    """Today at the halls (the centre's server may keep UTC): the default month of the pages."""
    return datetime.now(TZ).date()


def _render(request: Request, template: str, ctx: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    lang = i18n.lang_of(request)
    token = i18n.use_lang(lang)
    try:
        page = env.get_template(f"central/{template}").render(
            request=request, lang=lang, langs=LANGS, viewer=getattr(request.state, "viewer", None), **ctx
        )
    finally:
        i18n.reset_lang(token)
    return HTMLResponse(page, status_code=status, headers=headers)


def _central(request: Request) -> Central:
    central: Central = request.app.state.central
    return central


def _login(request: Request, username: str, password: str) -> Viewer | None:
    """The person, or None; HTTPException 429 (this client must wait) or 503 (every hash slot taken)."""
    try:
        return _central(request).login(username, password, client=client_address(request))
    except (Throttled, Busy) as e:
        raise auth_refusal(e) from None


def _basic(request: Request) -> Viewer | None:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("basic "):
        return None
    try:
        username, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return _login(request, username, password)


def api_viewer(request: Request) -> Viewer:
    viewer = _basic(request) or _session_viewer(request)
    if viewer is None:
        raise HTTPException(401, "log in (HTTP Basic with a centre account)", headers={"WWW-Authenticate": 'Basic realm="lavos central"'})
    return viewer


LOGIN_KEY = "login"  # the cookie session's key of the page login's id (its row: broker.central.accounts)


def _session_viewer(request: Request) -> Viewer | None:
    """The person of the cookie's page login, while it lasts on the server (a logout or a new password ends it)."""
    login_id = request.session.get(LOGIN_KEY)
    return _central(request).login_viewer(login_id) if isinstance(login_id, str) and login_id else None


class LoginNeeded(Exception):
    pass


def page_viewer(request: Request) -> Viewer:
    viewer = _session_viewer(request)
    if viewer is None:
        raise LoginNeeded
    request.state.viewer = viewer
    return viewer


def _month(value: str | None) -> date:
    if not value:
        return today().replace(day=1)
    try:
        year, month = value.split("-")
        return date(int(year), int(month), 1)
    except ValueError:
        raise HTTPException(400, N_("Choose a month, e.g. 2026-12.")) from None


def _plain(obj: Any) -> Any:
    """A frozen answer as JSON: dataclasses to objects, dates to ISO text."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, date):
        return obj.isoformat()
    if isinstance(obj, Refusal):
        return str(obj)  # in English, as the API's every refusal
    return obj


class CentreHeaders:
    """The pages' security headers on pages, the API's on /api/ (dashboard.api.headers)."""

    def __init__(self, app: ASGIApp) -> None:
        self.pages, self.api = PageHeaders(app), SecurityHeaders(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.api if scope.get("path", "").startswith("/api/") else self.pages
        await chosen(scope, receive, send)


def build_central_app(central: Central, *, secret: str, https_cookies: bool = False) -> FastAPI:
    app = FastAPI(title="Lavos central", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.central = central
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(LoginNeeded, _to_login)
    app.add_exception_handler(CsrfRefused, _csrf_refused)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _bad_input)
    app.include_router(router)
    # Every caller is checked by the route itself once the body is in (a hall's credential, a
    # login form): the cap only bounds what may be read before that.
    app.add_middleware(_BodyLimits, caps=BODY_CAPS, public=None, api=True, stalled_message="the request body stopped arriving")
    app.add_middleware(
        SessionMiddleware, secret_key=secret, session_cookie=SESSION_COOKIE, same_site="strict", https_only=https_cookies, max_age=12 * 3600
    )
    app.add_middleware(CentreHeaders)
    return app


def _to_login(request: Request, _exc: Exception) -> Response:
    path = request.url.path
    return RedirectResponse("/login" if path == "/" else f"/login?next={path}", status_code=303)


def _error(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": message}, status_code=status, headers=headers)
    token = i18n.use_lang(i18n.lang_of(request))
    try:
        title, text = gettext(_TITLES.get(status, _TITLES[400])), gettext(message)
    finally:
        i18n.reset_lang(token)
    return _render(request, "error.html", {"title": title, "message": text}, status=status, headers=headers)


def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    return _error(request, exc.status_code, str(exc.detail), dict(exc.headers or {}))


def _bad_input(request: Request, exc: Exception) -> Response:
    return _error(request, 400, N_("Wrong input"))


def _csrf_refused(request: Request, _exc: Exception) -> Response:
    return _render(request, "login.html", {"next": "/", "error": gettext("The form expired: log in again.")}, status=403)


router = APIRouter()

# -- the halls' records ------------------------------------------------------------


@router.post(RECORDS_PATH)
async def records(request: Request) -> Response:
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else ""
    body = await request.body()  # capped as it streams (BodyLimits): 413 past MAX_BODY
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's parser goes
        return JSONResponse({"detail": "the body is not JSON a hall sends"}, status_code=400)
    try:
        applied = await run_in_threadpool(_central(request).receive, token, doc)
    except CentralDenied as e:
        return JSONResponse({"detail": str(e)}, status_code=e.status)
    except CentralConflict as e:
        return JSONResponse({"detail": str(e), "centre_last_seq": e.last_seq}, status_code=409)
    except RecordsRefused as e:
        # `why`: the same as a document (broker.domain.refusals.to_doc), so the hall's page says it in its language
        refused = [{"seq": seq, "detail": str(why), "why": to_doc(why)} for seq, why in e.refused]
        return JSONResponse({"detail": str(e), "refused": refused}, status_code=400)
    except CentralError as e:
        return JSONResponse({"detail": str(e)}, status_code=400)
    return JSONResponse({"acked": applied.acked, "applied": applied.applied, "duplicates": applied.duplicates})


# -- JSON for people ---------------------------------------------------------------


def _hall_takings(overview: Any, hall: str) -> dict[str, Any]:
    found = overview.halls.get(hall)
    return {
        "month": overview.month.strftime("%Y-%m"),
        "total_cents": found.total_cents if found else 0,
        "last_day": found.last_day.isoformat() if found and found.last_day else None,
        "last_day_cents": found.last_day_cents if found else 0,
    }


@router.get("/api/central/halls")
def api_halls(request: Request, viewer: Annotated[Viewer, Depends(api_viewer)], month: str | None = None) -> Any:
    central = _central(request)
    overview = central.overview(viewer, _month(month))
    return [
        _plain(h) | {"floor": _plain(central.floor(viewer, h.hall)), "takings": _hall_takings(overview, h.hall)}
        for h in central.halls(viewer)
    ]


@router.get("/api/central/takings")
def api_all_takings(request: Request, viewer: Annotated[Viewer, Depends(api_viewer)], month: str | None = None) -> Any:
    """Every visible hall's takings in the month, and all of them together."""
    central = _central(request)
    overview = central.overview(viewer, _month(month))
    return {
        "month": overview.month.strftime("%Y-%m"),
        "total_cents": overview.total_cents,
        "last_day": overview.last_day.isoformat() if overview.last_day else None,
        "last_day_cents": overview.last_day_cents,
        "halls": [{"hall": h.hall, "name": h.name} | _hall_takings(overview, h.hall) for h in central.halls(viewer)],
    }


@router.get("/api/central/halls/{hall}/takings")
def api_takings(request: Request, hall: str, viewer: Annotated[Viewer, Depends(api_viewer)], month: str | None = None) -> Any:
    found = _central(request).month(viewer, hall, _month(month))
    if found is None:
        raise HTTPException(404, "no such hall")
    return _plain(found) | {"total_cents": found.total_cents}


@router.get("/api/central/alerts")
def api_alerts(request: Request, viewer: Annotated[Viewer, Depends(api_viewer)], all: bool = False) -> Any:
    return _plain(_central(request).alerts(viewer, open_only=not all))


# -- pages -------------------------------------------------------------------------


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/") -> Response:
    return _render(request, "login.html", {"next": safe_next(next), "error": None})


@router.post("/login", response_class=HTMLResponse, dependencies=[Depends(verify_csrf)])
def login(
    request: Request,
    username: Annotated[str, Form(max_length=64)] = "",
    password: Annotated[str, Form(max_length=256)] = "",
    next: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    target = safe_next(next)
    try:
        viewer = _login(request, username, password)
    except HTTPException as e:
        return _render(
            request, "login.html", {"next": target, "error": login_refusal_text(e)}, status=e.status_code, headers=dict(e.headers or {})
        )
    if viewer is None:
        return _render(request, "login.html", {"next": target, "error": gettext("Wrong name or password.")}, status=401)
    login_id = _central(request).start_login(viewer, client=client_address(request), user_agent=request.headers.get("user-agent", "")[:200])
    request.session.clear()
    request.session[LOGIN_KEY] = login_id
    csrf.rotate(request)  # a token seen before the login is worth nothing after it
    return RedirectResponse(target, status_code=303)


@router.post("/logout", dependencies=[Depends(verify_csrf)])
def logout(request: Request) -> Response:
    """Ends every page login of this person on the server: a copy of the cookie is worth nothing after it."""
    login_id = request.session.get(LOGIN_KEY)
    if isinstance(login_id, str) and login_id:
        _central(request).log_out(login_id)
    request.session.clear()
    return RedirectResponse("/login", status_code=303)


@router.post("/lang", dependencies=[Depends(verify_csrf)])
def set_lang(request: Request, lang: Annotated[str, Form(max_length=8)], next: Annotated[str, Form(max_length=200)] = "/") -> Response:
    if lang not in LANGS:
        raise HTTPException(400, N_("Wrong input"))
    response = RedirectResponse(safe_next(next), status_code=303)
    response.set_cookie(LANG_COOKIE, lang, max_age=LANG_COOKIE_MAX_AGE, httponly=True, samesite="lax", secure=request.url.scheme == "https")
    return response


@router.get("/", response_class=HTMLResponse)
def overview(request: Request, viewer: Annotated[Viewer, Depends(page_viewer)]) -> Response:
    central = _central(request)
    overview = central.overview(viewer, today())
    rows = [{"hall": h, "floor": central.floor(viewer, h.hall), "takings": overview.halls.get(h.hall)} for h in central.halls(viewer)]
    return _render(request, "overview.html", {"rows": rows, "overview": overview, "full_floors": len(rows) <= FULL_FLOORS_UPTO})


@router.get("/halls/{hall}", response_class=HTMLResponse)
def hall_page(request: Request, hall: str, viewer: Annotated[Viewer, Depends(page_viewer)], month: str | None = None) -> Response:
    found = _central(request).month(viewer, hall, _month(month))
    row = next((h for h in _central(request).halls(viewer) if h.hall == hall), None)
    if found is None or row is None:
        raise HTTPException(404, N_("Not found"))
    return _render(request, "hall.html", {"hall": row, "month": found, "floor": _central(request).floor(viewer, hall)})


@router.get("/alerts", response_class=HTMLResponse)
def alerts_page(request: Request, viewer: Annotated[Viewer, Depends(page_viewer)]) -> Response:
    names = {h.hall: h.name for h in _central(request).halls(viewer)}
    return _render(request, "alerts.html", {"alerts": _central(request).alerts(viewer), "names": names})
