"""The agent that runs on each table's Raspberry Pi: ``EdgeNode(config).start()``."""

from edge.agent import EdgeNode

__all__ = ["EdgeNode"]
