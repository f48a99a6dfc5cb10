"""`lavos edge`: run the table node agent; `lavos edge test-sensors`: check the beams."""

from __future__ import annotations

import logging
import signal
import sqlite3
import threading
from pathlib import Path

import typer

from devices.nodeconfig import NodeConfig, load_node_config
from devices.tomlfile import ConfigError

edge_app = typer.Typer(help="The table node agent (runs on each table's Raspberry Pi).", invoke_without_command=True)

CONFIG_OPTION = typer.Option(Path("/etc/lavos/node.toml"), "--config", "-c", help="The node's node.toml (see `lavos node-config`)")


def _load(config: Path) -> NodeConfig:
    try:
        return load_node_config(config)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


@edge_app.callback()
def run(
    ctx: typer.Context,
    config: Path = CONFIG_OPTION,
    log_level: str = typer.Option("INFO", help="DEBUG, INFO, WARNING or ERROR"),
) -> None:
    """Run the agent: switch the light on command, report every pulse, survive the network.

    Example: lavos edge --config /etc/lavos/node.toml
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = config
        return
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cfg = _load(config)
    from edge.agent import EdgeNode

    stop = _stop_on_signals()
    node = EdgeNode(cfg)
    try:
        node.start()
    except (OSError, sqlite3.DatabaseError) as exc:
        typer.echo(f"error: cannot start the node: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        stop.wait()
    finally:
        node.close()


@edge_app.command("test-sensors")
def test_sensors(
    ctx: typer.Context,
    seconds: float = typer.Option(None, help="Stop after this many seconds (default: until Ctrl-C)"),
) -> None:
    """Show each beam's pulses live, without MQTT, so pockets can be checked one by one.

    Example: sudo lavos edge --config /etc/lavos/node.toml test-sensors
    """
    cfg = _load(ctx.obj)
    from edge.sensor_check import run_sensor_check

    reports = run_sensor_check(cfg, seconds=seconds, stop=_stop_on_signals())
    for rep in reports:
        typer.echo(f"{rep.name} (GPIO {rep.pin}): {rep.pulses} pulses" + (f", faults: {', '.join(rep.faults)}" if rep.faults else ""))


def register(app: typer.Typer) -> None:
    app.add_typer(edge_app, name="edge")
