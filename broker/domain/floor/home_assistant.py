"""Home Assistant MQTT discovery: what the hub announces for each table (pure: no I/O).

Home Assistant (HA) finds entities by retained JSON configs on
``homeassistant/<component>/<node_id>/<object_id>/config``; each names the topics it reads. We
point HA at the wire contract's own topics (the node's status, light/state, ball drops and
goals), so HA reads what the hall already says. One more topic exists for HA alone:
``lavos/v1/ha/<table>/state``, whether a game is open and its running amount: the contract's
game summary (the `session` topic) names the member playing (HA's login may not read it, nor card taps: the ACL),
and is published on changes only while the amount grows by the minute.

Read-only on purpose: no config carries a ``command_topic`` (the light is a binary_sensor,
never a light or switch entity), and the broker's ACL lets HA's login publish nothing but its
own ``homeassistant/status``. The hub stays the one that switches lights.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from broker.domain.venue import Venue
from devices import contract
from devices.kinds import Kind
from devices.tables import TableSpec

DISCOVERY_PREFIX = "homeassistant"
# HA's birth message (its defaults: topic homeassistant/status, payload "online", QoS 0, not
# retained): HA has just (re)started and forgot every discovered entity, so announce them again.
HA_STATUS_TOPIC = f"{DISCOVERY_PREFIX}/status"
HA_ONLINE = b"online"
MANUFACTURER = "Lavos table control"
CURRENCY = "EUR"  # HA's monetary device class wants an ISO 4217 code; HA shows it as €


def ha_state_topic(table: str) -> str:
    """The hub's retained per-table state for HA (the running amount), under the contract's root."""
    return f"{contract.ROOT}/ha/{table}/state"


@dataclass(frozen=True)
class Discovery:
    """One retained discovery message: where and what."""

    topic: str
    config: dict[str, object]

    def payload(self) -> bytes:
        return json.dumps(self.config, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _node_id(venue: Venue, table: str) -> str:
    # HA allows [a-zA-Z0-9_-] in a node id; a table id is [a-z0-9-] and a venue id a slug.
    return f"lavos_{venue.venue.id}_{table}".replace("-", "_")


def _device(venue: Venue, t: TableSpec) -> dict[str, object]:
    room = next((r for r in venue.rooms if r.id == t.room), None)
    device: dict[str, object] = {
        "identifiers": [_node_id(venue, t.id)],
        "name": t.name,
        "manufacturer": MANUFACTURER,
        "model": Kind(t.kind).value,
    }
    if room is not None:
        device["suggested_area"] = room.name
    return device


def _node_availability(table: str) -> list[dict[str, object]]:
    # The node's birth is {"state":"online",...}, its will (fired by the broker) {"state":"offline",...}.
    return [
        {
            "topic": contract.status_topic(table),
            "value_template": "{{ value_json.state }}",
            "payload_available": "online",
            "payload_not_available": "offline",
        }
    ]


def _hub_availability() -> list[dict[str, object]]:
    # What the hub publishes (the game, its amount) is as fresh as the hub: its birth/will.
    return [
        {
            "topic": contract.HUB_STATUS_TOPIC,
            "value_template": "{{ value_json.state }}",
            "payload_available": "online",
            "payload_not_available": "offline",
        }
    ]


def table_discovery(venue: Venue, t: TableSpec) -> list[Discovery]:
    """The discovery messages of one table (its HA device and entities)."""
    node = _node_id(venue, t.id)
    device = _device(venue, t)
    kind = Kind(t.kind)
    out: list[Discovery] = []

    def add(component: str, object_id: str, config: dict[str, object]) -> None:
        config = {"unique_id": f"{node}_{object_id}", "device": device, "qos": 1, **config}
        out.append(Discovery(f"{DISCOVERY_PREFIX}/{component}/{node}/{object_id}/config", config))

    add(
        "binary_sensor",
        "node",
        {
            "name": "Uzol",  # the node: online or not (its birth and the broker's will)
            "state_topic": contract.status_topic(t.id),
            "value_template": "{{ 'ON' if value_json.state == 'online' else 'OFF' }}",
            "device_class": "connectivity",
            "entity_category": "diagnostic",
        },
    )
    add(
        "binary_sensor",
        "light",
        {
            "name": "Svetlo",
            "state_topic": contract.light_state_topic(t.id),
            "value_template": "{{ 'ON' if value_json.on else 'OFF' }}",
            "device_class": "light",
            "availability": _node_availability(t.id),
        },
    )
    if kind.billed:
        add(
            "binary_sensor",
            "game",
            {
                "name": "Hra",
                # The hub's name-free state (free / running / paused), not the contract's session
                # summary: that one names the member playing, and HA's login may not read it.
                "state_topic": ha_state_topic(t.id),
                "value_template": "{{ 'OFF' if value_json.state == 'free' else 'ON' }}",
                "device_class": "occupancy",
                "availability": _hub_availability(),
            },
        )
        add(
            "sensor",
            "amount",
            {
                "name": "Suma hry",
                "state_topic": ha_state_topic(t.id),
                "value_template": "{{ value_json.amount }}",
                "device_class": "monetary",
                "unit_of_measurement": CURRENCY,
                "suggested_display_precision": 2,
                "availability": _hub_availability(),
            },
        )
    if kind.pockets:
        add(
            "event",
            "pocket",
            {
                "name": "Padnutá guľa",
                "state_topic": contract.event_topic(t.id, "pocket"),
                "value_template": "{{ {'event_type': 'drop', 'pocket': value_json.data.pocket} | to_json }}",
                "event_types": ["drop"],
                "availability": _node_availability(t.id),
            },
        )
    if kind.has_goals:
        add(
            "event",
            "goal",
            {
                "name": "Gól",
                "state_topic": contract.event_topic(t.id, "goal"),
                "value_template": "{{ {'event_type': value_json.data.side} | to_json }}",
                "event_types": ["home", "away"],
                "availability": _node_availability(t.id),
            },
        )
    return out


def venue_discovery(venue: Venue) -> list[Discovery]:
    """Every table's discovery messages, in the venue's order."""
    return [d for t in venue.tables for d in table_discovery(venue, t)]


def ha_state(amount_cents: int, state: str) -> bytes:
    """The retained HA state of one table: the running amount in euros (a string, exact) and the game's state."""
    euros, cents = divmod(amount_cents, 100)
    return json.dumps({"amount": f"{euros}.{cents:02d}", "amount_cents": amount_cents, "state": state}, separators=(",", ":")).encode()
