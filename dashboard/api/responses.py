"""The shapes of the API's JSON answers, so the OpenAPI document shows them (dashboard.api.views builds them).

Every JSON route declares one of these as its response_model; tests/dashboard/test_api_schemas.py
fails on a 2xx JSON answer without a schema. Numbers that may be whole or not are `int | float`,
so a count stays 3 and is never sent as 3.0.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

Number = int | float


class BillLineOut(BaseModel):
    kind: str
    description: str
    description_en: str
    reason: str
    amount_cents: int
    amount: str
    tariff: str | None
    rate_cents_per_hour: int | None
    start: datetime | None
    end: datetime | None
    billed_seconds: int | None
    quantity: int
    unit_cents: int | None


class BillOut(BaseModel):
    lines: list[BillLineOut]
    total_cents: int
    total: str
    total_en: str
    vat_percent: Number
    vat_cents: int
    vat: str
    net_cents: int


class SessionMemberOut(BaseModel):
    id: int
    name: str
    fee_paid: bool


class SessionExtraOut(BaseModel):
    """Something put on the game's tab: a product (an extra of the venue file, a drink), at its own VAT rate."""

    item: int = Field(description="The item on the game's tab: what POST .../void names")
    extra: str | None = Field(description="The extra's id in GET /api/extras (its product's code); null for a product that is no extra")
    product: int | None
    name: str
    name_en: str
    quantity: int
    unit_cents: int
    vat_percent: int
    category: str
    at: datetime
    by: str | None
    voided: bool = False


class SessionBriefOut(BaseModel):
    """A session as lists show it: state and amount, no bill lines."""

    id: int
    table: str
    state: str
    started_at: datetime
    stopped_at: datetime | None
    paused_at: datetime | None
    tariff: str | None
    requested_tariff: str | None
    member: SessionMemberOut | None
    prepaid_until: datetime | None
    prepaid_left_s: int | None
    amount_cents: int
    amount: str
    extras: list[SessionExtraOut]


class SessionOut(SessionBriefOut):
    """One session with its itemised bill."""

    bill: BillOut


class SessionStartedOut(SessionOut):
    """A session just started. `warning` (English) says why a member's game runs at the standard
    rate (a table without the club rate, this year's fee not paid), as the start page says it;
    `warning_code` is the rate's basis: card_table_not_eligible or card_unpaid. Both null otherwise."""

    warning: str | None = None
    warning_code: str | None = None


class TableSessionOut(SessionBriefOut):
    drops: int  # ball drops since the session started


class LightOut(BaseModel):
    on: bool
    blink: bool
    cause: str | None


class TableNodeOut(BaseModel):
    online: bool
    last_seen_at: datetime | None
    version: str | None


class TableOut(BaseModel):
    id: str
    name: str
    kind: str
    room: str | None
    size_ft: int | None
    club_card: bool
    billed: bool
    node: TableNodeOut
    light: LightOut | None
    session: TableSessionOut | None
    out_of_service: bool = False
    out_of_service_reason: str | None = None
    out_of_service_since: datetime | None = None
    out_of_service_by: str | None = None


class ReasonCountOut(BaseModel):
    count: int
    first_at: datetime
    last_at: datetime


class RejectSampleOut(BaseModel):
    at: datetime
    topic: str
    reason: str
    error: str
    excerpt: str


class RejectsOut(BaseModel):
    """What the hub refused from one node: `dropped` not applied, `clock_flagged` applied at the hub's time."""

    dropped: int
    clock_flagged: int
    last_at: datetime | None
    by_reason: dict[str, ReasonCountOut]
    samples: list[RejectSampleOut]


class NodeOut(BaseModel):
    table: str
    online: bool
    online_since: datetime | None
    last_seen_at: datetime | None
    boot: str | None
    version: str | None
    uptime_s: Number | None
    cpu_temp_c: Number | None
    outbox: Number | None
    reconnects: int
    telemetry_at: datetime | None
    light: LightOut | None
    rejects: RejectsOut


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


class FeeOut(BaseModel):
    year: int
    amount_cents: int
    paid_at: datetime
    recorded_by: str


class MemberFoundOut(BaseModel):
    """What staff see when searching: enough to choose a member, no note, no card UIDs."""

    id: int
    name: str
    kind: str
    active: bool
    fee_paid: bool
    fee_year: int


class MemberOut(MemberFoundOut):
    note: str
    cards: list[str]
    fees: list[FeeOut]
    created_at: datetime


# The manager's view first: a full member validates as MemberOut and keeps its note and cards.
MemberListItem = Annotated[MemberOut | MemberFoundOut, Field(union_mode="left_to_right")]


class ImportOut(BaseModel):
    added: int
    updated: int
    unchanged: int
    cards_added: int
    fees_added: int
    summary: str


class AlertOut(BaseModel):
    id: int
    kind: str
    table: str | None
    severity: str
    message: str
    message_en: str
    opened_at: datetime
    last_seen_at: datetime
    count: int
    acked_at: datetime | None
    acked_by: str | None
    closed_at: datetime | None


class CheckoutOut(BaseModel):
    table: str
    member_id: int
    member: str


class CheckinOut(BaseModel):
    id: int
    member_id: int
    member: str
    checked_in_at: datetime
    last_goal_at: datetime | None
    goals: int
    by: str
    active_until: datetime


class FoosballTableOut(BaseModel):
    table: str
    name: str
    checkins: list[CheckinOut]


class TableTimeOut(BaseModel):
    """Table time billed by the games started on the days (billed, not paid: not revenue)."""

    games: int
    total_cents: int
    by_tariff: dict[str, int] = Field(description="Tariff id → cents; corrections and minimum top-ups under 'adjustments'")


class RevenueOut(BaseModel):
    """Revenue: the money taken on the business days (every payment counted on them, refunds deducted, VAT
    included), the Z reports' takings; each breakdown sums to total_cents."""

    model_config = ConfigDict(populate_by_name=True)

    from_: date = Field(alias="from")
    to: date
    definition: str = Field(description="What total_cents counts, in words")
    total_cents: int
    payments: int = Field(description="Payments counted (refunds not)")
    by_day: dict[str, int]
    by_table: dict[str, int] = Field(description="Table id → cents; the bar's tabs (no table) under 'walk_in'")
    by_category: dict[str, int] = Field(description="What was paid for: table_time, drinks, food…")
    table_time: TableTimeOut


class GridOut(BaseModel):
    day: date
    hours: list[str]  # each local hour's start, ISO 8601 with offset
    tables: dict[str, list[Number]]
    totals: dict[str, Number]


class FoosballUseOut(BaseModel):
    member_id: int
    member: str
    checkins: int
    goals: int
    tables: list[str]
    last_at: datetime | None
