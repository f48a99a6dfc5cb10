"""What every route needs: the hub's facade (writes), its read models (reads), path ids, venue-local dates."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import Depends, Path, Request

from broker.hall.facade import HubFacade
from broker.hall.read_models import HallReads

# Ids are SQL integers: a bigger number is not an id that could exist, and PostgreSQL would
# refuse it with an error of its own, so it is turned away here as bad input.
MAX_ID = 2**31 - 1
IdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="A numeric id")]


def get_hub(request: Request) -> HubFacade:
    hub: HubFacade = request.app.state.hub  # create_app put it there
    return hub


def get_reads(request: Request) -> HallReads:
    reads: HallReads = request.app.state.hub.reads
    return reads


Hub = Annotated[HubFacade, Depends(get_hub)]
Reads = Annotated[HallReads, Depends(get_reads)]


def local_today(reads: HallReads) -> date:
    """Today at the venue, by the hub's (billing) clock."""
    return reads.today()
