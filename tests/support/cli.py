"""`lavos` run in this process, through typer's CliRunner: the command line parsed and run as the
`lavos` command does, its exit code, stdout and stderr, without a process start (which imports
the app again: seconds each on these machines). The tests about the process itself (the
installed entry point, exit codes of the real process, signals) run it as one: tests/support/server.py LAVOS.
"""

from __future__ import annotations

import subprocess

from typer.testing import CliRunner

from lavos_cli import app


def lavos(*args: str, env: dict[str, str] | None = None, ok: bool | None = None) -> subprocess.CompletedProcess[str]:
    """`lavos ARGS` in-process; as subprocess.run would report it. `ok=True`: it must exit 0."""
    result = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    done = subprocess.CompletedProcess(["lavos", *args], result.exit_code, result.stdout, result.stderr)
    if ok:
        assert done.returncode == 0, done.stderr
    return done
