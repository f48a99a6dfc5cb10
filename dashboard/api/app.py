"""The FastAPI app over a running Hub: JSON under /api, OpenAPI at /openapi.json."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from fastapi import Depends, FastAPI, Request
from fastapi._compat import is_scalar_field  # what FastAPI itself reads with get(), not getlist()
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from broker.domain.refusals import N_, Refusal
from broker.hall.facade import HubFacade
from dashboard.api import (
    alerts,
    bookings,
    days,
    ekasa,
    errors,
    foosball,
    games,
    health,
    members,
    monitoring,
    notifications,
    reports,
    shifts,
    tables,
)
from dashboard.api import payments as payments_api
from dashboard.api import stock as stock_api
from dashboard.api import tabs as tabs_api
from dashboard.api import tournaments as tournaments_api
from dashboard.api import wallet as wallet_api
from dashboard.api.dates import HallCalendar
from dashboard.api.headers import SecurityHeaders
from dashboard.api.limits import API_CAPS, API_STALLED, BodyLimits

if TYPE_CHECKING:  # the dashboard is given the hub; it talks to it only through the facade
    from broker.hall.hub import Hub

# The routes that answer without a login; everything else needs a staff user at least.
PUBLIC_PATHS = frozenset({"/api/health", "/openapi.json"})
PREFIX = "/api"
ROUTERS = (
    tables,
    games,
    members,
    alerts,
    foosball,
    reports,
    health,
    tabs_api,
    payments_api,
    days,
    ekasa,
    notifications,
    monitoring,
    bookings,
    tournaments_api,
    shifts,
    wallet_api,
    stock_api,
)


def one_value_each(request: Request) -> None:
    """A query parameter the route takes once, given more than once (`?table=a&table=b`), is
    refused: FastAPI would take the last one silently, and which one the client meant is unknown."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    given = Counter(name for name, _ in request.query_params.multi_items())
    twice = [f.alias for f in route.dependant.query_params if given[f.alias] > 1 and is_scalar_field(f)]
    if twice:
        refusal = Refusal(N_("given more than once; give it once"))
        raise RequestValidationError(
            [
                {
                    "type": errors.VALUE_REFUSED,
                    "loc": ("query", name),
                    "msg": str(refusal),
                    "input": request.query_params.getlist(name),
                    "ctx": {"refusal": refusal},
                }
                for name in twice
            ]
        )


def api_routes() -> Iterator[tuple[str, str, APIRoute]]:
    """(method, full path, route) for every API route, for checks that must cover them all."""
    for module in ROUTERS:
        for route in module.router.routes:
            if isinstance(route, APIRoute):
                for method in sorted(route.methods or ()):
                    yield method, PREFIX + route.path, route


def create_app(core: Hub) -> FastAPI:
    """The API over a hub (`core`: the Hub itself, which only the facade made here holds)."""
    app = FastAPI(
        title="Lavos table control",
        version="1",
        description="Tables, games and bills, members, alerts, foosball check-ins and reports of a billiard hall. "
        "Log in with HTTP Basic (staff account) or a bearer token (`lavos user token`).",
        docs_url=None,
        redoc_url=None,  # the staff pages come in the dashboard; the schema stays public
    )
    # The dashboard sees the hub only through its facade (writes) and read models (hub.reads).
    app.state.hub = HubFacade(core)
    errors.install(app)
    # Added first, so it runs inside the security headers (its refusals get them) and inside the
    # session cookie that mount_web adds last (it reads request.session).
    app.add_middleware(BodyLimits, caps=API_CAPS, public=PUBLIC_PATHS, api=True, stalled_message=API_STALLED)
    app.add_middleware(SecurityHeaders)
    # The hall's calendar for the dates a request holds (dashboard.api.dates), pages included (mount_web).
    app.add_middleware(HallCalendar, hub=lambda: app.state.hub)
    for module in ROUTERS:
        public = all(PREFIX + r.path in PUBLIC_PATHS for r in module.router.routes)
        app.include_router(
            module.router, prefix=PREFIX, responses=None if public else errors.RESPONSES, dependencies=[Depends(one_value_each)]
        )
    return app
