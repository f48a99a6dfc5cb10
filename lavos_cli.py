"""The `lavos` command: the composition root that gathers each layer's subcommands.

It is the one module allowed to import every layer (like the tests): each package keeps its
commands in its own ``cli.py`` with a ``register(app)`` function, so the import arrows between
devices/, edge/, broker/ and dashboard/ stay one-way. Those modules import their layer's code
only when a command runs, so `lavos --help` loads typer and little else.

A table's Pi installs only the `edge` extra: a layer that cannot run without the hub's packages
(HUB_PACKAGES) is left out there, and a hub command that needs one says what to install.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import typer

app = typer.Typer(
    name="lavos",
    help=("Lavos table control: table lights, pocket sensors, billing and a staff dashboard for a billiard hall.\n\nExample: lavos demo"),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# The import names of pyproject's `hub` extra (tests/test_packaging.py keeps the two in step).
HUB_PACKAGES = (
    "sqlalchemy",
    "alembic",
    "influxdb_client",
    "fastapi",
    "uvicorn",
    "jinja2",
    "argon2",
    "babel",
    "psycopg",
    "multipart",
    "itsdangerous",
    "openpyxl",
    "escpos",
    "httpx",
    "apprise",
    "icalendar",
)
# Each layer's commands, and the hub packages without which none of them can run. broker.ops.cli
# needs none to register: `lavos node-config` runs on a Pi (deploy/pi/install.sh).
LAYERS: dict[str, tuple[str, ...]] = {
    "devices.cli": (),
    "edge.cli": (),
    "broker.ops.cli": (),
    "dashboard.cli": ("fastapi", "uvicorn", "sqlalchemy"),
    "sim.cli": ("fastapi", "uvicorn", "sqlalchemy"),
}
INSTALL_HUB = "pip install 'lavos-table-control[hub]'"


def installed(package: str) -> bool:
    """Whether a top-level package can be imported here, without importing it."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def register_layers(target: typer.Typer) -> list[str]:
    """Add each layer's commands to `target`; the layers left out (not installed here)."""
    left_out = []
    for module, needs in LAYERS.items():
        if not all(installed(p) for p in needs):
            left_out.append(module)
            continue
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # the module is there and failed inside: a real error
                raise
            left_out.append(module)  # this layer is not part of the installed package
            continue
        mod.register(target)
    return left_out


register_layers(app)


def main() -> None:
    """The `lavos` entry point: app(), with a hub package missing said as what to install."""
    try:
        app()
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in HUB_PACKAGES:
            raise
        print(
            f"error: this command runs on the central box and needs {exc.name}, which is not installed here: {INSTALL_HUB}", file=sys.stderr
        )
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
