"""Links a staff member makes that work without a login: they end with what the account may do.

A private iCal link of the bookings (broker.bookings.bookings, `NewCalendarFeed`) shows every booking
with the guests' names to whoever holds the URL, without a login; only the token's hash is
stored. It is the account's: disabling the account or changing its role ends it (as both end the
account's logins, broker.accounts.logins), in the same transaction, and it stays ended when the
account is enabled again (the user makes a new one). One function ends them, `end_user_links`,
called by `users.set_active` and `users.set_role` (the dashboard's commands and `lavos user` alike).

The other credentials of an account need nothing here: its API tokens are checked against the
account on every request (`users.find_token`: a disabled account's token is refused, and a token
acts with the account's role of the moment). A tournament's TV link is not an account's: it is
the tournament's (one per tournament, made and revoked by any staff running it, for the hall's
screen and the players' phones, showing the bracket as the hall's wall does, no guest data), so
a staff member leaving does not darken the TV mid-tournament; it ends when revoked or replaced.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.orm import Session

from broker.storage.audit import record_audit
from broker.storage.models import CalendarFeed
from broker.storage.types import utcnow


def revoke_feeds(db: Session, username: str, now: datetime) -> int:
    """`username`'s iCal links stop working; answers how many did."""
    result = db.execute(
        update(CalendarFeed).where(CalendarFeed.username == username, CalendarFeed.revoked_at.is_(None)).values(revoked_at=now)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def end_user_links(db: Session, username: str, *, by: str, reason: str, now: datetime | None = None) -> int:
    """End every link `username` made that works without a login (`reason`: "disabled", "role");
    answers how many ended, audited when any did."""
    ended = revoke_feeds(db, username, now or utcnow())
    if ended:
        record_audit(db, by, "calendar.revoke", f"user:{username}", {"reason": reason, "links": ended})
    return ended
