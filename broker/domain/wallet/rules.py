"""A member's credit and packages as rows, and what the rows allow. Pure: rows in, figures or a refusal out.

Every change is a row (`Entry`): a top-up, a use, an expiry, a refund, a reversal; a package's sale and
each use of it. Nothing is updated or deleted, so a balance is the sum of its rows: credit in cents,
a package in units (minutes of table time, or lessons).

Expiry (a venue's `credit_valid_days`, `package_valid_days`): a top-up may carry the date its credit
lapses. What a use takes comes from the top-up that lapses first (`lots`: first to expire, first
used; credit without a date last), so on a top-up's date what is left of it is what lapses
(`lapsed`), and never more than the balance.

A package covers table time minute by minute at its rate (`cover`): each minute it covers is worth
the package's rate per hour / 60, and never more than that minute costs on the bill; minutes it does
not cover, and what a covered minute costs above its rate, stay on the bill.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from broker.domain.euros import euros
from broker.domain.refusals import N_, Refusal

__all__ = [
    "HOURS",
    "KINDS",
    "LESSONS",
    "MAX_CENTS",
    "Cover",
    "Entry",
    "Lot",
    "TimeSlice",
    "WalletRefused",
    "balance",
    "check_amount",
    "check_use",
    "cover",
    "lapsed",
    "lots",
]

HOURS = "hours"  # a package of table time: its units are minutes, its rate cents per hour
LESSONS = "lessons"  # a package of lessons: its units are lessons, its rate cents per lesson
KINDS = (HOURS, LESSONS)
MAX_CENTS = 100_000  # 1 000 € of credit at once is a typing mistake

TOPUP, USE, EXPIRY, REFUND, REVERSAL, SALE = "topup", "use", "expiry", "refund", "reversal", "sale"
ENTRY_KINDS = (TOPUP, USE, EXPIRY, REFUND, REVERSAL, SALE)


class WalletRefused(Refusal):
    """A top-up, a use, a refund or a sale the wallet refuses; the message says what to do instead."""


@dataclass(frozen=True)
class Entry:
    """One row of a member's credit (`cents`, signed) or of one package (`units`, signed)."""

    id: int
    kind: str  # topup, use, expiry, refund, reversal (credit); sale, use, expiry, refund, reversal (a package)
    cents: int = 0
    units: int = 0
    expires_on: date | None = None  # a top-up's (or a package sale's) last valid day
    reverses_id: int | None = None


def balance(entries: Iterable[Entry]) -> int:
    """Credit left, in cents: the sum of the rows."""
    return sum(e.cents for e in entries)


def units_left(entries: Iterable[Entry]) -> int:
    """A package's units left: the sum of its rows."""
    return sum(e.units for e in entries)


def check_amount(cents: object, *, what: str = "credit") -> int:
    """An amount of money typed by staff: whole cents above zero, at most MAX_CENTS."""
    if isinstance(cents, bool) or not isinstance(cents, int) or cents <= 0:
        raise WalletRefused(N_("Give the amount in whole cents above zero, e.g. 20,00 €."))
    if cents > MAX_CENTS:
        raise WalletRefused(N_("%(amount)s at once is more than the till takes; split it or check the amount."), amount=euros(cents))
    return cents


def check_use(balance_cents: int, amount_cents: int, *, member: str) -> None:
    """A use of `amount_cents` of credit against the balance: never below zero."""
    if amount_cents > balance_cents:
        raise WalletRefused(
            N_("%(member)s has %(balance)s of credit, less than %(amount)s; pay the rest another way."),
            member=member,
            balance=euros(balance_cents),
            amount=euros(amount_cents),
        )


@dataclass(frozen=True)
class Lot:
    """What is left of one top-up (or of credit without a date: id 0) after the uses, first to expire first used."""

    id: int
    expires_on: date | None
    left_cents: int


def lots(entries: Sequence[Entry]) -> list[Lot]:
    """The credit left per top-up: every top-up adds a lot; everything that takes credit (uses,
    refunds, expiries; a reversal of a use gives back) takes from the lot that lapses first, credit
    without a date last. A reversal of a top-up takes that top-up's own lot. Lots sum to `balance`."""
    ordered = sorted(
        (e for e in entries if e.kind == TOPUP and e.reverses_id is None),
        key=lambda e: (e.expires_on is None, e.expires_on or date.max, e.id),
    )
    left = {e.id: e.cents for e in ordered}
    expiry = {e.id: e.expires_on for e in ordered}
    loose = 0  # money not of a top-up (a reversal giving a use back): spent last, never lapses
    for e in entries:
        if e.kind == TOPUP and e.reverses_id is None:
            continue
        if e.kind == REVERSAL and e.reverses_id in left and e.cents < 0:
            left[e.reverses_id] += e.cents
            continue
        if e.cents > 0:
            loose += e.cents
            continue
        take = -e.cents
        for t in ordered:
            if take == 0:
                break
            got = min(take, max(left[t.id], 0))
            left[t.id] -= got
            take -= got
        loose -= take  # beyond every lot (cannot happen through the writer): shows as a negative loose lot
    out = [Lot(t.id, expiry[t.id], left[t.id]) for t in ordered if left[t.id] != 0]
    if loose:
        out.append(Lot(0, None, loose))
    return out


def lapsed(entries: Sequence[Entry], today: date) -> list[Lot]:
    """The lots whose last valid day is before `today` and still hold credit: what expires now."""
    return [lot for lot in lots(entries) if lot.expires_on is not None and lot.expires_on < today and lot.left_cents > 0]


@dataclass(frozen=True)
class TimeSlice:
    """Table time on a bill billed at one rate: its minutes and what they cost."""

    minutes: int
    amount_cents: int


@dataclass(frozen=True)
class Cover:
    minutes: int  # the package's minutes used
    cents: int  # the table time they paid for


def _half_up(numerator: int, denominator: int) -> int:
    return (2 * numerator + denominator) // (2 * denominator)


def cover(slices: Iterable[TimeSlice], minutes_left: int, rate_cents_per_hour: int, owed_cents: int, *, per_minutes: int = 60) -> Cover:
    """What a package with `minutes_left` at `rate_cents_per_hour` covers of the table time `slices`
    (in the order played), never more than `owed_cents` (the table time still unpaid): minute by
    minute, each minute at the lower of the package's rate and its own price on the bill. A package
    priced as a whole gives its price and its minutes (`rate_cents_per_hour` = the price,
    `per_minutes` = its minutes), so its minutes are worth exactly what was paid for them, to the cent
    rounded half up per use (10 h for 49,99 € is not 4,99 €/h)."""
    minutes = cents = 0
    left = max(minutes_left, 0)
    for s in slices:
        if left == 0:
            break
        if s.minutes <= 0 or s.amount_cents <= 0:
            continue
        m = min(s.minutes, left)
        at_bill = _half_up(s.amount_cents * m, s.minutes)
        at_rate = _half_up(m * rate_cents_per_hour, per_minutes)
        minutes += m
        cents += min(at_bill, at_rate)
        left -= m
    return Cover(minutes, min(cents, max(owed_cents, 0)))
