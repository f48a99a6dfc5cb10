"""Issue 18, item 11: a Pi installs `.[edge]` and gets the node agent without the hub's packages.

The edge-only install is run as a real `lavos` process whose imports of every package of the
`hub` extra fail (a meta-path finder, as if they were not installed): the agent imports, `lavos
--help` and the node's commands work, the hub's layers are left out, and a hub command says what
to install instead of a traceback.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import lavos_cli

if TYPE_CHECKING:
    from types import ModuleType


REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# Distribution name (as pyproject spells it) -> the package it is imported as.
IMPORT_NAMES = {
    "sqlalchemy": "sqlalchemy",
    "alembic": "alembic",
    "influxdb-client": "influxdb_client",
    "fastapi": "fastapi",
    "uvicorn": "uvicorn",
    "jinja2": "jinja2",
    "argon2-cffi": "argon2",
    "babel": "babel",
    "psycopg": "psycopg",
    "python-multipart": "multipart",
    "itsdangerous": "itsdangerous",
    "openpyxl": "openpyxl",
    "python-escpos": "escpos",
    "httpx": "httpx",
    "apprise": "apprise",
    "icalendar": "icalendar",
}
# As if the hub extra were not installed: an import of any of its packages fails.
EDGE_ONLY = """
import importlib.abc, runpy, sys
BLOCKED = set(sys.argv.pop(1).split(","))
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, NotInstalled())
what = sys.argv.pop(1)
if what == "-c":
    exec(sys.argv.pop(1))
else:
    sys.argv[0] = "lavos"
    import lavos_cli
    lavos_cli.main()
"""


def dist(requirement: str) -> str:
    name = requirement.split(";")[0]
    for stop in "<>=[ ":
        name = name.split(stop)[0]
    return name.strip().lower()


def edge_only(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", EDGE_ONLY, ",".join(lavos_cli.HUB_PACKAGES), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_hub_extra_is_what_the_cli_calls_the_hub_packages() -> None:
    hub = {dist(r) for r in PROJECT["optional-dependencies"]["hub"]}
    assert {IMPORT_NAMES[d] for d in hub} == set(lavos_cli.HUB_PACKAGES)


def test_a_pi_installs_neither_fastapi_sqlalchemy_nor_psycopg() -> None:
    extras = PROJECT["optional-dependencies"]
    edge = {dist(r) for r in PROJECT["dependencies"] + extras["edge"] + extras["pi"]}
    assert {"paho-mqtt", "gpiozero", "pydantic", "typer", "rich", "sdnotify", "evdev", "tomli-w"} <= edge
    assert not edge & {dist(r) for r in extras["hub"]}, "a hub package in what a Pi installs"
    assert "lavos-table-control" in {dist(r) for r in extras["dev"]} and "[edge,hub]" in " ".join(extras["dev"])


def test_the_agent_imports_without_the_hub_packages() -> None:
    done = edge_only("-c", "import edge, edge.agent_main; print(edge.EdgeNode.__name__); import sqlalchemy")
    assert done.stdout.strip() == "EdgeNode", done.stderr
    assert "No module named 'sqlalchemy'" in done.stderr  # the blocker does block


@pytest.mark.parametrize(
    "args, shows",
    [
        (["--help"], ["edge", "node-config", "schema"]),
        (["edge", "--help"], ["test-sensors", "--config"]),
        (["node-config", "pool-01", "--mqtt-host", "lavos.local"], ['table = "pool-01"', 'host = "lavos.local"']),
        (["schema"], ["lavos/v1/table/<table>/status"]),
    ],
    ids=["help", "edge-help", "node-config", "schema"],
)
def test_the_nodes_commands_run_on_an_edge_only_install(args: Any, shows: Any) -> None:
    done = edge_only("lavos", *args)
    assert done.returncode == 0, done.stderr
    for text in shows:
        assert text in done.stdout, done.stdout


def test_the_hub_layers_are_left_out_and_a_hub_command_says_what_to_install() -> None:
    listed = set(re.findall(r"^│ (\S+) ", edge_only("lavos", "--help").stdout.split("Commands", 1)[1], re.M))
    assert {"edge", "node-config", "members"} <= listed and not listed & {"server", "demo"}, listed
    done = edge_only("lavos", "db", "upgrade", "--db", "sqlite:////nonexistent/lavos.db")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert lavos_cli.INSTALL_HUB in done.stderr


def test_a_real_import_error_in_a_layer_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def broken(name: Any, *a: Any) -> ModuleType:
        if name == "dashboard.cli":
            raise ModuleNotFoundError("No module named 'dashboard.clii'", name="dashboard.clii")
        return real(name, *a)

    monkeypatch.setattr(importlib, "import_module", broken)
    import typer

    with pytest.raises(ModuleNotFoundError, match=r"dashboard\.clii"):
        lavos_cli.register_layers(typer.Typer())
