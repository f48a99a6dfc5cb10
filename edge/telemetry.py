"""Telemetry: how the node is doing, sent every few seconds at QoS 0 (never through the outbox)."""

from __future__ import annotations

import time
from pathlib import Path

from devices.contract import Telemetry

CPU_TEMP = Path("/sys/class/thermal/thermal_zone0/temp")


def cpu_temp_c(path: Path = CPU_TEMP) -> float | None:
    """The SoC temperature, or None where the kernel does not expose it (containers, most PCs)."""
    try:
        return round(int(path.read_text().strip()) / 1000.0, 1)
    except (OSError, ValueError):
        return None


def sample(*, started: float, outbox: int, reconnects: int, invalid_commands: int, dropped: int, refused: int) -> Telemetry:
    return Telemetry(
        uptime_s=round(time.monotonic() - started, 1),
        cpu_temp_c=cpu_temp_c(),
        outbox=outbox,
        reconnects=reconnects,
        invalid_commands=invalid_commands,
        dropped=dropped,
        refused=refused,
    )
