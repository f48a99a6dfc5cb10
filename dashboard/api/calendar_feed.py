"""The private iCal feed of the bookings (RFC 5545, written by the icalendar library: its escaping,
line folding and UTC times are what calendar apps read).

One event per booking, with the table, the name and the party size, in Slovak (the staff's
language); a cancelled booking stays as STATUS:CANCELLED, so a calendar that had it removes it; a
held one (waiting for its deposit) is TENTATIVE. No phone number: a calendar app copies the feed
to its own servers, and the number is for staff on the hub's pages only.
"""

from __future__ import annotations

from icalendar import Calendar, Event

from broker.bookings.reads import BookingView, Feed
from broker.hall.read_models import HallReads

STATUS = {"held": "TENTATIVE", "cancelled": "CANCELLED"}
WORDS = {"held": "čaká na zálohu", "arrived": "hostia prišli", "seated": "hrá sa", "no_show": "neprišli", "cancelled": "zrušená"}


def _event(reads: HallReads, b: BookingView) -> Event:
    spec = reads.tables.get(b.table)
    table = spec.name if spec else b.table
    ev = Event()
    ev.add("uid", f"booking-{b.id}@{reads.venue.venue.id}.lavos")
    ev.add("dtstamp", b.created_at)
    ev.add("dtstart", b.start)
    ev.add("dtend", b.end)
    ev.add("summary", f"{table}: {b.name} ({b.party_size})")
    ev.add("location", f"{reads.venue.venue.name}, {table}")
    ev.add("status", STATUS.get(b.state, "CONFIRMED"))
    lines = [f"Rezervácia č. {b.id}, {b.party_size} os."]
    if b.state in WORDS:
        lines.append(WORDS[b.state])
    if b.note:
        lines.append(b.note)
    ev.add("description", "\n".join(lines))
    return ev


def ics(reads: HallReads, feed: Feed) -> bytes:
    cal = Calendar()
    cal.add("prodid", "-//Lavos table control//bookings//SK")
    cal.add("version", "2.0")
    cal.add("calscale", "GREGORIAN")
    cal.add("x-wr-calname", f"{reads.venue.venue.name}: rezervácie")
    for b in feed.bookings:
        cal.add_component(_event(reads, b))
    feed_bytes: bytes = cal.to_ical()  # icalendar's hint is loose
    return feed_bytes
