"""The agent's main (`python -m edge`, `lavos edge`) as a service: load node.toml, start, wait for SIGTERM/SIGINT, close. No CLI framework."""

from __future__ import annotations

import logging
import signal
import sqlite3
import sys
import threading
from pathlib import Path

from devices.nodeconfig import NodeConfig, load_node_config
from devices.tomlfile import ConfigError

EXIT_CONFIG = 2
EXIT_PINS = 3  # the GPIO pins cannot be driven here (edge.pins): the unit does not restart on it either
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def load_or_explain(path: Path) -> NodeConfig | None:
    try:
        return load_node_config(path)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def run_agent(config_path: Path, log_level: str = "INFO") -> int:
    """The process exit code: 0 after a clean stop, 2 when the config or the node's files are
    unusable, 3 when the pins cannot be driven (not a Pi, the user not in `gpio`, no place for lgpio's pipe)."""
    if log_level.upper() not in LOG_LEVELS:  # logging would raise a ValueError with a traceback
        print(f"error: --log-level {log_level!r} is not one of {', '.join(LOG_LEVELS)}", file=sys.stderr)
        return EXIT_CONFIG
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cfg = load_or_explain(config_path)
    if cfg is None:
        return EXIT_CONFIG
    from edge.agent import EdgeNode
    from edge.pins import PinsUnavailable

    stop = stop_on_signals()
    node = EdgeNode(cfg)
    try:
        node.start()
    except PinsUnavailable as exc:
        print(f"error: cannot drive the GPIO pins: {exc}", file=sys.stderr)
        return EXIT_PINS
    except (OSError, sqlite3.DatabaseError) as exc:
        print(f"error: cannot start the node: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        stop.wait()
    finally:
        node.close()
    return 0
