"""What every route needs: the running service, path ids, venue-local dates."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import Depends, Path, Request

from broker.service import CentralService

# Ids are SQL integers: a bigger number is not an id that could exist, and PostgreSQL would
# refuse it with an error of its own, so it is turned away here as bad input.
MAX_ID = 2**31 - 1
IdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="A numeric id")]


def get_service(request: Request) -> CentralService:
    return request.app.state.service


Service = Annotated[CentralService, Depends(get_service)]


def local_today(service: CentralService) -> date:
    """Today at the venue, by the service's (billing) clock."""
    return service.clock().astimezone(service.venue.tz).date()
