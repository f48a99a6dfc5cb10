"""A table node's configuration (node.toml), derived from the venue file for one table.

It lives in devices/ because both the Pi agent (edge/) reads it and the central host's tooling
(``lavos broker add-node``) writes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from devices.contract import TableId
from devices.kinds import Kind, PinMap, default_pins
from devices.tables import TableSpec
from devices.tomlfile import load_toml


class TableCatalogue(Protocol):
    """What a node config is made from: the hub's venue (broker.domain.venue.Venue) is one.
    A protocol, so devices/ (and the Pi) never import the hub's venue model."""

    def table(self, table_id: str) -> TableSpec: ...


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MqttSettings(_Model):
    host: str = "localhost"
    port: int = Field(default=1883, ge=1, le=65535)
    # Username is always the table id; the password comes from a file only root can read.
    password_file: Path | None = None
    tls: bool = False
    ca_file: Path | None = None
    protocol: Literal["3.1.1", "5"] = "3.1.1"
    keepalive_s: int = Field(default=15, ge=5, le=600)
    reconnect_min_s: float = Field(default=0.5, gt=0, le=60)
    reconnect_max_s: float = Field(default=30.0, gt=0, le=600)


class FilterSettings(_Model):
    """Pulse filter: see devices/pulses.py for what each number does."""

    min_pulse_ms: float = Field(default=5.0, ge=0, le=1000)
    merge_gap_ms: float = Field(default=5.0, ge=0, le=1000)
    stuck_after_s: float = Field(default=10.0, gt=0, le=3600)
    chatter_window_s: float = Field(default=1.0, gt=0, le=60)
    chatter_max_edges: int = Field(default=200, ge=10, le=100_000)


class OutboxSettings(_Model):
    path: Path = Path("/var/lib/lavos/outbox.db")
    max_bytes: int = Field(default=64 * 1024 * 1024, ge=64 * 1024)


class CardReaderSettings(_Model):
    kind: Literal["none", "evdev", "simulated", "mfrc522"] = "none"
    # evdev: the reader's /dev/input/by-id/... path
    device: str | None = None


class LightSettings(_Model):
    # What the relay does when the agent starts, before the hub says otherwise.
    boot_state: Literal["off", "on"] = "off"


class NodeConfig(_Model):
    table: TableId
    kind: Kind
    pins: PinMap
    mqtt: MqttSettings = Field(default_factory=MqttSettings)
    filter: FilterSettings = Field(default_factory=FilterSettings)
    outbox: OutboxSettings = Field(default_factory=OutboxSettings)
    card_reader: CardReaderSettings = Field(default_factory=CardReaderSettings)
    light: LightSettings = Field(default_factory=LightSettings)
    telemetry_interval_s: float = Field(default=30.0, ge=0.1, le=3600)

    @model_validator(mode="after")
    def _reader_has_device(self) -> NodeConfig:
        if self.card_reader.kind == "evdev" and not self.card_reader.device:
            raise ValueError('card_reader.kind = "evdev" needs card_reader.device (a /dev/input/by-id/... path)')
        return self


def load_node_config(path: Path | str) -> NodeConfig:
    return load_toml(path, NodeConfig)


def node_config_for(
    venue: TableCatalogue,
    table_id: str,
    *,
    mqtt_host: str = "localhost",
    mqtt_port: int = 1883,
    password_file: Path | None = None,
    tls: bool = False,
    ca_file: Path | None = None,
) -> NodeConfig:
    spec = venue.table(table_id)
    reader = CardReaderSettings(kind="evdev", device="/dev/input/by-id/usb-rfid-kbd") if spec.kind.has_card_reader else CardReaderSettings()
    return NodeConfig(
        table=spec.id,
        kind=spec.kind,
        pins=spec.pins or default_pins(spec.kind),
        mqtt=MqttSettings(host=mqtt_host, port=mqtt_port, password_file=password_file, tls=tls, ca_file=ca_file),
        card_reader=reader,
    )


def dump_node_config(cfg: NodeConfig) -> str:
    import tomli_w

    data = cfg.model_dump(mode="json", exclude_none=True)
    return f"# Lavos table node: {cfg.table} ({cfg.kind.value})\n" + tomli_w.dumps(data)
