"""The MQTT wire contract, version 1: topics and message schemas.

Both sides (the table node in ``edge/`` and the hub in ``broker/``) import this one
module, so a message that one side writes is, by construction, one the other side accepts.
See ARCHITECTURE.md, "The wire contract".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Annotated, Any, Literal, cast, get_args, overload

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)
from pydantic.json_schema import JsonSchemaValue

VERSION = 1
ROOT = f"lavos/v{VERSION}"
# Every v1 message is small; anything bigger is a bug or an attack, and is refused before parsing.
MAX_PAYLOAD_BYTES = 4096

# A table id is also an MQTT username and a topic level: no wildcards, no slashes, no spaces.
TABLE_ID_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"
TableId = Annotated[str, StringConstraints(pattern=TABLE_ID_PATTERN, max_length=32)]

EventType = Literal["pocket", "goal", "card", "button", "activity", "sensor_fault"]
EVENT_TYPES: tuple[str, ...] = get_args(EventType)
LightCause = Literal["command", "button", "boot", "failsafe"]


class ContractError(ValueError):
    """A topic or payload that breaks the wire contract; the message says what is wrong."""


class ContractVersionError(ContractError):
    """A message of another contract version (an event's ``v``, a birth's ``contract``): its sender
    and this side must first run versions that speak the same one; never read as this version's."""

    def __init__(self, version: int) -> None:
        self.version = version
        super().__init__(f"unknown contract version v={version!r}; this side speaks v{VERSION}")


# --------------------------------------------------------------------------- topics


def status_topic(table: str) -> str:
    return f"{ROOT}/table/{table}/status"


def event_topic(table: str, event_type: str) -> str:
    return f"{ROOT}/table/{table}/event/{event_type}"


def light_state_topic(table: str) -> str:
    return f"{ROOT}/table/{table}/light/state"


def light_set_topic(table: str) -> str:
    return f"{ROOT}/table/{table}/light/set"


def telemetry_topic(table: str) -> str:
    return f"{ROOT}/table/{table}/telemetry"


def session_topic(table: str) -> str:
    return f"{ROOT}/table/{table}/session"


HUB_STATUS_TOPIC = f"{ROOT}/hub/status"
# What the hub subscribes to: everything the nodes say.
NODE_OUTPUT_FILTERS = (
    f"{ROOT}/table/+/status",
    f"{ROOT}/table/+/event/+",
    f"{ROOT}/table/+/light/state",
    f"{ROOT}/table/+/telemetry",
)

TopicKind = Literal["status", "event", "light_state", "light_set", "telemetry", "session", "hub_status"]


@dataclass(frozen=True)
class Topic:
    kind: TopicKind
    table: str | None = None
    event_type: str | None = None


_TABLE_RE = re.compile(TABLE_ID_PATTERN)
_SUFFIXES: dict[tuple[str, ...], TopicKind] = {
    ("status",): "status",
    ("light", "state"): "light_state",
    ("light", "set"): "light_set",
    ("telemetry",): "telemetry",
    ("session",): "session",
}


# Cached: a hall has a few dozen topics, and the hub parses one per message (a refused topic
# raises, which is never cached; the bound keeps made-up table ids from growing it).
@lru_cache(maxsize=1024)
def parse_topic(topic: str) -> Topic:
    """Split a v1 topic into its kind, table and event type, or raise ContractError."""
    if topic == HUB_STATUS_TOPIC:
        return Topic("hub_status")
    prefix = f"{ROOT}/table/"
    if not topic.startswith(prefix):
        raise ContractError(f"topic {topic!r} is not under {prefix!r}")
    parts = topic[len(prefix) :].split("/")
    table, rest = parts[0], tuple(parts[1:])
    # fullmatch: with match, "$" would also accept a table id ending in a newline
    if not _TABLE_RE.fullmatch(table) or len(table) > 32:
        raise ContractError(f"topic {topic!r}: {table!r} is not a valid table id")
    if len(rest) == 2 and rest[0] == "event":
        if rest[1] not in EVENT_TYPES:
            raise ContractError(f"topic {topic!r}: unknown event type {rest[1]!r} (known: {', '.join(EVENT_TYPES)})")
        return Topic("event", table, rest[1])
    kind = _SUFFIXES.get(rest)
    if kind is None:
        raise ContractError(f"topic {topic!r} is not part of the v{VERSION} contract")
    return Topic(kind, table)


# --------------------------------------------------------------------------- messages


class _Strict(BaseModel):
    # A v1 message with a field we do not know is a sender bug: refuse it loudly.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Open(BaseModel):
    # Status and telemetry may grow informational fields without a new contract version.
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)


class PocketData(_Strict):
    pocket: int = Field(ge=0, le=5)
    pulse_ms: float = Field(ge=0, le=60_000)


class GoalData(_Strict):
    side: Literal["home", "away"]


class CardData(_Strict):
    # 4-, 7- and 10-byte ISO 14443 UIDs, and the decimal-ish strings of keyboard-wedge readers
    # normalised to hex by the reader driver.
    uid: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{4,32}$")]


class ButtonData(_Strict):
    button: Literal["light"]


class ActivityData(_Strict):
    source: Annotated[str, StringConstraints(min_length=1, max_length=64)]


class SensorFaultData(_Strict):
    sensor: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    kind: Literal["stuck", "chatter", "recovered"]


def _exactly_int(value: object) -> int:
    # JSON true and 1.0 equal 1 in Python and pass Literal[1] even in strict mode; the contract's
    # version is the number 1. Checked here too (not only in decode_event) so that a payload the
    # validator accepts needs no second look: see decode_event's fast path.
    if type(value) is not int:
        raise ValueError(f"the contract version must be the integer {VERSION}, got {value!r}")
    return value


class _EventBase(_Strict):
    v: Annotated[Literal[1], BeforeValidator(_exactly_int)]
    table: TableId
    boot: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    seq: int = Field(ge=0, le=2**63 - 1)
    ts: AwareDatetime
    ts_synced: bool


class PocketEvent(_EventBase):
    type: Literal["pocket"]
    data: PocketData


class GoalEvent(_EventBase):
    type: Literal["goal"]
    data: GoalData


class CardEvent(_EventBase):
    type: Literal["card"]
    data: CardData


class ButtonEvent(_EventBase):
    type: Literal["button"]
    data: ButtonData


class ActivityEvent(_EventBase):
    type: Literal["activity"]
    data: ActivityData


class SensorFaultEvent(_EventBase):
    type: Literal["sensor_fault"]
    data: SensorFaultData


AnyEvent = PocketEvent | GoalEvent | CardEvent | ButtonEvent | ActivityEvent | SensorFaultEvent
Event = Annotated[AnyEvent, Field(discriminator="type")]
EVENT_MODELS: dict[str, type[_EventBase]] = {
    "pocket": PocketEvent,
    "goal": GoalEvent,
    "card": CardEvent,
    "button": ButtonEvent,
    "activity": ActivityEvent,
    "sensor_fault": SensorFaultEvent,
}
EVENT_DATA_MODELS: dict[str, type[_Strict]] = {
    name: cast(type[_Strict], model.model_fields["data"].annotation)  # every event's data is a _Strict model
    for name, model in EVENT_MODELS.items()
}


class Status(_Open):
    state: Literal["online", "offline"]
    boot: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    version: str | None = None  # the node's software (devices.version), shown beside the hub's
    ts: AwareDatetime | None = None
    # The wire contract the node speaks (absent: 1, the nodes before it was sent). A birth of
    # another is refused whole (ContractVersionError), however the rest of it reads.
    contract: int | None = None


class LightState(_Strict):
    on: bool
    blink: bool = False
    cause: LightCause
    cmd_id: Annotated[str, StringConstraints(max_length=64)] | None = None


class LightSet(_Strict):
    on: bool
    # Blink for this many seconds, then settle on `on`.
    blink_s: int | None = Field(default=None, ge=1, le=3600)
    cmd_id: Annotated[str, StringConstraints(min_length=1, max_length=64)]


# Counters fit a 32-bit SQL integer: a node that reports more is broken, not busy.
Counter = Annotated[int, Field(ge=0, le=2**31 - 1)]


class Telemetry(_Open):
    uptime_s: float = Field(ge=0, le=10 * 365 * 86400, allow_inf_nan=False)
    cpu_temp_c: float | None = Field(default=None, ge=-60, le=200, allow_inf_nan=False)
    outbox: Counter
    reconnects: Counter = 0
    invalid_commands: Counter = 0
    dropped: Counter = 0
    refused: Counter = 0  # events the outbox could not keep (edge/outbox.py); sent since the first agent


class SessionSummary(_Open):
    session_id: str
    table: TableId
    state: Literal["running", "paused"]
    started_at: AwareDatetime
    tariff: str
    member: str | None = None
    prepaid_until: AwareDatetime | None = None
    amount_cents: int = Field(ge=0)


class HubStatus(_Open):
    state: Literal["online", "offline"]
    version: str | None = None
    ts: AwareDatetime | None = None
    contract: int | None = None


@cache
def _event_adapter() -> TypeAdapter[AnyEvent]:
    adapter: TypeAdapter[AnyEvent] = TypeAdapter(Event)
    return adapter


@cache
def _session_adapter() -> TypeAdapter[SessionSummary | None]:
    adapter: TypeAdapter[SessionSummary | None] = TypeAdapter(SessionSummary | None)
    return adapter


MODEL_FOR_KIND: dict[str, type[_Strict | _Open]] = {
    "status": Status,
    "light_state": LightState,
    "light_set": LightSet,
    "telemetry": Telemetry,
    "hub_status": HubStatus,
}


# --------------------------------------------------------------------------- decoding


def _explain(err: ValidationError) -> str:
    parts = []
    for e in err.errors(include_url=False):
        where = ".".join(str(p) for p in e["loc"] if not str(p).endswith("Event")) or "payload"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


def _payload_text(payload: bytes | str) -> str:
    """The payload as text, if it is within the size limit and UTF-8."""
    if type(payload) is bytes:  # what paho hands over: no copy
        raw = payload
    else:
        try:
            raw = payload.encode() if isinstance(payload, str) else bytes(payload)
        except UnicodeEncodeError as exc:  # a str holding lone surrogates
            raise ContractError(f"payload is not UTF-8: {exc.reason} at character {exc.start}") from None
    if len(raw) > MAX_PAYLOAD_BYTES:
        raise ContractError(f"payload is {len(raw)} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError(f"payload is not UTF-8: {exc.reason} at byte {exc.start}") from None


def _load_json(payload: bytes | str) -> tuple[object, str]:
    """The parsed payload and its text; the text is validated again by pydantic in strict mode."""
    text = _payload_text(payload)
    try:
        return json.loads(text), text
    except json.JSONDecodeError as exc:
        raise ContractError(f"payload is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ContractError("payload is not JSON: nested too deeply") from None


def decode_event(payload: bytes | str, topic: Topic | None = None) -> AnyEvent:
    # Fast path: one pass of pydantic's own JSON parser. Everything the checks below refuse, the
    # validator refuses too (it parses JSON at least as strictly as json.loads, keeps the last of
    # duplicate keys as json.loads does, and _exactly_int refuses a version of true or 1.0), so
    # an event it accepts is one they would pass; anything it refuses takes the slow path, which
    # says what is wrong in the words it always has. The hub decodes every message: this halves
    # the cost of a valid one (json.loads was as dear as the validation itself).
    text = _payload_text(payload)
    try:
        event = _event_adapter().validate_json(text, strict=True)
    except ValidationError:
        event = None
    if event is None:
        event = _decode_event_explained(text)
    if topic is not None:
        if event.table != topic.table:
            raise ContractError(f"payload table {event.table!r} does not match topic table {topic.table!r}")
        if event.type != topic.event_type:
            raise ContractError(f"payload type {event.type!r} does not match topic event type {topic.event_type!r}")
    return event


def _decode_event_explained(text: str) -> AnyEvent:
    """Validate an event, raising ContractError with the first thing wrong with it."""
    obj, text = _load_json(text)
    if not isinstance(obj, dict):
        raise ContractError(f"event must be a JSON object, got {type(obj).__name__}")
    # type() and not ==: true == 1 in Python, and pydantic's Literal[1] lets true through too
    if "v" in obj and type(obj["v"]) is int and obj["v"] != VERSION:
        raise ContractVersionError(obj["v"])
    if "v" in obj and type(obj["v"]) is not int:
        raise ContractError(f"unknown contract version v={obj['v']!r}; this side speaks v{VERSION}")
    etype = obj.get("type")
    if not isinstance(etype, str) or etype not in EVENT_MODELS:  # a list here is unhashable
        raise ContractError(f"unknown event type {etype!r} (known: {', '.join(EVENT_TYPES)})")
    try:
        # strict: "5" is not a seq and "yes" is not a bool; JSON strings still become datetimes
        event = _event_adapter().validate_json(text, strict=True)
    except ValidationError as exc:
        raise ContractError(f"invalid {etype} event: {_explain(exc)}") from None
    return event


@overload
def decode_payload(kind: Literal["event"], payload: bytes | str) -> AnyEvent: ...
@overload
def decode_payload(kind: Literal["status"], payload: bytes | str) -> Status: ...
@overload
def decode_payload(kind: Literal["light_state"], payload: bytes | str) -> LightState: ...
@overload
def decode_payload(kind: Literal["light_set"], payload: bytes | str) -> LightSet: ...
@overload
def decode_payload(kind: Literal["telemetry"], payload: bytes | str) -> Telemetry: ...
@overload
def decode_payload(kind: Literal["session"], payload: bytes | str) -> SessionSummary | None: ...
@overload
def decode_payload(kind: Literal["hub_status"], payload: bytes | str) -> HubStatus: ...
@overload
def decode_payload(kind: str, payload: bytes | str) -> BaseModel | None: ...
def decode_payload(kind: str, payload: bytes | str) -> BaseModel | None:
    """Validate a non-event payload of a topic kind; returns the model (or None for a cleared session)."""
    if kind == "event":
        return decode_event(payload)
    obj, text = _load_json(payload)
    try:
        if kind == "session":
            return _session_adapter().validate_json(text, strict=True)
        model = MODEL_FOR_KIND[kind]
        if not isinstance(obj, dict):
            raise ContractError(f"{kind} payload must be a JSON object, got {type(obj).__name__}")
        if kind == "status" and type(obj.get("contract")) is int and obj["contract"] != VERSION:
            raise ContractVersionError(obj["contract"])  # before the rest: another version's birth is not read as this one's
        return model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        raise ContractError(f"invalid {kind} payload: {_explain(exc)}") from None


@dataclass(frozen=True)
class Message:
    topic: Topic
    # The validated model, which one by topic.kind (decode_payload's overloads); None for a cleared
    # session. Any: the hub reads it by topic kind without narrowing (broker/floor/ingest_rules.py).
    body: Any


def decode(topic: str, payload: bytes | str) -> Message:
    """Validate one MQTT message against the contract; raise ContractError saying what is wrong."""
    t = parse_topic(topic)
    if t.kind == "event":
        return Message(t, decode_event(payload, t))
    if t.kind == "session":
        summary = decode_payload("session", payload)
        if summary is not None and summary.table != t.table:
            raise ContractError(f"payload table {summary.table!r} does not match topic table {t.table!r}")
        return Message(t, summary)
    return Message(t, decode_payload(t.kind, payload))


def encode(message: BaseModel | None) -> bytes:
    """Compact UTF-8 JSON of a contract model (``None`` encodes a cleared session)."""
    if message is None:
        return b"null"
    return message.model_dump_json(exclude_none=False).encode("utf-8")


def build_validators() -> None:
    """Build every message's validator now rather than on first use.

    Models build lazily so a Pi node only pays memory for what it sends; the hub
    decodes everything, and calls this at start so the first message is not the slow one.
    """
    for model in (*EVENT_MODELS.values(), *MODEL_FOR_KIND.values(), SessionSummary, *EVENT_DATA_MODELS.values()):
        model.model_rebuild(force=True)
    _event_adapter()
    _session_adapter()


def utcnow() -> datetime:
    return datetime.now(UTC)


def json_schemas() -> dict[str, JsonSchemaValue]:
    """The JSON Schema of every message, keyed by the topic it travels on."""
    return {
        f"{ROOT}/table/<table>/status": Status.model_json_schema(),
        f"{ROOT}/table/<table>/event/<type>": _event_adapter().json_schema(),
        f"{ROOT}/table/<table>/light/state": LightState.model_json_schema(),
        f"{ROOT}/table/<table>/light/set": LightSet.model_json_schema(),
        f"{ROOT}/table/<table>/telemetry": Telemetry.model_json_schema(),
        f"{ROOT}/table/<table>/session": _session_adapter().json_schema(),
        HUB_STATUS_TOPIC: HubStatus.model_json_schema(),
    }
