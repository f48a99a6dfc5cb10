"""Device kinds and their default pin maps (BCM numbering).

A pin map says which GPIO each part of a table node is wired to; a venue file may override any
pin per table. The defaults match the wiring guide in deploy/pi/README.md.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field, model_validator

BcmPin = int  # 2..27 on a 40-pin Raspberry Pi header


class Kind(str, Enum):
    POOL = "pool"
    CAROM = "carom"
    FOOSBALL = "foosball"
    DARTS = "darts"

    @property
    def pockets(self) -> int:
        return 6 if self is Kind.POOL else 0

    @property
    def has_goals(self) -> bool:
        return self is Kind.FOOSBALL

    @property
    def has_card_reader(self) -> bool:
        """Only foosball nodes have a club-card reader (members check in there)."""
        return self is Kind.FOOSBALL

    @property
    def billed(self) -> bool:
        """Billiard tables are billed by time; foosball and darts are not."""
        return self in (Kind.POOL, Kind.CAROM)


class PinMap(BaseModel):
    model_config = ConfigDict(extra="forbid")

    light: BcmPin | None = Field(default=17, ge=2, le=27)
    # Most relay boards sold for the Pi switch on a low input.
    light_active_high: bool = False
    button: BcmPin | None = Field(default=27, ge=2, le=27)
    pockets: list[BcmPin] = Field(default_factory=list)
    goal_home: BcmPin | None = Field(default=None, ge=2, le=27)
    goal_away: BcmPin | None = Field(default=None, ge=2, le=27)
    activity: BcmPin | None = Field(default=None, ge=2, le=27)

    @model_validator(mode="after")
    def _no_pin_twice(self) -> PinMap:
        used = [p for p in self.all_pins() if p is not None]
        twice = sorted({p for p in used if used.count(p) > 1})
        if twice:
            raise ValueError(f"GPIO {', '.join(map(str, twice))} assigned to more than one input/output")
        for p in self.pockets:
            if not 2 <= p <= 27:
                raise ValueError(f"pocket pin {p} is not a BCM GPIO between 2 and 27")
        return self

    def all_pins(self) -> list[int | None]:
        return [self.light, self.button, *self.pockets, self.goal_home, self.goal_away, self.activity]

    def beams(self) -> dict[str, int]:
        """The beam inputs this map wires, by the sensor name a node reports them under.

        The names are the wire contract's `sensor` in sensor_fault events: the agent names its
        beams with this, and the hub refuses a fault for a sensor not in it.
        """
        named: dict[str, int | None] = {pocket_sensor(i): pin for i, pin in enumerate(self.pockets)}
        named.update({GOAL_HOME_SENSOR: self.goal_home, GOAL_AWAY_SENSOR: self.goal_away, ACTIVITY_SENSOR: self.activity})
        return {name: pin for name, pin in named.items() if pin is not None}


GOAL_HOME_SENSOR = "goal-home"
GOAL_AWAY_SENSOR = "goal-away"
ACTIVITY_SENSOR = "activity"


def pocket_sensor(index: int) -> str:
    return f"pocket-{index}"


# Six pockets: corner, side, corner on one rail, then the other rail.
DEFAULT_POCKET_PINS = [5, 6, 13, 19, 26, 21]


def default_pins(kind: Kind) -> PinMap:
    if kind is Kind.POOL:
        return PinMap(pockets=list(DEFAULT_POCKET_PINS))
    if kind is Kind.FOOSBALL:
        return PinMap(goal_home=5, goal_away=6)
    if kind is Kind.DARTS:
        # The dart machine's coin/credit lamp, through an optocoupler.
        return PinMap(activity=5)
    # Carom has no pockets: use is seen from the light and the session alone.
    return PinMap()
