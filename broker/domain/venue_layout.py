"""What a hall tells the centre about itself: its tables and rooms, by name (pure: no I/O).

The centre's floor (broker.central.live) shows each hall's tables by the names the hall's staff
use, in the venue file's order, including a table whose node has never said a word (its module
"not connected yet"). The live topics carry only table ids, so the hub publishes this once per
connection, retained, on `lavos/v1/hub/venue` (`lavos server --central`), and the hall's bridge
forwards it with the other read-only topics (broker.adapters.centre_bridge). Nothing
personal, nothing about money: the venue file's layout only.
"""

from __future__ import annotations

import json

from broker.domain.venue import Venue
from devices import contract

VENUE_TOPIC = f"{contract.ROOT}/hub/venue"


def venue_layout(venue: Venue) -> bytes:
    doc = {
        "v": 1,
        "id": venue.venue.id,
        "name": venue.venue.name,
        "rooms": [{"id": r.id, "name": r.name, "name_en": r.name_en} for r in venue.rooms],
        "tables": [{"id": t.id, "name": t.name, "name_en": t.name_en, "kind": t.kind.value, "room": t.room} for t in venue.tables],
    }
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
