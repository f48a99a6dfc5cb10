"""`lavos schema` and `lavos node-config`: what a device says, and how a node is configured."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from devices.tomlfile import ConfigError


def schema() -> None:
    """Print the JSON Schema of every MQTT message of the wire contract, keyed by topic.

    Example: lavos schema > contract.json
    """
    from devices.contract import json_schemas

    typer.echo(json.dumps(json_schemas(), indent=2, ensure_ascii=False))


def node_config(
    table: str = typer.Argument(..., help="Table id, e.g. pool-01"),
    venue: Path = typer.Option(Path("deploy/venues/lavos.toml"), help="Venue file"),
    mqtt_host: str = typer.Option("localhost", help="Host name of the central MQTT broker"),
    mqtt_port: int = typer.Option(1883, help="Broker port"),
    password_file: Path = typer.Option(Path("/etc/lavos/mqtt-password"), help="File holding the node's MQTT password"),
) -> None:
    """Print the node.toml for one table of a venue file.

    Example: lavos node-config pool-01 --mqtt-host hub.local > /etc/lavos/node.toml
    """
    from devices.nodeconfig import dump_node_config, node_config_for
    from broker.domain.venue import load_venue

    try:
        v = load_venue(venue)
        cfg = node_config_for(v, table, mqtt_host=mqtt_host, mqtt_port=mqtt_port, password_file=password_file)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(2) from None
    typer.echo(dump_node_config(cfg), nl=False)


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
    app.command("node-config")(node_config)
