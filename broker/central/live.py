"""The halls' live state at the centre: what their bridges forward under `hall/<hall>/…`.

The centre's broker receives, per hall (broker.adapters.centre_bridge, `lavos central bridge` at the
hall): each table's node status and light state, the name-free game state
(`lavos/v1/ha/<table>/state`), the hub's status, the hall's layout (`lavos/v1/hub/venue`: its tables
by name, broker.domain.venue_layout), and the bridge's own state on `hall/<hall>/bridge/state` ("1"
up, "0" down: the bridge says it, and "0" is its will, so the centre's broker says "0" itself when
the link drops). This subscriber keeps the latest of each in memory (a floor is the
latest retained state, not history) and writes the link's changes to the database, so "bez
spojenia od 19:42" survives a restart of the centre: the time is the first "0" after a "1".

Topics that are not of these shapes are ignored. What is kept is bounded whatever a hall's bridge
login sends (a stolen one could make up ids without end): at most MAX_HALLS halls and MAX_TABLES
tables a hall, names cut to NAME_LEN.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from broker.adapters.centre_bridge import FORWARDED, LINK_STATE
from broker.central.accounts import HALL_ID
from broker.storage.engine import Store
from broker.storage.models import CentralHall
from broker.storage.types import utcnow

log = logging.getLogger("lavos.central.live")

PREFIX = "hall"
SUBSCRIPTIONS = tuple(f"{PREFIX}/+/{topic}" for topic in (*FORWARDED, LINK_STATE))
MAX_HALLS = 1000
MAX_TABLES = 500  # a hall's tables: the club has 14, the load bench's made-up hall 1,000 would be cut
NAME_LEN = 64


@dataclass(frozen=True)
class TableLive:
    table: str
    online: bool | None = None  # the node's module: None, never heard of
    light_on: bool | None = None
    game: str | None = None  # "running", "paused", or None: free (the name-free game state)
    amount_cents: int | None = None
    seen_at: datetime | None = None


@dataclass(frozen=True)
class TableName:
    """A table as the hall's venue file names it (its layout)."""

    id: str
    name: str
    name_en: str | None = None
    room: str | None = None


@dataclass
class HallLive:
    tables: dict[str, TableLive] = field(default_factory=dict)
    hub_online: bool | None = None
    hub_seen_at: datetime | None = None
    layout: tuple[TableName, ...] = ()  # empty until the hall's hub has published it

    def rows(self) -> list[tuple[TableName, TableLive]]:
        """Every table: the layout's in its order (one never heard of too), then any other that reports, by id."""
        named = {t.id for t in self.layout}
        out = [(t, self.tables.get(t.id) or TableLive(t.id)) for t in self.layout]
        return out + [(TableName(tid, tid), live) for tid, live in sorted(self.tables.items()) if tid not in named]

    def modules(self) -> tuple[int, int]:
        """(connected, all) of the hall's table modules."""
        rows = self.rows()
        return sum(1 for _, live in rows if live.online), len(rows)


def _table_state(rest: list[str], t: TableLive, doc: dict[str, Any], now: datetime) -> TableLive | None:
    """The table after one message on `lavos/v1/<rest>`; None for a topic that is not a table's."""
    kind, what = rest[0], rest[2:]
    if kind == "table" and what == ["status"]:
        return replace(t, online=doc.get("state") == "online", seen_at=now)
    if kind == "table" and what == ["light", "state"]:
        return replace(t, light_on=bool(doc.get("on")), seen_at=now)
    if kind == "ha" and what == ["state"]:
        state, amount = doc.get("state"), doc.get("amount_cents")
        game = state if state in ("running", "paused") else None
        return replace(t, game=game, amount_cents=amount if isinstance(amount, int) else None, seen_at=now)
    return None


def _layout(doc: dict[str, Any]) -> tuple[TableName, ...]:
    tables = doc.get("tables")
    if not isinstance(tables, list):
        return ()
    out = []
    for t in tables[:MAX_TABLES]:
        if isinstance(t, dict) and isinstance(t.get("id"), str) and HALL_ID.match(t["id"]) and isinstance(t.get("name"), str):
            en, room = t.get("name_en"), t.get("room")
            out.append(
                TableName(
                    t["id"],
                    t["name"][:NAME_LEN],
                    en[:NAME_LEN] if isinstance(en, str) else None,
                    room[:NAME_LEN] if isinstance(room, str) else None,
                )
            )
    return tuple(out)


def _json(payload: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return {}
    return doc if isinstance(doc, dict) else {}


class Floors:
    """The latest live state of every hall, fed by MQTT messages (any thread), read as copies."""

    def __init__(self, store: Store | None = None, clock: Callable[[], datetime] = utcnow) -> None:
        self._store = store
        self._clock = clock
        self._halls: dict[str, HallLive] = {}
        self._lock = threading.Lock()
        self.received = 0

    def hall(self, hall: str) -> HallLive:
        with self._lock:
            live = self._halls.get(hall) or HallLive()
            return HallLive(dict(live.tables), live.hub_online, live.hub_seen_at, live.layout)

    def apply(self, topic: str, payload: bytes) -> None:
        parts = topic.split("/")
        if len(parts) < 4 or parts[0] != PREFIX or not HALL_ID.match(parts[1]):
            return
        hall, rest, now = parts[1], parts[2:], self._clock()
        self.received += 1
        if "/".join(rest) == LINK_STATE:
            self._link(hall, payload.strip() == b"1", now)
            return
        if rest[:2] != ["lavos", "v1"]:
            return
        rest = rest[2:]
        with self._lock:
            live = self._halls.get(hall)
            if live is None:
                if len(self._halls) >= MAX_HALLS:
                    return
                live = self._halls[hall] = HallLive()
            if rest == ["hub", "status"]:
                live.hub_online, live.hub_seen_at = _json(payload).get("state") == "online", now
                return
            if rest == ["hub", "venue"]:
                live.layout = _layout(_json(payload))
                return
            if len(rest) < 3 or not HALL_ID.match(rest[1]):
                return
            table = rest[1]
            t = live.tables.get(table)
            if t is None and len(live.tables) >= MAX_TABLES:
                return
            t = _table_state(rest, t or TableLive(table), _json(payload), now)
            if t is not None:
                live.tables[table] = t

    def _link(self, hall: str, up: bool, now: datetime) -> None:
        if self._store is None:
            return
        try:
            with self._store.session() as db:
                row = db.get(CentralHall, hall, with_for_update=True)
                if row is not None and row.link_up is not up:  # a repeat keeps the time of the change
                    row.link_up, row.link_changed_at = up, now
        except Exception:
            log.exception("cannot note %s's link state", hall)


class LiveSubscriber:
    """A paho client on the centre's broker, subscribed to every hall's bridged topics."""

    def __init__(self, host: str, port: int, username: str, password: str, floors: Floors, *, tls_ca: str | None = None) -> None:
        self.floors = floors
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=username, clean_session=True)
        self.client.username_pw_set(username, password)
        if tls_ca:
            self.client.tls_set(ca_certs=tls_ca)
        self.client.on_connect = self._on_connect
        self.client.on_message = lambda _c, _u, m: floors.apply(m.topic, bytes(m.payload))
        self.client.reconnect_delay_set(1, 10)
        self._host, self._port = host, port
        self.connected = threading.Event()

    def _on_connect(self, client: mqtt.Client, _userdata: Any, _flags: Any, rc: Any, _props: Any = None) -> None:
        if rc.is_failure:
            log.warning("the centre's broker refused the login: %s", rc)
            return
        client.subscribe([(t, 1) for t in SUBSCRIPTIONS])
        self.connected.set()

    def start(self) -> None:
        self.client.connect_async(self._host, self._port, keepalive=20)
        self.client.loop_start()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
