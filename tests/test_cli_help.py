"""Every `lavos` command says what it does and gives an example (issue 5, documentation)."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
import typer.main

from lavos_cli import app
from tests.support.hub import REPO


def commands():
    root = typer.main.get_command(app)

    def walk(cmd, path, ctx):
        yield path, cmd
        if hasattr(cmd, "list_commands"):  # typer vendors its own click: duck-type the group
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                yield from walk(sub, [*path, name], click.Context(sub, parent=ctx))

    return list(walk(root, [], click.Context(root)))


@pytest.mark.parametrize("path", [p for p, _ in commands()], ids=lambda p: " ".join(["lavos", *p]))
def test_help_explains_and_gives_an_example(path):
    done = subprocess.run(
        [sys.executable, "-m", "lavos_cli", *path, "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "Example" in done.stdout, f"`lavos {' '.join(path)} --help` gives no example"
