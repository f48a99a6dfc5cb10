"""`lavos central`'s web app: the halls' records in, a read-only view out, scoped by who asks.

- `POST /api/central/records`: a hall's sender delivers a batch (broker.central.records) with the
  hall's own bearer credential; 401 for no hall's, 403 for another hall's records, 400 for a
  malformed batch (nothing applied), 413 past MAX_BODY. The answer `{"acked": N}` lets the hall
  delete up to N.
- `GET /api/central/halls`, `/api/central/halls/<hall>/takings?month=2026-12`, `/api/central/alerts`:
  JSON for an operator (every hall) or a hall manager (their hall only; another hall is a 404, as
  if it did not exist), by HTTP Basic or the pages' login.
- Pages (Slovak first, `lavos_lang` cookie as on the hall): `/` every visible hall's floor, link,
  today's figures; `/halls/<hall>` takings per business day and the month; `/alerts`. A login form
  (`/login`) with a CSRF token in the signed session cookie; nothing on the pages changes anything.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from datetime import date
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.sessions import SessionMiddleware

from broker.central.service import Central, CentralDenied, CentralError, Viewer
from dashboard.web import i18n
from dashboard.web.templating import make_env

MAX_BODY = 2 * 1024 * 1024  # a batch of 200 records is ~250 kB
TZ = ZoneInfo("Europe/Bratislava")  # the halls' zone (a centre of Slovak halls); times are stored UTC
SESSION_COOKIE = "lavos_central"
STATIC = Path(__file__).resolve().parents[1] / "static"

env = make_env()
env.filters.update(when=lambda dt: i18n.when(dt, TZ), clock=lambda dt: i18n.clock(dt, TZ))


def _render(request: Request, template: str, ctx: dict[str, Any], status: int = 200) -> HTMLResponse:
    lang = i18n.lang_of(request)
    token = i18n.use_lang(lang)
    try:
        page = env.get_template(f"central/{template}").render(
            request=request, lang=lang, viewer=getattr(request.state, "viewer", None), csrf=_csrf(request), **ctx
        )
    finally:
        i18n.reset_lang(token)
    return HTMLResponse(page, status_code=status)


def _csrf(request: Request) -> str:
    token = request.session.get("csrf")
    if not token:
        token = request.session["csrf"] = secrets.token_urlsafe(24)
    return str(token)


def _central(request: Request) -> Central:
    central: Central = request.app.state.central
    return central


def _basic(request: Request) -> Viewer | None:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("basic "):
        return None
    try:
        username, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return _central(request).login(username, password)


def api_viewer(request: Request) -> Viewer:
    viewer = _basic(request) or _session_viewer(request)
    if viewer is None:
        raise HTTPException(401, "log in (HTTP Basic with a centre account)", headers={"WWW-Authenticate": 'Basic realm="lavos central"'})
    return viewer


def _session_viewer(request: Request) -> Viewer | None:
    username = request.session.get("user")
    return _central(request).viewer(username) if isinstance(username, str) else None


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
        return date.today().replace(day=1)
    try:
        year, month = value.split("-")
        return date(int(year), int(month), 1)
    except ValueError:
        raise HTTPException(400, "month: YYYY-MM, e.g. 2026-12") from None


def _plain(obj: Any) -> Any:
    """A frozen answer as JSON: dataclasses to objects, dates to ISO text."""
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, date):
        return obj.isoformat()
    return obj


def build_central_app(central: Central, *, secret: str, https_cookies: bool = False) -> FastAPI:
    app = FastAPI(title="Lavos central", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.central = central
    app.add_middleware(
        SessionMiddleware, secret_key=secret, session_cookie=SESSION_COOKIE, same_site="strict", https_only=https_cookies, max_age=12 * 3600
    )
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(LoginNeeded, _to_login)
    app.include_router(router)
    return app


def _to_login(request: Request, _exc: Exception) -> Response:
    return RedirectResponse(f"/login?next={request.url.path}", status_code=303)


router = APIRouter()

# -- the halls' records ------------------------------------------------------------


@router.post("/api/central/records")
async def records(request: Request) -> Response:
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else ""
    if int(request.headers.get("content-length") or 0) > MAX_BODY:
        return JSONResponse({"detail": f"at most {MAX_BODY} bytes a request"}, status_code=413)
    body = await request.body()
    if len(body) > MAX_BODY:
        return JSONResponse({"detail": f"at most {MAX_BODY} bytes a request"}, status_code=413)
    try:
        import json

        doc = json.loads(body)
    except ValueError:
        return JSONResponse({"detail": "the body is not JSON"}, status_code=400)
    from starlette.concurrency import run_in_threadpool

    try:
        applied = await run_in_threadpool(_central(request).receive, token, doc)
    except CentralDenied as e:
        return JSONResponse({"detail": str(e)}, status_code=e.status)
    except CentralError as e:
        return JSONResponse({"detail": str(e)}, status_code=400)
    return JSONResponse({"acked": applied.acked, "applied": applied.applied, "duplicates": applied.duplicates})


# -- JSON for people ---------------------------------------------------------------


@router.get("/api/central/halls")
def api_halls(request: Request, viewer: Annotated[Viewer, Depends(api_viewer)]) -> Any:
    return [_plain(h) | {"floor": _plain(_central(request).floor(viewer, h.hall))} for h in _central(request).halls(viewer)]


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
    return _render(request, "login.html", {"next": next if next.startswith("/") and not next.startswith("//") else "/", "error": None})


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request,
    username: Annotated[str, Form(max_length=64)] = "",
    password: Annotated[str, Form(max_length=256)] = "",
    csrf: Annotated[str, Form(max_length=64)] = "",
    next: Annotated[str, Form(max_length=200)] = "/",
) -> Response:
    if not secrets.compare_digest(csrf, _csrf(request)):
        return _render(request, "login.html", {"next": "/", "error": "csrf"}, status=403)
    viewer = _central(request).login(username, password)
    if viewer is None:
        return _render(request, "login.html", {"next": next, "error": "login"}, status=401)
    request.session.clear()
    request.session["user"] = viewer.username
    return RedirectResponse(next if next.startswith("/") and not next.startswith("//") else "/", status_code=303)


@router.post("/logout")
def logout(request: Request, csrf: Annotated[str, Form(max_length=64)] = "") -> Response:
    if secrets.compare_digest(csrf, _csrf(request)):
        request.session.clear()
    return RedirectResponse("/login", status_code=303)


@router.get("/", response_class=HTMLResponse)
def overview(request: Request, viewer: Annotated[Viewer, Depends(page_viewer)]) -> Response:
    halls = _central(request).halls(viewer)
    month = date.today().replace(day=1)
    rows = []
    for h in halls:
        takings = _central(request).month(viewer, h.hall, month)
        last_day = takings.days[-1] if takings and takings.days else None
        rows.append({"hall": h, "floor": _central(request).floor(viewer, h.hall), "last_day": last_day, "month": takings})
    return _render(request, "overview.html", {"rows": rows})


@router.get("/halls/{hall}", response_class=HTMLResponse)
def hall_page(request: Request, hall: str, viewer: Annotated[Viewer, Depends(page_viewer)], month: str | None = None) -> Response:
    found = _central(request).month(viewer, hall, _month(month))
    row = next((h for h in _central(request).halls(viewer) if h.hall == hall), None)
    if found is None or row is None:
        return _render(request, "missing.html", {}, status=404)
    return _render(request, "hall.html", {"hall": row, "month": found, "floor": _central(request).floor(viewer, hall)})


@router.get("/alerts", response_class=HTMLResponse)
def alerts_page(request: Request, viewer: Annotated[Viewer, Depends(page_viewer)]) -> Response:
    names = {h.hall: h.name for h in _central(request).halls(viewer)}
    return _render(request, "alerts.html", {"alerts": _central(request).alerts(viewer), "names": names})
