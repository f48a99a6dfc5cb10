"""What a member and a foosball check-in look like to the dashboard: frozen values, never rows.

The member commands (broker.people.members) answer with these, and the read models
(broker.hall.read_models) read them, so a page shows the same thing either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated

from broker.core.row_values import copy_row
from broker.domain.json_shape import HIDDEN
from broker.domain.venue import Venue
from broker.storage.models import FoosballCheckin, Member


@dataclass(frozen=True)
class FeeView:
    year: int
    amount_cents: int
    paid_at: datetime
    recorded_by: str


@dataclass(frozen=True)
class MemberFound:
    """What staff see of a member when searching by name: enough to choose them, no note, no card UIDs."""

    id: int
    name: str
    kind: str
    active: bool
    fee_paid: bool  # the fee of `fee_year` is paid
    fee_year: int  # the venue's calendar year now, whose fee makes a club card valid


@dataclass(frozen=True)
class MemberView(MemberFound):
    """A member of the registry as the manager sees them, with cards and fee payments."""

    note: str
    cards: tuple[str, ...]
    fees: tuple[FeeView, ...]
    created_at: datetime

    def found(self) -> MemberFound:
        """What staff may see of this member."""
        return MemberFound(self.id, self.name, self.kind, self.active, self.fee_paid, self.fee_year)


@dataclass(frozen=True)
class CheckinView:
    """A foosball check-in that counts now: until `active_until` (the check-in window after its last goal)."""

    id: int
    table_id: Annotated[str, HIDDEN]  # the JSON lists check-ins under their table
    member_id: int
    member: str
    checked_in_at: datetime
    last_goal_at: datetime | None
    goals: int
    by: str
    active_until: datetime


def member_view(m: Member, fee_year: int) -> MemberView:
    """The member as it is in `fee_year` (the venue's calendar year now: HallState.fee_year)."""
    fees = tuple(copy_row(FeeView, f) for f in m.fees)
    return MemberView(
        m.id,
        m.name,
        m.kind,
        m.active,
        any(f.year == fee_year for f in fees),
        fee_year,
        m.note,
        tuple(c.uid for c in m.cards),
        fees,
        m.created_at,
    )


def checkin_window(venue: Venue) -> timedelta:
    return timedelta(minutes=venue.billing.foosball_checkin_min)


def checkin_view(c: FoosballCheckin, name: str, venue: Venue) -> CheckinView:
    until = (c.last_goal_at or c.checked_in_at) + checkin_window(venue)
    return copy_row(CheckinView, c, member=name, active_until=until)
