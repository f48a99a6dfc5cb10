"""Every discovery payload of the shipped venue against HA's schema (tests/home_assistant/ha_schema.py),
and its templates rendered against the messages the hall really sends."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Literal

import jinja2
import pytest
from pydantic import ValidationError

from broker.domain.floor import home_assistant as ha
from broker.domain.venue import load_venue
from devices import contract
from devices.kinds import Kind
from tests.home_assistant.ha_schema import DISCOVERY_TOPIC, SCHEMA_OF_COMPONENT, BinarySensorConfig, SensorConfig
from tests.support.hub import VENUE

V = load_venue(VENUE)
ALL = ha.venue_discovery(V)


def _render(template: str, payload: bytes) -> str:
    """HA's render_with_possible_json_value: `value` and `value_json`, and its to_json filter."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.filters["to_json"] = lambda v: json.dumps(v)
    text = payload.decode()
    try:
        value_json = json.loads(text)
    except ValueError:
        value_json = None
    return env.from_string(template).render(value=text, value_json=value_json).strip()


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.topic)
def test_every_payload_fits_home_assistants_schema(d: Any) -> None:
    m = re.match(DISCOVERY_TOPIC, d.topic)
    assert m, d.topic
    config = json.loads(d.payload())  # what goes on the wire, not the dict
    SCHEMA_OF_COMPONENT[m.group(1)].model_validate(config)
    assert "command_topic" not in d.payload().decode()  # read-only: HA cannot switch anything


def test_the_schema_refuses_what_ha_would_ignore_or_reject() -> None:
    good = json.loads(next(d for d in ALL if d.topic.endswith("/light/config")).payload())
    for bad in ({**good, "command_topic": "lavos/v1/table/pool-01/light/set"}, {**good, "colour": "red"}, {**good, "state_topic": ""}):
        with pytest.raises(ValidationError):
            BinarySensorConfig.model_validate(bad)
    with pytest.raises(ValidationError):
        BinarySensorConfig.model_validate({**good, "device": {"name": "no identifiers"}})
    amount = json.loads(next(d for d in ALL if d.topic.endswith("/amount/config")).payload())
    with pytest.raises(ValidationError):
        SensorConfig.model_validate({**amount, "unit_of_measurement": "€"})
    with pytest.raises(ValidationError):
        SensorConfig.model_validate({**amount, "state_class": "measurement"})


def test_one_device_per_table_named_as_staff_name_it_in_its_room() -> None:
    rooms = {r.id: r.name for r in V.rooms}
    by_device: dict[str, set[str]] = {}
    for d in ALL:
        dev = d.config["device"]
        assert isinstance(dev, dict)
        assert dev["manufacturer"] == "Lavos table control"
        by_device.setdefault(dev["identifiers"][0], set()).add(json.dumps(dev, sort_keys=True))
    assert len(by_device) == len(V.tables)
    assert all(len(v) == 1 for v in by_device.values())  # every entity of a table: the same device
    for t in V.tables:
        dev = next(d.config["device"] for d in ha.table_discovery(V, t))
        assert isinstance(dev, dict)
        assert dev["name"] == t.name and dev["suggested_area"] == rooms[t.room]


def test_unique_ids_are_unique_and_stable() -> None:
    ids = [d.config["unique_id"] for d in ALL]
    assert not [i for i, n in Counter(ids).items() if n > 1]
    assert [d.config["unique_id"] for d in ha.venue_discovery(load_venue(VENUE))] == ids
    assert "lavos_lavos_pool_01_light" in ids  # a rename of this scheme orphans every club's HA entities


def test_each_table_gets_the_entities_its_kind_has() -> None:
    kinds = {t.id: Kind(t.kind) for t in V.tables}
    objects: dict[str, set[str]] = {}
    for d in ALL:
        objects.setdefault(d.topic.split("/")[2], set()).add(d.topic.split("/")[3])
    for t in V.tables:
        got = objects[f"lavos_lavos_{t.id.replace('-', '_')}"]
        want = {"node", "light"}
        if kinds[t.id].billed:
            want |= {"game", "amount"}
        if kinds[t.id].pockets:
            want |= {"pocket"}
        if kinds[t.id].has_goals:
            want |= {"goal"}
        assert got == want, t.id


def _config(table: str, obj: str) -> dict[str, Any]:
    return next(d.config for d in ALL if d.topic.endswith(f"_{table.replace('-', '_')}/{obj}/config"))


def test_templates_read_the_messages_the_hall_sends() -> None:
    now = contract.utcnow()
    light = _config("pool-01", "light")
    assert light["state_topic"] == contract.light_state_topic("pool-01")
    for on, want in ((True, "ON"), (False, "OFF")):
        msg = contract.encode(contract.LightState(on=on, blink=False, cause="command", cmd_id=None))
        assert _render(light["value_template"], msg) == want
    node = _config("pool-01", "node")
    states: tuple[tuple[Literal["online", "offline"], str], ...] = (("online", "ON"), ("offline", "OFF"))
    for state, want in states:
        status = contract.encode(contract.Status(state=state, boot="b1", version="1", ts=now))
        assert _render(node["value_template"], status) == want
        assert _render(light["availability"][0]["value_template"], status) == state  # payload_available/_not_available
    assert light["availability"][0]["topic"] == contract.status_topic("pool-01")
    game = _config("pool-01", "game")
    assert game["state_topic"] == ha.ha_state_topic("pool-01")  # name-free: not the summary, which names the member
    for game_state, want in (("running", "ON"), ("paused", "ON"), ("free", "OFF")):
        assert _render(game["value_template"], ha.ha_state(250, game_state)) == want
    amount = _config("pool-01", "amount")
    assert amount["state_topic"] == ha.ha_state_topic("pool-01")
    assert _render(amount["value_template"], ha.ha_state(1240, "running")) == "12.40"
    assert _render(amount["value_template"], ha.ha_state(5, "paused")) == "0.05"
    pocket = _config("pool-01", "pocket")
    assert pocket["state_topic"] == contract.event_topic("pool-01", "pocket")
    event = {"v": 1, "table": "pool-01", "type": "pocket", "boot": "b", "seq": 3, "ts": now.isoformat(), "ts_synced": True}
    out = json.loads(_render(pocket["value_template"], json.dumps({**event, "data": {"pocket": 4, "pulse_ms": 20.0}}).encode()))
    assert out == {"event_type": "drop", "pocket": 4} and out["event_type"] in pocket["event_types"]
    goal = _config("foos-01", "goal")
    out = json.loads(_render(goal["value_template"], json.dumps({**event, "type": "goal", "data": {"side": "away"}}).encode()))
    assert out["event_type"] == "away" and out["event_type"] in goal["event_types"]


def test_the_hubs_own_topics_are_its_own() -> None:
    # The amount's topic is under lavos/v1/ (the hub may write it, HA may read it) and no node's.
    assert ha.ha_state_topic("pool-01").startswith(f"{contract.ROOT}/")
    with pytest.raises(contract.ContractError):
        contract.parse_topic(ha.ha_state_topic("pool-01"))
