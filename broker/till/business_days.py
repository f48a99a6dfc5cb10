"""Which business day is open now: the one rule the close-out, the tabs and the payments share.

The business day of a moment (broker.domain.schedule, from the venue's cut) is the day staff work
on, unless its close-out is done: then it is the next one not closed (first_open_day). So a tab
opened or a payment taken after the evening's close-out belongs to the next day, never to the
closed one. Reads only (any session: the writer's, or a reader's).
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy.orm import Session as Db

from broker.domain.schedule import business_day, first_open_day
from broker.domain.venue import Venue
from broker.storage.models import BusinessDay


def closed(db: Db, day: date) -> bool:
    row = db.get(BusinessDay, day)
    return row is not None and row.closed_at is not None


def open_day(db: Db, venue: Venue, now: datetime) -> date:
    """The day staff work on at `now`: its business day, or the next one if that is closed."""
    return first_open_day(business_day(now, venue), lambda d: closed(db, d))
