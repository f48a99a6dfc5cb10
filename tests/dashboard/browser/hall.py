"""What players do at the simulated tables: balls into pockets, goals past the foosball keeper."""

from __future__ import annotations

from typing import Any

from sim.pins import PulseScript, drive_pulses


def drop_balls(nodes: Any, table: str, pocket: int, n: int) -> None:
    node, factory = nodes[table]
    drive_pulses(factory.pin(node.config.pins.pockets[pocket]), n, PulseScript(duration_s=0.02, chatter_edges=1))


def goal(nodes: Any, table: str, side: str = "home") -> None:
    node, factory = nodes[table]
    pin = node.config.pins.goal_home if side == "home" else node.config.pins.goal_away
    drive_pulses(factory.pin(pin), 1, PulseScript(duration_s=0.015, chatter_edges=1))
