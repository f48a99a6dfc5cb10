"""The `lavos` command: the composition root that gathers each layer's subcommands.

It is the one module allowed to import every layer (like the tests): each package keeps its
commands in its own ``cli.py`` with a ``register(app)`` function, so the import arrows between
devices/, edge/, broker/ and dashboard/ stay one-way.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="lavos",
    help=("Lavos table control: table lights, pocket sensors, billing and a staff dashboard for a billiard hall.\n\nExample: lavos demo"),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for _module in ("devices.cli", "edge.cli", "broker.ops.cli", "dashboard.cli", "sim.cli"):
    try:
        _mod = importlib.import_module(_module)
    except ModuleNotFoundError as exc:
        if exc.name != _module:
            raise
        continue
    _mod.register(app)

if __name__ == "__main__":
    app()
