"""The agent that runs on each table's Raspberry Pi: ``EdgeNode(config).start()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from edge.agent import EdgeNode

__all__ = ["EdgeNode"]


def __getattr__(name: str) -> Any:
    # Imported when first asked for: `lavos --help` and `lavos edge --help` load edge.cli, which
    # needs none of the agent (paho, gpiozero, SQLite).
    if name == "EdgeNode":
        from edge.agent import EdgeNode

        return EdgeNode
    raise AttributeError(f"module 'edge' has no attribute {name!r}")
