"""Money arithmetic and bill assembly: integer cents only, never floats.

A float cannot hold 0.1 €, and a bill that is off by a cent after a restart is a bill nobody
trusts, so every amount here is an int and every division rounds explicitly, half-up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction
from itertools import groupby
from typing import TYPE_CHECKING, Annotated, Literal

from broker.domain.json_shape import derived, every_field_sent, json_name

if TYPE_CHECKING:
    from broker.domain.tariffs import Segment
    from broker.domain.venue import Venue

LineKind = Literal["time", "correction", "minimum"]  # a game's own lines; its extras are on its tab

_US_PER_S = 1_000_000


def div_half_up(numerator: int, denominator: int) -> int:
    """numerator / denominator rounded half-up, for non-negative integers."""
    if numerator < 0 or denominator <= 0:
        raise ValueError(f"div_half_up needs numerator >= 0 and denominator > 0, got {numerator}/{denominator}")
    return (2 * numerator + denominator) // (2 * denominator)


def _exact_seconds(actual: float | int | Fraction | timedelta) -> Fraction:
    # Fraction(float) is exact, and a timedelta is counted in whole microseconds, so no
    # 5400.000000001 ever turns 90 minutes into 91.
    if isinstance(actual, timedelta):
        return Fraction(actual // timedelta(microseconds=1), _US_PER_S)
    if isinstance(actual, bool) or not isinstance(actual, (int, float, Fraction)):
        raise ValueError(f"a duration in seconds must be a number or timedelta, got {actual!r}")
    return Fraction(actual)


def billed_seconds(actual_seconds: float | int | Fraction | timedelta, unit_s: int) -> int:
    """Seconds to charge: every started unit counts whole (61 s at unit 60 → 120)."""
    if unit_s <= 0:
        raise ValueError(f"billing unit must be positive, got {unit_s}")
    exact = _exact_seconds(actual_seconds)
    if exact < 0:
        raise ValueError(f"a duration cannot be negative, got {actual_seconds!r}")
    units = -(-exact.numerator // (exact.denominator * unit_s))  # ceiling division
    return units * unit_s


def time_amount_cents(rate_cents_per_hour: int, billed_seconds: int) -> int:
    """rate × seconds / 3600, half-up to the cent."""
    return div_half_up(rate_cents_per_hour * billed_seconds, 3600)


def vat_share(total_cents: int, vat_percent: int) -> int:
    """The VAT contained in a gross (VAT-inclusive) amount: total × p / (100 + p), half-up."""
    return div_half_up(total_cents * vat_percent, 100 + vat_percent)


def format_eur(cents: int, lang: Literal["sk", "en"] = "sk") -> str:
    """'6,00 €' for Slovak staff, '€6.00' in English."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    if lang == "sk":
        return f"{sign}{whole},{part:02d} €"
    return f"{sign}€{whole}.{part:02d}"


@every_field_sent
@dataclass(frozen=True)
class BillLine:
    kind: LineKind
    description: str  # Slovak, for staff and the receipt
    description_en: str
    # Machine code: "standard", "club_card", "card_unpaid", "card_table_not_eligible",
    # "band:<name>", "<tariff>_hours_ended", "<tariff>", "manual", "floor_zero", "minimum".
    reason: str
    amount_cents: int
    tariff_id: Annotated[str | None, json_name("tariff")] = None
    rate_cents_per_hour: int | None = None
    start: datetime | None = None
    end: datetime | None = None
    billed_seconds: int | None = None
    quantity: int = 1
    unit_cents: int | None = None

    @derived
    def amount(self) -> str:
        return format_eur(self.amount_cents)


@dataclass(frozen=True)
class Bill:
    lines: tuple[BillLine, ...]
    total_cents: int
    vat_percent: int
    vat_cents: int
    net_cents: int

    @property
    def time_cents(self) -> int:
        return sum(line.amount_cents for line in self.lines if line.kind == "time")

    @property
    def main_tariff(self) -> str | None:
        """The tariff most of the table time was billed at (None: no table time), e.g. for the game's
        metric point: a game started without a tariff is billed at the venue's default or, with a
        paid-up card, the member tariff; its lines say which."""
        seconds: dict[str, int] = {}
        for line in self.lines:
            if line.kind == "time" and line.tariff_id:
                seconds[line.tariff_id] = seconds.get(line.tariff_id, 0) + (line.billed_seconds or 0)
        return max(seconds, key=lambda t: seconds[t]) if seconds else None

    # The money as staff read it, in the JSON beside the cents (a client shows it as it is).
    @derived
    def total(self) -> str:
        return format_eur(self.total_cents)

    @derived
    def total_en(self) -> str:
        return format_eur(self.total_cents, "en")

    @derived
    def vat(self) -> str:
        return format_eur(self.vat_cents)


def minimum_line(time_lines: Iterable[BillLine], minimum_cents: int) -> BillLine | None:
    """Top the table time up to the minimum charge; a game with no billed time owes none."""
    lines = list(time_lines)
    time_total = sum(line.amount_cents for line in lines)
    if not lines or time_total >= minimum_cents:
        return None
    missing = minimum_cents - time_total
    return BillLine(
        kind="minimum",
        description=f"Doplatok do minimálnej platby {format_eur(minimum_cents)}",
        description_en=f"Top-up to the minimum charge of {format_eur(minimum_cents, 'en')}",
        reason="minimum",
        amount_cents=missing,
        unit_cents=missing,
    )


def make_bill(lines: Iterable[BillLine], vat_percent: int) -> Bill:
    """Sum the lines into a bill; a negative sum (corrections) gets a visible line up to zero.

    We clamp rather than refuse: a correction is validated when the bill is smaller than it
    will be at the end, and time only adds to it, so only the final sum can tell.
    """
    all_lines = list(lines)
    total = sum(line.amount_cents for line in all_lines)
    if total < 0:
        all_lines.append(
            BillLine(
                kind="correction",
                description="Úprava: účet nemôže byť záporný",
                description_en="Adjustment: a bill cannot be negative",
                reason="floor_zero",
                amount_cents=-total,
                unit_cents=-total,
            )
        )
        total = 0
    vat = vat_share(total, vat_percent)
    return Bill(lines=tuple(all_lines), total_cents=total, vat_percent=vat_percent, vat_cents=vat, net_cents=total - vat)


# Why a line is not at the plain rate, told to staff in both languages.
_NOTES = {
    "card_unpaid": ("členský príspevok za tento rok nie je zaplatený", "this year's membership fee is not paid"),
    "card_table_not_eligible": ("na tomto stole klubová zľava neplatí", "the club-card rate does not apply at this table"),
}


def _note(basis: str, band: str | None) -> tuple[str, str]:
    sk, en = _NOTES.get(basis, ("", ""))
    if basis.endswith("_hours_ended"):
        sk, en = "po skončení povolených hodín tarify", "after the tariff's hours ended"
    parts = [(f"pásmo {band}", f"band {band}")] if band else []
    if sk:
        parts.append((sk, en))
    return "".join(f" ({p[0]})" for p in parts), "".join(f" ({p[1]})" for p in parts)


def time_lines(segments: Iterable[Segment], venue: Venue) -> list[BillLine]:
    """One line per run of consecutive segments with the same table, tariff, rate and reason.

    A pause does not start a new line (paused time simply is not in any segment), so pausing
    never costs an extra rounding; a rate or table change does, as the issue asks for
    itemised lines, and each line is rounded up to the unit on its own.
    """
    lines = []
    for _, run in groupby(segments, key=lambda s: s.key):
        group = list(run)
        first = group[0]
        played = sum((s.duration for s in group), timedelta())
        seconds = billed_seconds(played, venue.billing.unit_s)
        tariff = venue.tariff(first.tariff_id)
        table = venue.table(first.table)
        note_sk, note_en = _note(first.basis, first.band)
        rate = first.rate_cents_per_hour
        minutes = seconds // 60
        lines.append(
            BillLine(
                kind="time",
                description=f"{table.name}: {tariff.name}{note_sk}, {format_eur(rate)}/h, {minutes} min",
                description_en=f"{table.name}: {tariff.name_en or tariff.name}{note_en}, {format_eur(rate, 'en')}/h, {minutes} min",
                reason=first.reason,
                amount_cents=time_amount_cents(rate, seconds),
                tariff_id=first.tariff_id,
                rate_cents_per_hour=rate,
                start=first.start,
                end=group[-1].end,
                billed_seconds=seconds,
            )
        )
    return lines
