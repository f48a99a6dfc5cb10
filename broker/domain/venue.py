"""The venue catalogue: one TOML file describing a hall — rooms, tables, pins, hours, prices.

``deploy/venues/lavos.toml`` is ŠBK Lavos. The hub reads all of it; a table's own entry (its
kind and pins, devices.tables) is what its node.toml is made from, so the Pi never loads this.
"""

from __future__ import annotations

import re
from datetime import time
from pathlib import Path
from typing import Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from broker.domain.cash_rounding import NO_ROUNDING, STEPS
from broker.domain.vouchers import WALLET_METHODS
from devices.tables import Slug
from devices.tables import TableSpec as TableSpec  # re-exported: the hub and the dashboard import it from here
from devices.tomlfile import Located, load_toml

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = get_args(Weekday)
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _parse_hhmm(value: object) -> time:
    if isinstance(value, time):
        return value
    if not isinstance(value, str) or not _HHMM.match(value):
        raise ValueError(f'{value!r} is not a time of day as HH:MM (e.g. "16:00")')
    h, m = value.split(":")
    return time(int(h), int(m))


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Hours(_Model):
    """Opening hours; a close earlier than (or equal to) open means after midnight."""

    open: time
    close: time

    _hhmm = field_validator("open", "close", mode="before")(_parse_hhmm)


class Room(_Model):
    id: Slug
    name: str
    name_en: str | None = None
    smoking: bool = True


class Tariff(_Model):
    id: Slug
    name: str
    name_en: str | None = None
    rate_cents_per_hour: int = Field(ge=0, le=1_000_000)
    # Only on tables with club_card = true, only for a member whose fee is paid this year.
    requires_member: bool = False
    # Allowed hours (e.g. training 15:00-19:00); absent = any time.
    hours: Hours | None = None
    # Only for a tournament's matches (the club's own use of its tables): never offered when a game
    # is started by hand, and a start by hand asking for it is refused (broker.floor.games).
    tournament: bool = False


class TimeBand(_Model):
    """A different rate for a tariff on some weekdays and hours (e.g. happy hour)."""

    tariff: Slug
    days: list[Weekday] = Field(default_factory=lambda: list(WEEKDAYS))
    start: time
    end: time
    rate_cents_per_hour: int = Field(ge=0, le=1_000_000)
    name: str

    _hhmm = field_validator("start", "end", mode="before")(_parse_hhmm)


class Billing(_Model):
    unit_s: Literal[60, 300, 900] = 60
    minimum_cents: int = Field(default=0, ge=0)
    vat_percent: int = Field(default=23, ge=0, le=100)
    currency: Literal["EUR"] = "EUR"
    default_tariff: Slug = "standard"
    member_tariff: Slug = "club_card"
    prepaid_warning_min: int = Field(default=5, ge=0, le=120)
    closing_warning_min: int = Field(default=10, ge=0, le=120)
    # What happens when prepaid time runs out: stop the game, or run on at the open rate.
    prepaid_expiry: Literal["stop", "continue"] = "stop"
    pause_light: Literal["off", "on"] = "off"
    idle_alert_min: int = Field(default=20, ge=1, le=600)
    foosball_checkin_min: int = Field(default=15, ge=1, le=600)
    # Where one business day ends and the next begins (local wall-clock time, broker.domain.schedule):
    # everything before it belongs to the evening before, so a game past midnight is that evening's.
    day_cut: time = time(6)

    _day_cut = field_validator("day_cut", mode="before")(_parse_hhmm)


class Extra(_Model):
    id: Slug
    name: str
    name_en: str | None = None
    price_cents: int = Field(ge=0, le=1_000_000)


class Operator(_Model):
    """Who issues the receipts: what a Slovak receipt must name (the legal entity, not the hall's sign)."""

    name: str = ""  # e.g. "Slovenský biliardový klub Lavos, o. z."; empty: the venue's name
    address: str = ""  # the registered seat; empty: the venue's address
    ico: str = Field(default="", pattern=r"^(\d{8})?$")  # IČO, 8 digits
    dic: str = Field(default="", pattern=r"^(\d{10})?$")  # DIČ, 10 digits
    ic_dph: str = Field(default="", pattern=r"^(SK\d{10})?$")  # IČ DPH, only for a VAT payer


class PaymentMethod(_Model):
    id: Slug
    name: str
    name_en: str | None = None
    cash: bool = False  # takes a tendered amount and gives change; counted in the drawer at close-out


def _default_methods() -> list[PaymentMethod]:
    return [
        PaymentMethod(id="cash", name="Hotovosť", name_en="Cash", cash=True),
        PaymentMethod(id="card", name="Karta", name_en="Card"),
    ]


class Till(_Model):
    """How the bar takes money (issue 12): the payment methods staff can choose."""

    payment_methods: list[PaymentMethod] = Field(default_factory=_default_methods, min_length=1)
    # An ESC/POS thermal printer on the network for receipts, e.g. "tcp://192.168.1.50:9100"
    # (broker.adapters.receipt_printer); none: receipts print through the browser only.
    printer: str | None = Field(default=None, pattern=r"^tcp://[A-Za-z0-9.\-]+:\d{1,5}$")
    # Cash totals rounded to this many cents (broker.domain.cash_rounding): 5 as Slovak law asks
    # since 1 July 2022, 1 for none. Cards are never rounded.
    cash_rounding: int = NO_ROUNDING

    @field_validator("cash_rounding", mode="before")
    @classmethod
    def _rounding_step(cls, v: object) -> object:
        if type(v) is not int or v not in STEPS:
            raise ValueError(
                f"cash_rounding = {v!r} is not a rounding of cash: 5 rounds cash totals to 0,05 € "
                "(Slovak law since 1 July 2022), 1 leaves them to the cent"
            )
        return v

    @model_validator(mode="after")
    def _one_cash(self) -> Till:
        ids = [m.id for m in self.payment_methods]
        if len(set(ids)) != len(ids):
            raise ValueError("a payment method id is listed more than once")
        if sum(m.cash for m in self.payment_methods) > 1:
            raise ValueError("only one payment method can be cash (the drawer counted at close-out)")
        return self

    def method(self, method_id: str) -> PaymentMethod | None:
        """A method staff may choose on the pay page (the venue file's)."""
        return next((m for m in self.payment_methods if m.id == method_id), None)

    def named(self, method_id: str) -> PaymentMethod | None:
        """A method a payment may have been taken by, to name it: the venue's, or the wallet's
        ("Z kreditu", "Z balíka": broker.wallet takes those, never the pay page's form)."""
        return self.method(method_id) or next(
            (PaymentMethod(id=i, name=n, name_en=e) for i, n, e in WALLET_METHODS if i == method_id), None
        )


class Bookings(_Model):
    """Table bookings and the waiting list (issue 20; the rules: broker.domain.bookings)."""

    # The floor card and the table page say "Rezervované 20:00 (Novák, 4)" from this long before.
    show_before_min: int = Field(default=15, ge=0, le=240)
    # A booking nobody came for becomes a no-show this long after its start; the table is released.
    grace_min: int = Field(default=15, ge=1, le=240)
    # After this many no-shows a person's next booking needs a deposit (0: never).
    no_show_limit: int = Field(default=2, ge=0, le=20)
    deposit_cents: int = Field(default=1000, ge=0, le=100_000)
    # Bookings and waiting parties older than this are anonymised (name, phone and note removed).
    retention_days: int = Field(default=90, ge=1, le=3650)
    # A waiting party is held a free table this long; then it is offered to the next party.
    offer_min: int = Field(default=10, ge=1, le=120)
    # A party that let this many offers pass is taken off the waiting list.
    offer_misses: int = Field(default=2, ge=1, le=10)
    # A booking's length when none is given, and how long a walk-in game is expected to run (the
    # overrun warning before a booking, the waiting list's estimated wait).
    default_min: int = Field(default=120, ge=15, le=12 * 60)
    walk_in_min: int = Field(default=60, ge=15, le=12 * 60)
    max_party: int = Field(default=12, ge=1, le=100)
    max_days_ahead: int = Field(default=90, ge=1, le=730)
    step_min: Literal[15, 30, 60] = 30  # the day view's columns


class Wallet(_Model):
    """Members' prepaid credit and packages (broker.wallet): how long what is sold stays valid (none: for ever)."""

    credit_valid_days: int | None = Field(default=None, ge=1, le=3660)  # a top-up lapses this many days after it
    package_valid_days: int | None = Field(default=None, ge=1, le=3660)  # a package lapses this many days after its sale


class VenueInfo(_Model):
    id: Slug
    name: str
    address: str = ""
    timezone: str = "Europe/Bratislava"

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f'unknown timezone {v!r} (use an IANA name such as "Europe/Bratislava")') from None
        return v


class Venue(_Model):
    venue: VenueInfo
    hours: dict[Literal["default", "mon", "tue", "wed", "thu", "fri", "sat", "sun"], Hours]
    rooms: list[Room] = Field(min_length=1)
    tables: list[TableSpec] = Field(min_length=1)
    tariffs: list[Tariff] = Field(default_factory=list)
    bands: list[TimeBand] = Field(default_factory=list)
    billing: Billing = Field(default_factory=Billing)
    extras: list[Extra] = Field(default_factory=list)
    operator: Operator = Field(default_factory=Operator)
    till: Till = Field(default_factory=Till)
    wallet: Wallet = Field(default_factory=Wallet)
    bookings: Bookings = Field(default_factory=Bookings)

    @model_validator(mode="after")
    def _consistent(self) -> Venue:
        if "default" not in self.hours and set(self.hours) != set(WEEKDAYS):
            raise Located(("hours",), "hours needs a 'default' entry or one for every weekday")
        listed = {
            "rooms": [r.id for r in self.rooms],
            "tables": [t.id for t in self.tables],
            "tariffs": [t.id for t in self.tariffs],
            "extras": [e.id for e in self.extras],
        }
        for key, ids in listed.items():
            seen: set[str] = set()
            for n, item_id in enumerate(ids):
                if item_id in seen:
                    raise Located((key, n, "id"), f"{key[:-1]} id {item_id} is listed more than once")
                seen.add(item_id)
        rooms = {r.id for r in self.rooms}
        for n, t in enumerate(self.tables):
            if t.room not in rooms:
                raise Located(
                    ("tables", n, "room"), f"table {t.id} is in room {t.room!r}, which is not among rooms ({', '.join(sorted(rooms))})"
                )
        tariffs = {t.id for t in self.tariffs}
        if self.tariffs:
            # Located, so the message points at the line that names the missing tariff.
            refs = [
                (("billing", "default_tariff"), self.billing.default_tariff),
                (("billing", "member_tariff"), self.billing.member_tariff),
                *((("bands", n, "tariff"), b.tariff) for n, b in enumerate(self.bands)),
            ]
            for loc, ref in refs:
                if ref not in tariffs:
                    raise Located(loc, f"tariff {ref!r} is referenced but not defined under [[tariffs]] ({', '.join(sorted(tariffs))})")
        return self

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.venue.timezone)

    def table(self, table_id: str) -> TableSpec:
        for t in self.tables:
            if t.id == table_id:
                return t
        raise KeyError(f"no table {table_id!r} in venue {self.venue.id!r} (tables: {', '.join(t.id for t in self.tables)})")

    @property
    def hand_tariffs(self) -> list[Tariff]:
        """The tariffs staff may start a game at by hand (not a tournament's)."""
        return [t for t in self.tariffs if not t.tournament]

    def tariff(self, tariff_id: str) -> Tariff:
        for t in self.tariffs:
            if t.id == tariff_id:
                return t
        raise KeyError(f"no tariff {tariff_id!r} (tariffs: {', '.join(t.id for t in self.tariffs)})")

    def hours_on(self, weekday: Weekday) -> Hours:
        return self.hours.get(weekday) or self.hours["default"]


def load_venue(path: Path | str) -> Venue:
    """Load and validate a venue file; raises devices.tomlfile.ConfigError with line and key."""
    return load_toml(path, Venue)
