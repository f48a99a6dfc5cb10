"""`lavos edge`: run the table node agent; `lavos edge test-sensors`: check the beams."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # the commands import the agent's modules when they run, not for `lavos --help`
    from devices.nodeconfig import NodeConfig

edge_app = typer.Typer(
    help="The table node agent (runs on each table's Raspberry Pi).\n\nExample: lavos edge --config /etc/lavos/node.toml",
    invoke_without_command=True,
)

CONFIG_OPTION = typer.Option(Path("/etc/lavos/node.toml"), "--config", "-c", help="The node's node.toml (see `lavos node-config`)")


def _load(config: Path) -> NodeConfig:
    from edge.agent_main import EXIT_CONFIG, load_or_explain

    cfg = load_or_explain(config)
    if cfg is None:
        raise typer.Exit(EXIT_CONFIG)
    return cfg


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
    from edge.agent_main import run_agent

    raise typer.Exit(run_agent(config, log_level))


@edge_app.command("test-sensors")
def test_sensors(
    ctx: typer.Context,
    seconds: float = typer.Option(None, help="Stop after this many seconds (default: until Ctrl-C)"),
) -> None:
    """Show each beam's pulses live, without MQTT, so pockets can be checked one by one.

    Example: sudo -u lavos /opt/lavos/.venv/bin/lavos edge --config /etc/lavos/node.toml test-sensors
    """
    cfg = _load(ctx.obj)
    from edge.agent_main import EXIT_PINS, stop_on_signals
    from edge.pins import PinsUnavailable, open_pin_factory
    from edge.sensor_check import run_sensor_check

    try:
        factory = open_pin_factory()
    except PinsUnavailable as exc:
        typer.echo(f"error: cannot drive the GPIO pins: {exc}", err=True)
        raise typer.Exit(EXIT_PINS) from None
    try:
        reports = run_sensor_check(cfg, seconds=seconds, pin_factory=factory, stop=stop_on_signals())
    finally:
        factory.close()
    for rep in reports:
        typer.echo(f"{rep.name} (GPIO {rep.pin}): {rep.pulses} pulses" + (f", faults: {', '.join(rep.faults)}" if rep.faults else ""))


def register(app: typer.Typer) -> None:
    app.add_typer(edge_app, name="edge")
