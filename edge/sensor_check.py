"""`lavos edge test-sensors`: every beam's pulses, live, so an installer can check pockets one by one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.live import Live
from rich.table import Table

from devices.drivers.beam import BeamSensor
from devices.nodeconfig import NodeConfig
from devices.pulses import Fault, Pulse, PulseFilter

if TYPE_CHECKING:
    from gpiozero.pins import Factory  # gpiozero ships no types: Any to mypy


@dataclass
class BeamReport:
    name: str
    pin: int
    pulses: int = 0
    last_ms: float | None = None
    faults: list[str] = field(default_factory=list)


def beam_pins(config: NodeConfig) -> list[tuple[str, int]]:
    pins = config.pins
    named: list[tuple[str, int | None]] = [(f"pocket {i}", p) for i, p in enumerate(pins.pockets)]
    named += [("goal home", pins.goal_home), ("goal away", pins.goal_away), ("activity", pins.activity)]
    return [(name, pin) for name, pin in named if pin is not None]


def render(reports: list[BeamReport], beams: list[BeamSensor]) -> Table:
    table = Table(title="Beams: break each one with a ball (Ctrl-C to stop)")
    for col in ("beam", "BCM pin", "now", "pulses", "last pulse", "faults"):
        table.add_column(col)
    for rep, beam in zip(reports, beams):
        now = "[red]BROKEN[/]" if beam.broken else "[green]clear[/]"
        last = f"{rep.last_ms:.1f} ms" if rep.last_ms is not None else "-"
        table.add_row(rep.name, str(rep.pin), now, str(rep.pulses), last, ", ".join(rep.faults[-3:]) or "-")
    return table


def run_sensor_check(
    config: NodeConfig, *, seconds: float | None = None, pin_factory: Factory | None = None, stop: threading.Event | None = None
) -> list[BeamReport]:
    stop = stop or threading.Event()
    reports = [BeamReport(name, pin) for name, pin in beam_pins(config)]

    def record(rep: BeamReport, item: Pulse | Fault) -> None:
        if isinstance(item, Pulse):
            rep.pulses += 1
            rep.last_ms = item.duration_ms
        else:
            rep.faults.append(item.kind)

    def recorder(rep: BeamReport) -> Callable[[Pulse | Fault], None]:
        return lambda item: record(rep, item)

    beams = [BeamSensor(rep.pin, PulseFilter(**config.filter.model_dump()), recorder(rep), pin_factory=pin_factory) for rep in reports]
    deadline = None if seconds is None else time.monotonic() + seconds
    try:
        with Live(render(reports, beams), refresh_per_second=10) as live:
            while not stop.wait(0.1):
                live.update(render(reports, beams))
                if deadline is not None and time.monotonic() >= deadline:
                    break
    except KeyboardInterrupt:
        pass
    finally:
        for beam in beams:
            beam.close()
    return reports
