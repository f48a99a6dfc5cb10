"""What every `lavos` command shares: how it refuses (one line on stderr, exit 2) and how it
sets up logging. In devices/ because the Pi's `lavos edge` uses it too, and devices/ is the one
layer everything may import."""

from __future__ import annotations

import logging

import typer

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")  # what logging and uvicorn both know
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def fail(message: str) -> typer.Exit:
    """`raise fail("...")`: the message, then exit code 2 (a usage or configuration error)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def log_level_problem(level: str) -> str | None:
    """Why `level` is no log level, or None; logging itself would raise with a traceback."""
    if level.upper() in LOG_LEVELS:
        return None
    return f"--log-level {level!r} is not one of {', '.join(LOG_LEVELS)}"


def configure_logging(level: str) -> None:
    """Log to stderr at `level` (checked with log_level_problem first)."""
    logging.basicConfig(level=level.upper(), format=LOG_FORMAT)
