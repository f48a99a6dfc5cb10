"""The API's JSON answers that are no read model's view: what the venue file says, and small answers.

Everything else the API answers with is the read models' own frozen view (broker.hall.*_views,
broker.hall.read_models, the domain's Bill, Receipt, ZReport …; broker.domain.json_shape says how
one reads as JSON), so a thing has one shape for the pages and the API. What is left here:
the venue file's tariffs, bands and extras as clients read them (configuration, not a read of the
hall), and answers that are a fact rather than a thing (a check-out, a report grid in the API's
units). Every JSON route declares a response_model; tests/dashboard/test_api_schemas.py fails on
a 2xx JSON answer without a schema. Numbers that may be whole or not are `int | float`, so a count
stays 3 and is never sent as 3.0.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, Field

Number = int | float


class HoursOut(BaseModel):
    open: str
    close: str


class TariffOut(BaseModel):
    id: str
    name: str
    name_en: str | None
    rate_cents_per_hour: int
    rate: str
    requires_member: bool
    hours: HoursOut | None
    tournament: bool = Field(False, description="Only a tournament's matches run at it; a game started by hand may not")


class BandOut(BaseModel):
    tariff: str
    name: str
    days: Any  # the venue file's day list, as written there
    start: str
    end: str
    rate_cents_per_hour: int


class TariffsOut(BaseModel):
    default: str
    member: str | None
    unit_s: int
    minimum_cents: int
    vat_percent: Number
    tariffs: list[TariffOut]
    bands: list[BandOut]


class ExtraOut(BaseModel):
    id: str
    name: str
    name_en: str | None
    price_cents: int
    price: str


class DoneOut(BaseModel):
    ok: bool = True


class PrintedOut(BaseModel):
    printed: bool


class TestOut(BaseModel):
    """A test message to a push target: delivered, or why not."""

    delivered: bool
    error: str | None


class CheckoutOut(BaseModel):
    table: str
    member_id: int
    member: str


class GridOut(BaseModel):
    """An hour grid of a report (broker.reports.reports.HourGrid) in the API's units: minutes or drops
    per table per local hour, the hours as local times with their offset."""

    day: date
    hours: list[str]  # each local hour's start, ISO 8601 with offset
    tables: dict[str, list[Number]]
    totals: dict[str, Number]
