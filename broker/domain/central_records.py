"""The records a hall sends its centre: one model per kind, the contract both ends check. Pure.

A hall's outbox (broker.outbox.records) builds each record and checks it here before it is queued;
the centre (broker.central.records) checks every record it receives here before it stores
anything. So the two ends cannot disagree on a shape, and nothing the centre stores can break
what it later reads. The rules, each once:

- JSON as it travels, strictly: a string is no number, `12.5` is no amount of cents, `true` is no
  1, every field of the kind is there (null where it may be null); keys it does not know are left
  out of what is kept.
- Money by the hall's own rules (broker.domain.euros): no amount beyond MAX_AMOUNT_CENTS either way;
  a payment takes money (positive), its reversal gives it back (negative), neither is zero.
- Text: no control characters (PostgreSQL refuses a NUL; a page could not show one), valid
  Unicode, no longer than the centre's columns hold.
- Times carry their zone; dates and times lie in FIRST_YEAR..LAST_YEAR (a year 9999 in another
  zone is no time any page can show); ids and seqs are 1..MAX_KEY (the centre's 64-bit keys).
- A refusal is a message id with its params (broker.domain.refusals): English in the log and the
  API, said in the staff's language on the pages of both ends (the hall's Modules page, the
  centre's hall page), which keep it as a document (`refusals.to_doc`).
- What a record is: (kind, `key`): the payment's id, the Z report's day, the game's id, the
  alert's id. A payment and a closed day are facts (`FACT`): the same key sent again must be the
  same record, a copy; anything else under that key is refused (a correction is a record of its
  own: a reversal is a payment with its own id). A game and an alert are states: a later record
  replaces the earlier one (a game's bill corrected after it stopped, an alert acknowledged).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from broker.domain.euros import MAX_AMOUNT_CENTS, euros
from broker.domain.plain_text import unprintable
from broker.domain.refusals import N_, Refusal
from broker.domain.till.receipt import ReceiptLine
from broker.domain.till.revenue import PaymentRecord
from broker.domain.till.zreport import ZReport, from_json, payment_to_json, to_json

__all__ = [
    "DATA",
    "FIRST_YEAR",
    "KINDS",
    "LAST_YEAR",
    "MAX_KEY",
    "AlertData",
    "Checked",
    "Data",
    "GameData",
    "LineData",
    "PaymentData",
    "RecordRefused",
    "ZReportData",
    "check",
    "check_record",
    "differences",
    "payment_doc",
    "same",
]

MAX_KEY = 2**63 - 1  # the centre's keys are 64-bit (BigInteger)
FIRST_YEAR, LAST_YEAR = 2000, 2100  # a hall's records are of this century


class RecordRefused(Refusal):
    """A record that is not what a hall sends: what is wrong, as a message id with its params
    (English in the log and the API; the pages say it in their language)."""


def _printable(value: str) -> str:
    if (why := unprintable(value)) is not None:  # the hall's one rule for text (C0, DEL and C1 alike)
        raise RecordRefused(why)
    return value


def _in_years(value: date) -> date:
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise RecordRefused(N_("must lie in the years %(first)d-%(last)d"), first=FIRST_YEAR, last=LAST_YEAR)
    return value


Key = Annotated[int, Field(ge=1, le=MAX_KEY)]
Cents = Annotated[int, Field(ge=-MAX_AMOUNT_CENTS, le=MAX_AMOUNT_CENTS)]
Vat = Annotated[int, Field(ge=0, le=100)]  # a venue's rate (broker.domain.venue Billing.vat_percent)
Quantity = Annotated[int, Field(ge=-1_000_000, le=1_000_000)]
Time = Annotated[AwareDatetime, AfterValidator(_in_years)]
Day = Annotated[date, AfterValidator(_in_years)]
Printable = AfterValidator(_printable)
# Table, method and category ids (devices.tables.Slug's length): the centre's String(32).
Id32 = Annotated[str, StringConstraints(max_length=32), Printable]
Short = Annotated[str, StringConstraints(max_length=16), Printable]  # an alert's severity
Login = Annotated[str, StringConstraints(max_length=64), Printable]  # a staff username; a record's ref
Name = Annotated[str, StringConstraints(max_length=120), Printable]
Words = Annotated[str, StringConstraints(max_length=2000), Printable]


class _Wire(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class LineData(_Wire):
    """broker.domain.till.receipt.ReceiptLine as it travels."""

    description: Words
    description_en: Words
    quantity: Quantity
    unit_cents: Cents | None
    amount_cents: Cents
    vat_percent: Vat
    category: Id32
    categories: tuple[tuple[Id32, Cents], ...] = ()  # a part payment's share by category (absent on other lines)

    def line(self) -> ReceiptLine:
        return ReceiptLine(
            self.description,
            self.description_en,
            self.quantity,
            self.unit_cents,
            self.amount_cents,
            self.vat_percent,
            self.category,
            self.categories,
        )


class PaymentData(_Wire):
    """A payment or a reversal as the hall's Z report counts it (broker.domain.till.revenue.PaymentRecord),
    with the business day it counts on and its method as the venue names it."""

    FACT: ClassVar[bool] = True

    id: Key
    method: Id32
    amount_cents: Cents
    staff: Login
    at: Time
    receipt_no: Key | None
    tab: Name
    tab_id: Key
    lines: tuple[LineData, ...]
    reverses_id: Key | None
    reverses_receipt_no: Key | None
    reason: Words | None
    corrects_day: Day | None
    day: Day | None
    table: Id32 | None
    rounding_cents: Cents
    business_day: Day
    method_name: Name
    method_name_en: Name
    cash: bool
    fallback_vat: Vat  # what the hall's Z report assumes for money its lines do not assign

    @model_validator(mode="after")
    def _as_the_till_takes_it(self) -> PaymentData:
        if self.amount_cents == 0:
            raise RecordRefused(N_("amount_cents: a payment takes money and a reversal gives it back; neither is 0"))
        if (self.amount_cents < 0) != (self.reverses_id is not None):
            raise RecordRefused(N_("amount_cents: a payment is positive, a reversal (reverses_id) negative"))
        if self.day is not None and self.day != self.business_day:
            raise RecordRefused(N_("day and business_day differ"))
        return self

    @property
    def key(self) -> int:
        return self.id

    def record(self) -> PaymentRecord:
        return PaymentRecord(
            id=self.id,
            method=self.method,
            amount_cents=self.amount_cents,
            staff=self.staff,
            at=self.at,
            receipt_no=self.receipt_no,
            tab=self.tab,
            tab_id=self.tab_id,
            lines=tuple(x.line() for x in self.lines),
            reverses_id=self.reverses_id,
            reverses_receipt_no=self.reverses_receipt_no,
            reason=self.reason,
            corrects_day=self.corrects_day,
            day=self.business_day,
            table=self.table,
            rounding_cents=self.rounding_cents,
        )


class ZReportData(_Wire):
    """A closed day's Z report, as the hall froze it (broker.domain.till.zreport.to_json)."""

    FACT: ClassVar[bool] = True

    day: Day
    report: dict[str, Any]  # kept as broker.domain.till.zreport.to_json writes it (what it does not know left out)

    @field_validator("report")
    @classmethod
    def _a_z_report_of_that_day(cls, report: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        try:
            z = _Z.validate_json(json.dumps(report), strict=True)
        except ValidationError as e:
            raise _said(e) from None
        if z.day != info.data.get("day"):
            raise RecordRefused(N_("of another day"))
        if z.closed_at is None:
            raise RecordRefused(N_("the day is not closed"))
        if not -MAX_KEY <= z.total_cents <= MAX_KEY:
            raise RecordRefused(N_("total_cents out of range"))
        kept = to_json(z)
        _all_printable(kept)
        return kept

    @property
    def key(self) -> date:
        return self.day

    def z(self) -> ZReport:
        return from_json(self.report)


class GameData(_Wire):
    """A stopped game: its table and bill, no member (the centre needs takings and tables, not who played)."""

    FACT: ClassVar[bool] = False

    id: Key
    table: Id32
    table_name: Name
    started_at: Time
    stopped_at: Time | None
    total_cents: Cents | None

    @property
    def key(self) -> int:
        return self.id


class AlertData(_Wire):
    """An alert as last reported: opened, acknowledged, closed."""

    FACT: ClassVar[bool] = False

    id: Key
    kind: Id32
    table: Id32 | None
    severity: Short
    message: Words
    message_en: Words
    opened_at: Time
    acked_at: Time | None
    closed_at: Time | None

    @property
    def key(self) -> int:
        return self.id


_Z: TypeAdapter[ZReport] = TypeAdapter(ZReport)
DATA: dict[str, type[PaymentData | ZReportData | GameData | AlertData]] = {
    "payment": PaymentData,
    "zreport": ZReportData,
    "game": GameData,
    "alert": AlertData,
}
KINDS = tuple(DATA)
Data = PaymentData | ZReportData | GameData | AlertData


class _Envelope(_Wire):
    seq: Key
    kind: Literal["payment", "zreport", "game", "alert"]
    ref: Login  # what it is in the hall: "payment:12", "day:2026-12-01"
    at: Time  # when the hall wrote it
    data: dict[str, Any]


@dataclass(frozen=True)
class Checked:
    """A record that passed: its envelope and its data as the model reads them."""

    seq: int
    kind: str
    ref: str
    at: datetime
    data: Data

    def doc(self) -> dict[str, Any]:
        """The data as the centre keeps it (keys it does not know left out)."""
        return self.data.model_dump(mode="json")


def _all_printable(value: object) -> None:
    if isinstance(value, str):
        _printable(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _all_printable(k)
            _all_printable(v)
    elif isinstance(value, list | tuple):
        for v in value:
            _all_printable(v)


# What pydantic found, as a refusal says it: by the error's type (its English wording is pydantic's,
# no page could say it in Slovak); the ctx values a message names, by their pydantic names.
_WHOLE = N_("must be a whole number")
_WHEN = N_("must be a time with its zone (2026-12-01T20:00:00+01:00)")
_DAY = N_("must be a date (2026-12-01)")
_OBJECT = N_("must be an object")
_LIST = N_("must be a list")
_SAID_AS: dict[str, str] = {
    "missing": N_("missing"),
    "int_type": _WHOLE,
    "int_parsing": _WHOLE,
    "int_from_float": _WHOLE,
    "string_type": N_("must be text"),
    "bool_type": N_("must be true or false"),
    "dict_type": _OBJECT,
    "model_type": _OBJECT,
    "model_attributes_type": _OBJECT,
    "list_type": _LIST,
    "tuple_type": _LIST,
    "date_type": _DAY,
    "date_parsing": _DAY,
    "date_from_datetime_parsing": _DAY,
    "date_from_datetime_inexact": _DAY,
    "datetime_type": _WHEN,
    "datetime_parsing": _WHEN,
    "datetime_from_date_parsing": _WHEN,
    "datetime_object_invalid": _WHEN,
    "timezone_aware": _WHEN,
    "greater_than_equal": N_("must be at least %(ge)s"),
    "less_than_equal": N_("must be at most %(le)s"),
    "greater_than": N_("must be more than %(gt)s"),
    "less_than": N_("must be less than %(lt)s"),
    "string_too_long": N_("must be at most %(max_length)s characters long"),
    "too_long": N_("must hold at most %(max_length)s items"),
    "too_short": N_("must hold at least %(min_length)s items"),
    "literal_error": N_("must be one of %(expected)s"),
}


def _said(e: ValidationError) -> RecordRefused:
    """The first thing wrong, as a refusal: the field (its name in the record) and what is wrong with it."""
    err = e.errors(include_url=False, include_input=False)[0]
    ctx = err.get("ctx") or {}
    own = ctx.get("error")
    if isinstance(own, Refusal):  # one of this contract's rules (above): its own words
        why: Refusal = own
    elif err["type"] in _SAID_AS:
        said = _SAID_AS[err["type"]]
        params = {k: str(v).replace(" or ", ", ") for k, v in ctx.items() if f"%({k})s" in said}
        why = RecordRefused(said, **params)
    else:  # a check this table has no words for (a new pydantic type): pydantic's own, in English
        why = RecordRefused(N_("not valid here (%(detail)s)"), detail=str(err["msg"]))
    where = ".".join(str(p) for p in err["loc"])
    return RecordRefused(N_("%(field)s: %(why)s"), field=where, why=why) if where else RecordRefused.like(why)


def _json(value: object) -> str:
    try:
        return json.dumps(value, allow_nan=False)
    except RecursionError:
        raise RecordRefused(N_("nested deeper than any record")) from None
    except (ValueError, TypeError):
        raise RecordRefused(N_("holds a value that is no JSON number or text (inf, NaN)")) from None


# "payment: ..." (the kind's own msgid each, so a page says the kind in its language)
_OF_KIND = {
    "payment": N_("payment: %(why)s"),
    "zreport": N_("Z report: %(why)s"),
    "game": N_("game: %(why)s"),
    "alert": N_("alert: %(why)s"),
}


def check(kind: str, data: object) -> Data:
    """`data` as a record of `kind`, or RecordRefused saying why."""
    model = DATA.get(kind)
    if model is None:
        raise RecordRefused(N_("kind must be one of %(kinds)s"), kinds=", ".join(KINDS))
    try:
        return model.model_validate_json(_json(data), strict=True)
    except ValidationError as e:
        raise RecordRefused(_OF_KIND[kind], why=_said(e)) from None


def check_record(record: object) -> Checked:
    """One record of a batch (`{"seq", "kind", "ref", "at", "data"}`), or RecordRefused."""
    try:
        env = _Envelope.model_validate_json(_json(record), strict=True)
    except ValidationError as e:
        raise _said(e) from None
    return Checked(env.seq, env.kind, env.ref, env.at, check(env.kind, env.data))


def payment_doc(
    p: PaymentRecord, *, business_day: date, method_name: str, method_name_en: str, cash: bool, fallback_vat: int
) -> dict[str, Any]:
    """A payment record as the hall sends it (before `check`)."""
    return payment_to_json(p) | {
        "business_day": business_day.isoformat(),
        "method_name": method_name,
        "method_name_en": method_name_en,
        "cash": cash,
        "fallback_vat": fallback_vat,
    }


def same(a: Data, b: Mapping[str, Any] | Data) -> bool:
    """Whether `b` (a model, or a kept document of a's kind) is the record `a` is."""
    if not isinstance(b, BaseModel):
        try:
            b = check(_kind_of(a), b)
        except RecordRefused:
            return False
    return a == b


def _kind_of(data: Data) -> str:
    return next(k for k, m in DATA.items() if isinstance(data, m))


_SHOWN_FIELDS = 3  # a refusal names this many fields that differ, then "…"
_SHOWN_CHARS = 40  # of a value


def differences(kept: Mapping[str, Any], sent: Data) -> str:
    """What differs between a kept document and `sent` of its kind, field by field in the record's
    order: `amount_cents 10,00 € → 9 900,00 €, method cash → card` (kept → sent; money in euros; a
    list or object by its name alone; a Z report's fields inside its report)."""
    try:
        old = check(_kind_of(sent), kept).model_dump(mode="json")
    except RecordRefused:
        old = dict(kept)
    new = sent.model_dump(mode="json")
    if isinstance(sent, ZReportData) and isinstance(old.get("report"), dict):
        old, new = old["report"], new["report"]
        prefix = "report."
    else:
        prefix = ""
    changed = [k for k in new if old.get(k) != new[k]] + [k for k in old if k not in new]
    said = [_changed(prefix + k, k, old.get(k), new.get(k)) for k in changed[:_SHOWN_FIELDS]]
    return ", ".join(said) + (", …" if len(changed) > _SHOWN_FIELDS else "")


def _changed(name: str, key: str, old: object, new: object) -> str:
    if isinstance(old, dict | list) or isinstance(new, dict | list):
        return name
    return f"{name} {_value(key, old)} → {_value(key, new)}"


def _value(key: str, value: object) -> str:
    if key.endswith("_cents") and isinstance(value, int) and not isinstance(value, bool):
        return euros(value)
    text = "–" if value is None else json.dumps(value, ensure_ascii=False) if isinstance(value, bool) else str(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"
