"""The wire contract v1: topics, round trips, and refusal of everything else with a clear reason."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devices import contract as c

TS = datetime(2026, 11, 30, 17, 5, 0, 123000, tzinfo=UTC)
EVENT_DATA = {
    "pocket": {"pocket": 5, "pulse_ms": 23.5},
    "goal": {"side": "away"},
    "card": {"uid": "04a3b2c15d8000"},
    "button": {"button": "light"},
    "activity": {"source": "coin"},
    "sensor_fault": {"sensor": "pocket-2", "kind": "stuck"},
}


def event_dict(etype: str = "pocket", **changes: Any) -> dict[str, Any]:
    ev = {
        "v": 1,
        "table": "pool-01",
        "type": etype,
        "boot": "b-7f3a",
        "seq": 41,
        "ts": "2026-11-30T17:05:00.123Z",
        "ts_synced": True,
        "data": EVENT_DATA[etype],
    }
    ev.update(changes)
    return ev


def send(topic: str, obj: Any) -> c.Message:
    return c.decode(topic, json.dumps(obj))


def refused(topic: str, payload: Any, match: str) -> None:
    with pytest.raises(c.ContractError, match=match):
        c.decode(topic, payload if isinstance(payload, (bytes, str)) else json.dumps(payload))


POCKET = c.event_topic("pool-01", "pocket")
STATUS = c.status_topic("pool-01")
LIGHT_SET = c.light_set_topic("pool-01")

# ---------------------------------------------------------------------------- round trips

NON_EVENT_MESSAGES = [
    (
        c.status_topic("foos-02"),
        c.Status.model_validate({"state": "online", "boot": "b1", "version": "0.1.0", "ts": TS, "ip": "10.0.0.7"}),
    ),  # ip: a field v1 does not name: kept
    (c.status_topic("foos-02"), c.Status(state="offline")),
    (c.light_state_topic("carom-01"), c.LightState(on=True, blink=True, cause="command", cmd_id="c-1")),
    (c.light_set_topic("carom-01"), c.LightSet(on=False, blink_s=30, cmd_id="6f1c8c8e-2f0b-4c53-9d38-1f6c1f9c2b11")),
    (
        c.telemetry_topic("darts-01"),
        c.Telemetry.model_validate({"uptime_s": 12.5, "cpu_temp_c": 48.3, "outbox": 3, "reconnects": 1, "dropped": 0, "rss_mb": 31.0}),
    ),  # rss_mb: not in v1: kept
    (
        c.session_topic("pool-10"),
        c.SessionSummary(
            session_id="s-1", table="pool-10", state="running", started_at=TS, tariff="club_card", member="m-17", amount_cents=1234
        ),
    ),
    (c.HUB_STATUS_TOPIC, c.HubStatus(state="online", version="0.1.0", ts=TS)),
]


@pytest.mark.parametrize("etype", c.EVENT_TYPES)
def test_every_event_type_round_trips(etype: Any) -> None:
    model = c.EVENT_MODELS[etype]
    event = model(**{**event_dict(etype), "ts": TS})
    msg = c.decode(c.event_topic("pool-01", etype), c.encode(event))
    assert msg.body == event
    assert msg.topic == c.Topic("event", "pool-01", etype)
    assert type(msg.body) is model


@pytest.mark.parametrize("topic, model", NON_EVENT_MESSAGES, ids=lambda x: getattr(x, "__class__", type(x)).__name__)
def test_every_other_message_round_trips(topic: Any, model: Any) -> None:
    assert c.decode(topic, c.encode(model)).body == model


def test_cleared_session_is_null() -> None:
    assert c.encode(None) == b"null"
    assert c.decode(c.session_topic("pool-03"), b"null").body is None


def test_every_event_type_has_a_model_and_data_model() -> None:
    assert set(c.EVENT_MODELS) == set(c.EVENT_TYPES) == set(c.EVENT_DATA_MODELS)
    assert set(EVENT_DATA) == set(c.EVENT_TYPES)


# ---------------------------------------------------------------------------- topics


def test_topic_builders_follow_the_architecture_table() -> None:
    assert c.status_topic("pool-01") == "lavos/v1/table/pool-01/status"
    assert c.event_topic("foos-01", "goal") == "lavos/v1/table/foos-01/event/goal"
    assert c.light_state_topic("pool-02") == "lavos/v1/table/pool-02/light/state"
    assert c.light_set_topic("pool-02") == "lavos/v1/table/pool-02/light/set"
    assert c.telemetry_topic("darts-01") == "lavos/v1/table/darts-01/telemetry"
    assert c.session_topic("carom-01") == "lavos/v1/table/carom-01/session"
    assert c.HUB_STATUS_TOPIC == "lavos/v1/hub/status"


@pytest.mark.parametrize(
    "topic, parsed",
    [
        (c.status_topic("pool-01"), c.Topic("status", "pool-01")),
        (c.event_topic("foos-02", "card"), c.Topic("event", "foos-02", "card")),
        (c.light_state_topic("pool-10"), c.Topic("light_state", "pool-10")),
        (c.light_set_topic("pool-10"), c.Topic("light_set", "pool-10")),
        (c.telemetry_topic("darts-01"), c.Topic("telemetry", "darts-01")),
        (c.session_topic("carom-01"), c.Topic("session", "carom-01")),
        (c.HUB_STATUS_TOPIC, c.Topic("hub_status")),
    ],
)
def test_parse_topic(topic: Any, parsed: Any) -> None:
    assert c.parse_topic(topic) == parsed


@pytest.mark.parametrize(
    "topic, why",
    [
        ("lavos/v2/table/pool-01/status", "not under"),
        ("other/pool-01/status", "not under"),
        ("lavos/v1/table/pool-01/event/shot", "unknown event type 'shot'"),
        ("lavos/v1/table/pool-01/event", "not part of the v1 contract"),
        ("lavos/v1/table/pool-01/light", "not part of the v1 contract"),
        ("lavos/v1/table/pool-01/status/extra", "not part of the v1 contract"),
        ("lavos/v1/table/+/status", "'\\+' is not a valid table id"),
        ("lavos/v1/table/#", "'#' is not a valid table id"),
        ("lavos/v1/table/Pool-01/status", "not a valid table id"),
        ("lavos/v1/table//status", "'' is not a valid table id"),
        ("lavos/v1/table/pool 01/status", "not a valid table id"),
        ("lavos/v1/table/pool-01\n/status", "not a valid table id"),
        ("lavos/v1/table/" + "a" * 33 + "/status", "not a valid table id"),
    ],
)
def test_bad_topics_are_refused(topic: Any, why: Any) -> None:
    with pytest.raises(c.ContractError, match=why):
        c.parse_topic(topic)


def test_node_output_filters_cover_node_topics_only() -> None:
    assert c.NODE_OUTPUT_FILTERS == (
        "lavos/v1/table/+/status",
        "lavos/v1/table/+/event/+",
        "lavos/v1/table/+/light/state",
        "lavos/v1/table/+/telemetry",
    )


# ---------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "payload, why",
    [
        (b"{not json", "payload is not JSON: .* line 1 column 2"),
        (b"", "payload is not JSON"),
        (b'{"v":1,', "payload is not JSON"),
        (b"\xff\xfe{}", "payload is not UTF-8"),
        ("\ud800", "payload is not UTF-8"),  # a str that cannot be UTF-8 at all
        (b"[]", "event must be a JSON object, got list"),
        (b"42", "event must be a JSON object, got int"),
        (b"null", "event must be a JSON object, got NoneType"),
        (b"[" * 3000 + b"]" * 3000, "over the 4096-byte limit"),
        (b"[" * 2000 + b"]" * 2000, "nested too deeply"),
    ],
)
def test_unreadable_payloads_are_refused(payload: Any, why: Any) -> None:
    refused(POCKET, payload, why)


def test_payload_over_the_limit_is_refused_before_parsing() -> None:
    big = event_dict(data={"pocket": 1, "pulse_ms": 1.0}, boot="b" * 10)
    text = json.dumps(big)
    padded = text[:-1] + " " * (c.MAX_PAYLOAD_BYTES - len(text)) + "}"
    assert len(padded) == c.MAX_PAYLOAD_BYTES
    assert send(POCKET, json.loads(padded)).body.seq == 41  # exactly the limit is fine
    refused(POCKET, padded[:-1] + " }", f"{c.MAX_PAYLOAD_BYTES + 1} bytes, over the {c.MAX_PAYLOAD_BYTES}-byte limit")


@pytest.mark.parametrize(
    "changes, why",
    [
        ({"v": 2}, "unknown contract version v=2"),
        ({"v": "1"}, "unknown contract version v='1'"),
        ({"v": True}, "unknown contract version v=True"),
        ({"v": 1.0}, "unknown contract version v=1.0"),
        ({"type": "shot"}, "unknown event type 'shot'"),
        ({"type": ["pocket"]}, "unknown event type \\['pocket'\\]"),
        ({"type": None}, "unknown event type None"),
        ({"seq": "41"}, "seq: Input should be a valid integer"),
        ({"seq": True}, "seq: Input should be a valid integer"),
        ({"seq": -1}, "seq: Input should be greater than or equal to 0"),
        ({"seq": 2**63}, "seq"),
        ({"ts_synced": "yes"}, "ts_synced: Input should be a valid boolean"),
        ({"ts": "2026-11-30T17:05:00"}, "ts: Input should have timezone info"),
        ({"ts": "yesterday"}, "ts: Input should be a valid datetime"),
        ({"boot": ""}, "boot: String should have at least 1 character"),
        ({"table": "POOL-01"}, "table: String should match pattern"),
        ({"data": {"pocket": 6, "pulse_ms": 20.0}}, "data.pocket: Input should be less than or equal to 5"),
        ({"data": {"pocket": 1.0, "pulse_ms": 20.0}}, "data.pocket: Input should be a valid integer"),
        ({"data": {"pocket": 1, "pulse_ms": "20"}}, "data.pulse_ms: Input should be a valid number"),
        ({"data": {"pocket": 1}}, "data.pulse_ms: Field required"),
        ({"data": {"pocket": 1, "pulse_ms": 20.0, "ball": 8}}, "data.ball: Extra inputs are not permitted"),
        ({"shooter": "x"}, "shooter: Extra inputs are not permitted"),
        ({"data": None}, "data: Input should be an object"),
    ],
)
def test_bad_pocket_events_are_refused_saying_why(changes: Any, why: Any) -> None:
    refused(POCKET, event_dict(**changes), why)


def test_missing_fields_are_named() -> None:
    ev = event_dict()
    del ev["seq"], ev["boot"]
    refused(POCKET, ev, "boot: Field required; pocket.seq: Field required|seq: Field required")


@pytest.mark.parametrize(
    "etype, data, why",
    [
        ("goal", {"side": "left"}, "data.side: Input should be 'home' or 'away'"),
        ("card", {"uid": "04A3B2C1"}, "data.uid: String should match pattern"),
        ("card", {"uid": "0012345678 "}, "data.uid"),
        ("card", {"uid": 12345678}, "data.uid: Input should be a valid string"),
        ("button", {"button": "power"}, "data.button: Input should be 'light'"),
        ("activity", {"source": ""}, "data.source"),
        ("sensor_fault", {"sensor": "pocket-1", "kind": "smoke"}, "data.kind"),
    ],
)
def test_bad_event_data_is_refused(etype: Any, data: Any, why: Any) -> None:
    refused(c.event_topic("pool-01", etype), event_dict(etype, data=data), why)


def test_topic_table_must_match_payload_table() -> None:
    refused(c.event_topic("pool-02", "pocket"), event_dict(), "payload table 'pool-01' does not match topic table 'pool-02'")
    summary = NON_EVENT_MESSAGES[5][1]
    refused(c.session_topic("pool-01"), c.encode(summary), "payload table 'pool-10' does not match topic table 'pool-01'")


def test_topic_event_type_must_match_payload_type() -> None:
    refused(c.event_topic("pool-01", "goal"), event_dict(), "payload type 'pocket' does not match topic event type 'goal'")


@pytest.mark.parametrize(
    "payload, why",
    [
        ({"on": True}, "cmd_id: Field required"),
        ({"on": "yes", "cmd_id": "c"}, "on: Input should be a valid boolean"),
        ({"on": 1, "cmd_id": "c"}, "on: Input should be a valid boolean"),
        ({"on": True, "cmd_id": "c", "blink_s": 0}, "blink_s: Input should be greater than or equal to 1"),
        ({"on": True, "cmd_id": "c", "blink_s": True}, "blink_s"),
        ({"on": True, "cmd_id": "c", "retain": True}, "retain: Extra inputs are not permitted"),
        ([True], "light_set payload must be a JSON object, got list"),
        ({"on": True, "cmd_id": ""}, "cmd_id: String should have at least 1 character"),
    ],
)
def test_bad_light_commands_are_refused(payload: Any, why: Any) -> None:
    refused(LIGHT_SET, payload, why)


@pytest.mark.parametrize(
    "topic, payload, why",
    [
        (STATUS, {"state": "asleep"}, "invalid status payload: state"),
        (STATUS, "[]", "status payload must be a JSON object"),
        (c.light_state_topic("pool-01"), {"on": True, "cause": "magic"}, "cause"),
        (c.light_state_topic("pool-01"), {"on": True, "cause": "button", "extra": 1}, "extra: Extra inputs"),
        (c.telemetry_topic("pool-01"), {"uptime_s": -1, "outbox": 0}, "uptime_s"),
        (c.telemetry_topic("pool-01"), {"uptime_s": 1, "outbox": "3"}, "outbox: Input should be a valid integer"),
        (c.session_topic("pool-01"), [], "invalid session payload"),
        (
            c.session_topic("pool-01"),
            {
                "session_id": "s",
                "table": "pool-01",
                "state": "running",
                "started_at": "2026-11-30T17:00:00Z",
                "tariff": "standard",
                "amount_cents": 12.5,
            },
            "amount_cents",
        ),
        (c.HUB_STATUS_TOPIC, {"state": 1}, "state"),
    ],
)
def test_bad_other_payloads_are_refused(topic: Any, payload: Any, why: Any) -> None:
    refused(topic, payload, why)


def test_status_and_telemetry_may_grow_informational_fields() -> None:
    assert send(STATUS, {"state": "online", "kernel": "6.6"}).body.state == "online"


def test_nesting_that_json_accepts_is_still_refused_not_a_crash() -> None:
    refused(STATUS, '{"state": ' + "[" * 900 + "]" * 900 + "}", "recursion limit exceeded")


# ---------------------------------------------------------------------------- fuzzing


valid_topics = st.sampled_from(
    [c.event_topic("pool-01", t) for t in c.EVENT_TYPES] + [topic for topic, _ in NON_EVENT_MESSAGES] + [c.HUB_STATUS_TOPIC]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
near_events = st.builds(
    lambda etype, key, value: json.dumps({**event_dict(etype), key: value}),
    st.sampled_from(c.EVENT_TYPES),
    st.sampled_from(["v", "type", "table", "seq", "ts", "data", "boot", "ts_synced", "other"]),
    json_values,
)
payloads = st.binary(max_size=300) | st.text(max_size=300) | json_values.map(json.dumps) | near_events


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(valid_topics, st.text(max_size=60)), payloads)
def test_decode_only_ever_raises_contract_error(topic: Any, payload: Any) -> None:
    try:
        msg = c.decode(topic, payload)
    except c.ContractError:
        return
    # whatever passes is a real message that encodes and decodes to itself
    assert c.decode(topic, c.encode(msg.body)) == msg


# ---------------------------------------------------------------------------- lavos schema


def test_lavos_schema_prints_json_schema_of_all_seven_topics() -> None:
    lavos = Path(sys.executable).with_name("lavos")
    out = subprocess.run([str(lavos), "schema"], capture_output=True, text=True, timeout=120, check=True).stdout
    schemas = json.loads(out)
    assert set(schemas) == {
        "lavos/v1/table/<table>/status",
        "lavos/v1/table/<table>/event/<type>",
        "lavos/v1/table/<table>/light/state",
        "lavos/v1/table/<table>/light/set",
        "lavos/v1/table/<table>/telemetry",
        "lavos/v1/table/<table>/session",
        "lavos/v1/hub/status",
    }
    event_schema = json.dumps(schemas["lavos/v1/table/<table>/event/<type>"])
    for model in c.EVENT_MODELS.values():
        assert model.__name__ in event_schema
    assert schemas["lavos/v1/table/<table>/light/set"]["additionalProperties"] is False
