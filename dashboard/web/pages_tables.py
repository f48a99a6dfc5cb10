"""What staff do to a table itself from its page: out of service and back, the light by hand.

The same facade methods as the API's (dashboard.api.tables); each answers with a redirect to
the table's page and a message.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import Response

from broker.accounts.staff import Staff
from broker.floor.table_service import SetOutOfService, SwitchLight
from broker.hall.facade import HubFacade
from dashboard.api.deps import Hub
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import gettext
from dashboard.web.pages_bookings import out_of_service_calls
from dashboard.web.table_page import do_then_back, in_visitor_lang

router = APIRouter(prefix="/tables")

Reason = Annotated[str, Form(max_length=200)]


def _back(hub: HubFacade, table_id: str) -> str:
    if table_id not in hub.reads.tables:
        raise HTTPException(404, gettext("There is no such table."))
    return f"/tables/{table_id}"


@router.post("/{table_id}/out-of-service", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def take_out_of_service(
    table_id: str, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tables.service"))], reason: Reason = ""
) -> Response:
    back = _back(hub, table_id)

    def run() -> str:
        hub.execute(SetOutOfService(table=table_id, out=True, reason=reason, actor=user.username))
        out_of_service_calls(request, hub.reads, table_id)  # its bookings today: whom to call (dashboard.web.pages_bookings)
        return gettext("%(table)s is out of service.") % {"table": hub.reads.tables[table_id].name}

    return do_then_back(request, back, run)


@router.post("/{table_id}/in-service", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def back_in_service(table_id: str, request: Request, hub: Hub, user: Annotated[Staff, Depends(page_can("tables.service"))]) -> Response:
    back = _back(hub, table_id)

    def run() -> str:
        hub.execute(SetOutOfService(table=table_id, out=False, actor=user.username))
        return gettext("%(table)s is back in service.") % {"table": hub.reads.tables[table_id].name}

    return do_then_back(request, back, run)


@router.post("/{table_id}/light", dependencies=[Depends(verify_csrf)])
@in_visitor_lang
def switch_light(
    table_id: str,
    request: Request,
    hub: Hub,
    user: Annotated[Staff, Depends(page_can("tables.light"))],
    on: Annotated[bool, Form()],
) -> Response:
    back = _back(hub, table_id)

    def run() -> str:
        hub.execute(SwitchLight(table=table_id, on=on, actor=user.username))
        return gettext("Light switched on.") if on else gettext("Light switched off.")

    return do_then_back(request, back, run)
