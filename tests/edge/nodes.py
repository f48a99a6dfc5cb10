"""Helpers for the edge tests: a node.toml-equivalent config against a test broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from devices.contract import decode
from devices.kinds import Kind, default_pins
from devices.nodeconfig import NodeConfig

POCKET_PINS = default_pins(Kind.POOL).pockets


def node_config(tmp_path: Path, port: int, *, table: str = "pool-01", kind: Kind = Kind.POOL, **overrides: Any) -> NodeConfig:
    password_file = tmp_path / f"{table}.password"
    password_file.write_text(f"pw-{table}\n")
    data: dict[str, Any] = {
        "table": table,
        "kind": kind,
        "pins": default_pins(kind).model_dump(),
        "mqtt": {
            "host": "127.0.0.1",
            "port": port,
            "password_file": str(password_file),
            "reconnect_min_s": 0.1,
            "reconnect_max_s": 0.5,
            "keepalive_s": 5,
        },
        "outbox": {"path": str(tmp_path / f"{table}-outbox.db")},
        # A test drives pulses far faster than any player: storms are tested in the filter's own tests.
        "filter": {"chatter_max_edges": 100_000},
        "telemetry_interval_s": 30,
    }
    for key, value in overrides.items():
        if isinstance(value, dict):
            data[key] = {**data.get(key, {}), **value}
        else:
            data[key] = value
    return NodeConfig.model_validate(data)


def events(collector: Any, table: str = "pool-01", event_type: str = "pocket") -> list[Any]:
    """Decoded events of one type received so far (validated against the wire contract)."""
    suffix = f"table/{table}/event/{event_type}"
    return [decode(m.topic, m.payload).body for m in collector.matching(lambda m: m.topic.endswith(suffix))]


def light_states(collector: Any, table: str = "pool-01") -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in collector.matching(lambda m: m.topic.endswith(f"table/{table}/light/state"))]
