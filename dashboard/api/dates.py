"""The dates and times the API and the pages take, as types: each reads what was written with the
hall's one parser (broker.domain.dates), so no route parses a date itself.

- `Day` (2026-12-04), `Moment` (2026-12-04T20:00, with or without its offset: without, the venue's
  wall clock) and `DayOrMoment` (a window's end that may be either) for a query, path or body field:
  the route gets a date or an aware UTC datetime in the hall's range, a wall-clock time checked
  against the venue's DST nights; anything else is a 422 naming the field, in the parser's words.
- The pages read their form fields with the same parser: `hall_dates(reads)`, and a refusal
  (DateRefused) is a 400 page or the form again with the reason.

The parser needs the hall's calendar (its time zone, today's business day), and pydantic validates
a request before any route code runs: `HallCalendar`, a middleware of the app, puts the served
hub's calendar in a context variable for the request, worked out the first time a field asks.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from datetime import date, datetime
from functools import cache
from typing import Annotated, Any

from pydantic import PlainValidator
from pydantic_core import PydanticCustomError
from starlette.types import ASGIApp, Receive, Scope, Send

from broker.domain.dates import DateRefused, HallDates
from broker.hall.facade import HubFacade
from broker.hall.read_models import HallReads
from dashboard.api.errors import value_refused

_CALENDAR: ContextVar[Callable[[], HallDates] | None] = ContextVar("lavos_hall_dates", default=None)
# How much of a date or time a page's form or query may hold: room for anything a person writes, so
# that the parser, not a length check, says what is wrong with it.
WRITTEN_MAX = 64


def hall_dates(reads: HallReads) -> HallDates:
    """The hall's calendar now: what a page reads its date fields with."""
    return reads.dates()


def current() -> HallDates:
    """The calendar of the hall this request is served by (HallCalendar)."""
    get = _CALENDAR.get()
    if get is None:
        raise RuntimeError("a date read outside a request: the app needs its HallCalendar middleware (dashboard.api.app)")
    return get()


class HallCalendar:
    """Pure ASGI middleware: the served hub's calendar for the request's date fields (`hub`: the app's facade, looked up per request)."""

    def __init__(self, app: ASGIApp, hub: Callable[[], HubFacade]) -> None:
        self.app = app
        self.hub = hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hub = self.hub
        token = _CALENDAR.set(cache(lambda: hall_dates(hub().reads)))
        try:
            await self.app(scope, receive, send)
        finally:
            _CALENDAR.reset(token)


def _reader(read: Callable[[HallDates, str], Any], shown_as: Any) -> PlainValidator:
    """The field's validator: `read` with the request's hall calendar; the OpenAPI document shows
    `shown_as` (a date: `format: date`, a datetime: `format: date-time`)."""

    def validate(value: Any) -> Any:
        if isinstance(value, date):  # given in Python (a default, a caller of the model): read as if written
            value = value.isoformat()
        if not isinstance(value, str):
            raise PydanticCustomError("string_type", "Input should be a valid string")
        try:
            return read(current(), value)
        except DateRefused as e:
            raise value_refused(e) from None

    return PlainValidator(validate, json_schema_input_type=shown_as)


Day = Annotated[date, _reader(HallDates.day, date)]
Moment = Annotated[datetime, _reader(HallDates.moment, datetime)]
DayOrMoment = Annotated[date | datetime, _reader(HallDates.day_or_moment, date | datetime)]
