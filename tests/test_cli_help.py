"""Every `lavos` command says what it does and gives an example (issue 5, documentation)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

from lavos_cli import app
from tests.support.cli import lavos
from tests.support.hub import REPO


def commands() -> list[Any]:
    root = typer.main.get_command(app)

    def walk(cmd: Any, path: Any, ctx: Any) -> Iterator[Any]:
        yield path, cmd
        if hasattr(cmd, "list_commands"):  # typer vendors its own click: duck-type the group
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                yield from walk(sub, [*path, name], typer.Context(sub, parent=ctx))

    return list(walk(root, [], typer.Context(root)))


# In this process (tests/support/cli.py): each help is the command line parsed as `lavos` parses it.
@pytest.mark.parametrize("path", [p for p, _ in commands()], ids=lambda p: " ".join(["lavos", *p]))
def test_help_explains_and_gives_an_example(path: Any) -> None:
    done = lavos(*path, "--help", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "Example" in done.stdout, f"`lavos {' '.join(path)} --help` gives no example"


def test_the_installed_command_answers_help_as_a_process() -> None:
    """The real thing once: the `lavos` script pip installed (its entry point, lavos_cli:main)."""
    script = Path(sys.executable).with_name("lavos")
    done = subprocess.run(
        [str(script), "--help"], cwd=REPO, capture_output=True, text=True, env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    )
    assert done.returncode == 0, done.stderr
    assert "Example: lavos demo" in done.stdout and "node-config" in done.stdout and "server" in done.stdout
