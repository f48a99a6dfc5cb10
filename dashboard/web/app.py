"""The staff pages, mounted into the API's FastAPI app: `mount_web(app, hub, ...)`.

Page modules are found, not listed: every `dashboard/web/pages_*.py` exposes `router` (an
APIRouter) and may expose `NAV` (NavLink entries for the top bar). Adding a page is adding a
module; see dashboard/web/README.md.
"""

from __future__ import annotations

import importlib
import pkgutil
import secrets
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from broker.hall.facade import HubFacade
from dashboard import web
from dashboard.api import errors as api_errors
from dashboard.api.limits import BodyLimits
from dashboard.web import errors, i18n
from dashboard.web.auth import anonymous_post_login
from dashboard.web.input_text import printable_input
from dashboard.web.limits import PAGE_CAPS, PAGE_STALLED, PUBLIC_PAGES, SKIP
from dashboard.web.security import PageHeaders, SessionCookies, load_secret
from dashboard.web.templating import register_nav

if TYPE_CHECKING:  # the dashboard is given the hub; it talks to it only through the facade
    from broker.hall.hub import Hub

STATIC = Path(__file__).parent / "static"
SECRET_FILE = "web-secret"


def page_modules() -> list[ModuleType]:
    names = sorted(m.name for m in pkgutil.iter_modules(web.__path__) if m.name.startswith("pages_"))
    return [importlib.import_module(f"dashboard.web.{name}") for name in names]


def web_routes() -> Iterator[tuple[str, str, APIRoute]]:
    """(method, path, route) of every page route, for tests that must cover them all."""
    for module in page_modules():
        for route in module.router.routes:
            if isinstance(route, APIRoute):
                for method in sorted(route.methods or ()):
                    yield method, route.path, route


def create_web(hub: HubFacade) -> FastAPI:
    # Every page's text input is checked once, before its route runs (dashboard.web.input_text).
    pages = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, dependencies=[Depends(printable_input)])
    pages.state.hub = hub
    errors.install(pages)
    for module in page_modules():
        pages.include_router(module.router)
        register_nav(list(getattr(module, "NAV", [])))
    pages.mount("/static", StaticFiles(directory=STATIC), name="static")
    pages.add_middleware(
        BodyLimits,
        caps=PAGE_CAPS,
        public=PUBLIC_PAGES,
        api=False,
        stalled_message=PAGE_STALLED,
        skip=SKIP,
        login_location=anonymous_post_login,
    )
    pages.add_middleware(PageHeaders)
    return pages


def mount_web(app: FastAPI, core: Hub, *, data_dir: Path | None = None, https_cookies: bool = False) -> FastAPI:
    """Serve the pages at / beside the API, and the cookie session both of them read.

    The cookie secret lives in `data_dir`/web-secret (made 0600 at first start); without a
    data_dir (tests) it is random, so logins end with the process.
    """
    secret = load_secret(data_dir / SECRET_FILE) if data_dir is not None else secrets.token_urlsafe(32)
    app.add_middleware(SessionCookies, secret=secret, always_secure=https_cookies)
    setattr(app.state, api_errors.REFUSAL_TEXT, i18n.refusal_text)  # the API's refusals, in the staff's language
    app.mount("/", create_web(app.state.hub))  # the facade create_app made for this hub
    return app
