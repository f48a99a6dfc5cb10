"""GET /events: the Server-Sent Events stream that keeps every open dashboard live."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse, Response, StreamingResponse
from starlette.background import BackgroundTask

from broker.accounts.staff import Staff
from broker.hall.read_models import HallReads
from dashboard.api.auth import client_address
from dashboard.api.deps import Reads
from dashboard.web.auth import page_can
from dashboard.web.i18n import N_
from dashboard.web.live import Subscriber
from dashboard.web.request_text import translated

router = APIRouter()

# Proxies and tablets on Wi-Fi drop quiet connections; a comment line every few seconds keeps it
# open, and is how a closed browser is noticed (the write fails) so its listener goes away.
HEARTBEAT_S = 10.0
RETRY_MS = 2000


# A stream holds a connection for as long as the page is open. A club has a dozen tablets and
# screens, a few logged in as one shared staff account; so many per login and per address leave
# room for them, while one login or one machine holding streams can no longer fill the server's
# connections (dashboard.http_server) and shut everyone else out, the manager included.
MAX_PER_LOGIN = 24
MAX_PER_ADDRESS = 12
MAX_STREAMS = 300  # of the server's 1,000 connections: the rest stays for ordinary requests


class StreamSlots:
    """The open streams, counted per login and per address (the event loop's thread only)."""

    def __init__(self) -> None:
        self.per_login: dict[str, int] = {}
        self.per_address: dict[str, int] = {}

    def take(self, login: str, address: str) -> bool:
        if (
            self.per_login.get(login, 0) >= MAX_PER_LOGIN
            or self.per_address.get(address, 0) >= MAX_PER_ADDRESS
            or sum(self.per_login.values()) >= MAX_STREAMS
        ):
            return False
        self.per_login[login] = self.per_login.get(login, 0) + 1
        self.per_address[address] = self.per_address.get(address, 0) + 1
        return True

    def give_back(self, login: str, address: str) -> None:
        for counts, key in ((self.per_login, login), (self.per_address, address)):
            counts[key] -= 1
            if not counts[key]:
                del counts[key]


class StreamSlot:
    """One stream's slot, given back once: when its stream ends, or after its response if the
    stream never started (a browser gone before the first byte)."""

    def __init__(self, slots: StreamSlots, login: str, address: str) -> None:
        self._slots, self._key, self._held = slots, (login, address), True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slots.give_back(*self._key)


SLOTS = StreamSlots()


async def stream_events(reads: HallReads, sub: Subscriber, slot: StreamSlot) -> AsyncIterator[str]:
    reads.subscribe(sub.push)
    try:
        yield f"retry: {RETRY_MS}\n: connected\n\n"
        while True:
            event = await sub.next(HEARTBEAT_S)
            yield ": ping\n\n" if event is None else f"data: {json.dumps(event, separators=(',', ':'))}\n\n"
    finally:
        reads.unsubscribe(sub.push)
        slot.release()


@router.get("/events")
async def events(request: Request, reads: Reads, user: Annotated[Staff, Depends(page_can("floor.view"))]) -> Response:
    login, address = user.username, client_address(request)
    if not SLOTS.take(login, address):
        text = translated(request, N_("Too many live pages are open for this login or this device; close some and reload."))
        return PlainTextResponse(text, status_code=429, headers={"Retry-After": "30"})
    sub, slot = Subscriber(asyncio.get_running_loop()), StreamSlot(SLOTS, login, address)
    return StreamingResponse(
        stream_events(reads, sub, slot),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        background=BackgroundTask(slot.release),
    )
