"""Who may play as a member, and how long a foosball check-in lasts: pure rules, one home each.

The hub (staff check-ins, card taps, the club rate at a game's start), the watchdog (ending
stale check-ins) and the dashboard (who is checked in where) all ask these functions, so the
rule cannot drift between them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Literal, get_args

from broker.domain.refusals import N_, Refusal

Eligibility = Literal["ok", "inactive", "unpaid"]
MemberKind = Literal["individual", "collective", "honorary"]
MEMBER_KINDS: tuple[str, ...] = get_args(MemberKind)
DEFAULT_FEE_CENTS = 1000
MAX_IMPORT_BYTES = 2 * 1024 * 1024  # a member CSV: the club has 59 members, 2 MiB is thousands of rows
FIRST_YEAR, LAST_YEAR = 1990, 2100
_UID = re.compile(r"^[0-9a-f]{4,32}$")  # the wire contract's card uid
_UID_SEPARATORS = re.compile(r"[\s:\-]")


class MemberError(Refusal):
    """A registry operation that cannot be done; str() says why and what to do."""


def normalize_uid(uid: str) -> str:
    """A card UID as the readers send it: lowercase hex, no separators ("04:A2:B3:C4" → "04a2b3c4")."""
    cleaned = _UID_SEPARATORS.sub("", uid).lower()
    if not _UID.match(cleaned):
        raise MemberError(N_("%(card)s is not a card number: 4 to 32 characters 0-9 and a-f, e.g. 04a2b3c4."), card=uid[:40])
    return cleaned


def check_year(year: int) -> int:
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise MemberError(
            N_("The year %(year)d is outside %(first)d–%(last)d; give a calendar year, e.g. 2026."),
            year=year,
            first=FIRST_YEAR,
            last=LAST_YEAR,
        )
    return year


def fee_paid(paid_years: Iterable[int], year: int) -> bool:
    """Is the membership fee of `year` (a calendar year in the venue's time zone) recorded?"""
    return year in set(paid_years)


def eligibility(active: bool, paid_years: Iterable[int], year: int) -> Eligibility:
    """May this member play as a member in `year`: an active membership with the year's fee paid.

    Every kind of membership needs the year recorded (the statutes make no exception); honorary
    members get a 0-cent payment.
    """
    if not active:
        return "inactive"
    return "ok" if fee_paid(paid_years, year) else "unpaid"


def refusal(verdict: Eligibility, member: str, year: int, *, foosball: bool = False) -> MemberError | None:
    """Why `member` may not play as a member in `year` (the `eligibility` verdict), in the words
    staff read (translated where shown), or None when they may. The one wording of the rule:
    a staff check-in, a game started for a member and the card-refused alert all come here."""
    if verdict == "inactive":
        if foosball:
            return MemberError(N_("The membership of %(member)s is not active: foosball is for members only."), member=member)
        return MemberError(N_("The membership of %(member)s is not active."), member=member)
    if verdict == "unpaid":
        return MemberError(N_("%(member)s has not paid the %(year)d fee: record the payment first."), member=member, year=year)
    return None


def checkin_window(minutes: int) -> timedelta:
    """A check-in lasts this long after the last goal (or the check-in itself)."""
    return timedelta(minutes=minutes)


def checkin_ends(checked_in_at: datetime, last_goal_at: datetime | None, window: timedelta) -> datetime:
    """When a foosball check-in runs out if nothing more happens on the table."""
    return (last_goal_at or checked_in_at) + window


def checkin_active(checked_in_at: datetime, last_goal_at: datetime | None, window: timedelta, now: datetime) -> bool:
    return checkin_ends(checked_in_at, last_goal_at, window) > now
