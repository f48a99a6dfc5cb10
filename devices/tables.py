"""One table as the venue file describes it: its id, kind, room and the pins its node wires.

This is the part of the venue file a table node's configuration is made from
(devices.nodeconfig); the rest (rooms, hours, prices) is the hub's, in broker.domain.venue.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from devices.contract import TableId
from devices.kinds import Kind, PinMap, default_pins
from devices.service_accounts import table_id_problem
from devices.tomlfile import Located

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=32)]


class TableSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: TableId
    kind: Kind
    name: str
    # The name on an English page where the name is a word ("Karambol" → "Carom"); absent = `name`.
    name_en: str | None = None
    room: Slug
    size_ft: int | None = Field(default=None, ge=6, le=12)
    club_card: bool = False
    pins: PinMap | None = None

    @field_validator("id")
    @classmethod
    def _not_a_service_account(cls, v: str) -> str:
        if problem := table_id_problem(v):
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _pins_fit_kind(self) -> TableSpec:
        if self.pins is None:
            self.pins = default_pins(self.kind)
        pockets = len(self.pins.pockets)
        if self.kind is Kind.POOL and pockets not in (0, 6):
            raise Located(("pins", "pockets"), f"a pool table has 6 pockets, pins.pockets lists {pockets}")
        if self.kind is not Kind.POOL and pockets:
            raise Located(("pins", "pockets"), f"a {self.kind.value} table has no pockets; remove pins.pockets")
        if self.kind is Kind.FOOSBALL and (self.pins.goal_home is None or self.pins.goal_away is None):
            raise Located(("pins",), "a foosball table needs pins.goal_home and pins.goal_away")
        if self.kind is not Kind.FOOSBALL and (self.pins.goal_home or self.pins.goal_away):
            raise Located(("pins",), f"a {self.kind.value} table has no goals; remove pins.goal_home/goal_away")
        return self

    @property
    def pin_map(self) -> PinMap:
        assert self.pins is not None
        return self.pins
