"""GET /events: the Server-Sent Events stream that keeps every open dashboard live."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse

from broker.accounts.staff import Staff
from broker.hall.read_models import HallReads
from dashboard.api.deps import Reads
from dashboard.web.auth import page_can
from dashboard.web.live import Subscriber

router = APIRouter()

# Proxies and tablets on Wi-Fi drop quiet connections; a comment line every few seconds keeps it
# open, and is how a closed browser is noticed (the write fails) so its listener goes away.
HEARTBEAT_S = 10.0
RETRY_MS = 2000


async def _stream(reads: HallReads, sub: Subscriber) -> AsyncIterator[str]:
    reads.subscribe(sub.push)
    try:
        yield f"retry: {RETRY_MS}\n: connected\n\n"
        while True:
            event = await sub.next(HEARTBEAT_S)
            yield ": ping\n\n" if event is None else f"data: {json.dumps(event, separators=(',', ':'))}\n\n"
    finally:
        reads.unsubscribe(sub.push)


@router.get("/events")
async def events(reads: Reads, user: Annotated[Staff, Depends(page_can("floor.view"))]) -> StreamingResponse:
    sub = Subscriber(asyncio.get_running_loop())
    return StreamingResponse(
        _stream(reads, sub), media_type="text/event-stream", headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
