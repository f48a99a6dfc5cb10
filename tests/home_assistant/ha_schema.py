"""Home Assistant's MQTT discovery schema, per entity type, as pydantic models (extra keys forbidden).

Written from HA's own voluptuous schemas (home-assistant/core, homeassistant/components/mqtt/):
schemas.py (MQTT_AVAILABILITY_SCHEMA, MQTT_ENTITY_DEVICE_INFO_SCHEMA, MQTT_ENTITY_COMMON_SCHEMA),
config.py (MQTT_RO_SCHEMA: state_topic required, value_template, qos, encoding),
binary_sensor.py, sensor.py and event.py (their PLATFORM_SCHEMA / DISCOVERY_SCHEMA keys), and the
device classes of HA's binary_sensor, sensor and event integrations. Only full key names (we send
no abbreviations). A key HA does not know is an error here: HA would ignore it (REMOVE_EXTRA) and
we would believe in a setting that does nothing. Keys that write (command_topic) exist in none of
these read-only schemas, so a payload carrying one fails too.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator


# An MQTT subscribe filter HA accepts (valid_subscribe_topic): non-empty, '#' only last, '+' a whole level.
def _subscribe_topic(topic: str) -> str:
    levels = topic.split("/")
    if (
        not topic
        or "\0" in topic
        or any(("#" in lv and (lv != "#" or i != len(levels) - 1)) or ("+" in lv and lv != "+") for i, lv in enumerate(levels))
    ):
        raise ValueError(f"{topic!r} is not a valid MQTT subscribe topic")
    return topic


SubscribeTopic = Annotated[str, AfterValidator(_subscribe_topic)]
Template = Annotated[str, StringConstraints(min_length=1)]

BINARY_SENSOR_DEVICE_CLASSES = Literal[
    "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door", "garage_door", "gas", "heat", "light",
    "lock", "moisture", "motion", "moving", "occupancy", "opening", "plug", "power", "presence", "problem", "running",
    "safety", "smoke", "sound", "tamper", "update", "vibration", "window",
]  # fmt: skip
EVENT_DEVICE_CLASSES = Literal["button", "doorbell", "motion"]
SENSOR_STATE_CLASSES = Literal["measurement", "measurement_angle", "total", "total_increasing"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class AvailabilityItem(_Strict):
    topic: SubscribeTopic  # Required
    payload_available: str = "online"
    payload_not_available: str = "offline"
    value_template: Template | None = None


class Device(_Strict):
    identifiers: list[str] = []
    connections: list[Annotated[list[str], Field(min_length=2, max_length=2)]] = []
    manufacturer: str | None = None
    model: str | None = None
    model_id: str | None = None
    name: str | None = None
    hw_version: str | None = None
    serial_number: str | None = None
    sw_version: str | None = None
    via_device: str | None = None
    suggested_area: str | None = None
    configuration_url: str | None = None

    @model_validator(mode="after")
    def _identified(self) -> Device:  # validate_device_has_at_least_one_identifier
        if not self.identifiers and not self.connections:
            raise ValueError("Device must have at least one identifying value in 'identifiers' and/or 'connections'")
        return self


class Origin(_Strict):
    name: str
    sw_version: str | None = None
    support_url: str | None = None


class _Common(_Strict):
    """MQTT_RO_SCHEMA + MQTT_ENTITY_COMMON_SCHEMA (availability, device, ids, attributes)."""

    state_topic: SubscribeTopic
    value_template: Template | None = None
    qos: Literal[0, 1, 2] = 0
    encoding: str | None = None
    availability_topic: SubscribeTopic | None = None
    availability_template: Template | None = None
    payload_available: str | None = None
    payload_not_available: str | None = None
    availability_mode: Literal["all", "any", "latest"] = "latest"
    availability: list[AvailabilityItem] | None = None
    device: Device | None = None
    origin: Origin | None = None
    enabled_by_default: bool = True
    entity_category: Literal["config", "diagnostic"] | None = None
    icon: Annotated[str, StringConstraints(pattern=r"^[a-z0-9-]+:[a-z0-9-]+$")] | None = None
    json_attributes_topic: SubscribeTopic | None = None
    json_attributes_template: Template | None = None
    object_id: str | None = None
    default_entity_id: str | None = None
    unique_id: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _one_availability(self) -> _Common:  # vol.Exclusive(availability_topic, availability)
        if self.availability_topic is not None and self.availability is not None:
            raise ValueError("availability_topic and availability are exclusive")
        return self


class BinarySensorConfig(_Common):
    device_class: BINARY_SENSOR_DEVICE_CLASSES | None = None
    expire_after: Annotated[int, Field(gt=0)] | None = None
    force_update: bool = False
    off_delay: Annotated[int, Field(ge=0)] | None = None
    payload_off: str = "OFF"
    payload_on: str = "ON"


class SensorConfig(_Common):
    device_class: str | None = None
    expire_after: Annotated[int, Field(gt=0)] | None = None
    force_update: bool = False
    last_reset_value_template: Template | None = None
    options: list[str] | None = None
    suggested_display_precision: Annotated[int, Field(ge=0)] | None = None
    state_class: SENSOR_STATE_CLASSES | None = None
    unit_of_measurement: str | None = None

    @model_validator(mode="after")
    def _monetary(self) -> SensorConfig:
        # HA's sensor rules: a monetary sensor's unit is an ISO 4217 code, its state class only "total".
        if self.device_class == "monetary":
            if self.unit_of_measurement is None or len(self.unit_of_measurement) != 3 or not self.unit_of_measurement.isupper():
                raise ValueError("a monetary sensor's unit_of_measurement is an ISO 4217 currency code, e.g. EUR")
            if self.state_class not in (None, "total"):
                raise ValueError("a monetary sensor's state_class can only be total")
        return self


class EventConfig(_Common):
    device_class: EVENT_DEVICE_CLASSES | None = None
    event_types: Annotated[list[str], Field(min_length=1)]  # Required


SCHEMA_OF_COMPONENT: dict[str, type[_Common]] = {"binary_sensor": BinarySensorConfig, "sensor": SensorConfig, "event": EventConfig}

# HA's discovery topic: <prefix>/<component>/[<node_id>/]<object_id>/config, ids of [a-zA-Z0-9_-].
DISCOVERY_TOPIC = r"^homeassistant/(binary_sensor|sensor|event)/([a-zA-Z0-9_-]+)/([a-zA-Z0-9_-]+)/config$"
