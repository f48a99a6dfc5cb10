"""`lavos schema`: what a device says (`lavos node-config` is the hub's, in broker.ops.cli)."""

from __future__ import annotations

import json

import typer


def schema() -> None:
    """Print the JSON Schema of every MQTT message of the wire contract, keyed by topic.

    Example: lavos schema > contract.json
    """
    from devices.contract import json_schemas

    typer.echo(json.dumps(json_schemas(), indent=2, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
