"""`lavos demo`: the interim demo (a simulated table node against a private broker)."""

from __future__ import annotations

import signal
import threading

import typer


def demo(seconds: float = typer.Option(None, help="Stop by itself after this many seconds (default: Ctrl-C)")) -> None:
    """Run a private Mosquitto, a simulated pool-01 node with a player, and print every message.

    Example: lavos demo --seconds 20
    """
    from sim.demo import run_demo

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    run_demo(seconds=seconds, stop=stop)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
