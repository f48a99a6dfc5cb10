"""What a member and a foosball check-in look like to the dashboard: frozen values, never rows.

The member commands (broker.hall.members) answer with these, and the read models
(broker.hall.read_models) read them, so a page shows the same thing either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from broker.domain.venue import Venue
from broker.hall.row_values import copy_row
from broker.storage.models import FoosballCheckin, Member


@dataclass(frozen=True)
class FeeView:
    year: int
    amount_cents: int
    paid_at: datetime
    recorded_by: str


@dataclass(frozen=True)
class MemberView:
    id: int
    name: str
    kind: str
    active: bool
    note: str
    created_at: datetime
    cards: tuple[str, ...]
    fees: tuple[FeeView, ...]

    def fee_paid(self, year: int) -> bool:
        return any(f.year == year for f in self.fees)


@dataclass(frozen=True)
class CheckinView:
    """A foosball check-in that counts now: until `active_until` (the check-in window after its last goal)."""

    id: int
    table_id: str
    member_id: int
    member: str
    checked_in_at: datetime
    last_goal_at: datetime | None
    goals: int
    by: str
    active_until: datetime


def member_view(m: Member) -> MemberView:
    return MemberView(
        m.id, m.name, m.kind, m.active, m.note, m.created_at, tuple(c.uid for c in m.cards), tuple(copy_row(FeeView, f) for f in m.fees)
    )


def checkin_window(venue: Venue) -> timedelta:
    return timedelta(minutes=venue.billing.foosball_checkin_min)


def checkin_view(c: FoosballCheckin, name: str, venue: Venue) -> CheckinView:
    until = (c.last_goal_at or c.checked_in_at) + checkin_window(venue)
    return copy_row(CheckinView, c, member=name, active_until=until)
