"""Load a TOML file into a pydantic model, with errors that name the file, line and key."""

from __future__ import annotations

import json
import re
import tomllib
from datetime import date, time
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)
# A key path as pydantic locates an error: names and array indexes, e.g. ("tables", 3, "id").
Loc = tuple[str | int, ...]


class ConfigError(ValueError):
    """A configuration file that cannot be used; str() says where and what to fix."""


class Located(ValueError):
    """Raised by a validator about one key below the model it checks, so the error names its line.

    ``loc`` is relative to that model, e.g. ``("tables", 3, "id")``.
    """

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc = loc


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"'.]+?)\s*=")


def key_lines(text: str) -> dict[Loc, int]:
    """Map key paths (as pydantic locates them: names and array indexes) to 1-based lines.

    Covers the shapes our config files use: tables, arrays of tables, dotted keys and inline
    tables on one line; good enough to point a person at the right line.
    """
    lines: dict[Loc, int] = {}
    counters: dict[Loc, int] = {}
    current: Loc = ()
    for n, line in enumerate(text.splitlines(), start=1):
        h = _HEADER.match(line)
        if h:
            names = tuple(p.strip().strip("\"'") for p in h.group(2).split("."))
            if h.group(1) == "[[":
                idx = counters.get(names, -1) + 1
                counters[names] = idx
                current = (*names, idx)
            else:
                # a sub-table of the latest array element keeps that element's index
                base: Loc = ()
                for name in names:
                    base = (*base, name)
                    if base in counters:
                        base = (*base, counters[base])
                current = base
            lines.setdefault(current, n)
            continue
        k = _KEY.match(line)
        if k:
            path = current + tuple(p.strip().strip("\"'") for p in k.group(1).split("."))
            lines.setdefault(path, n)
            # keys of an inline table on the same line
            for inner in re.findall(r"[{,]\s*([A-Za-z0-9_\-]+)\s*=", line):
                lines.setdefault((*path, inner), n)
    return lines


def _line_for(loc: Loc, lines: dict[Loc, int]) -> int | None:
    loc = tuple(loc)
    while loc:
        if loc in lines:
            return lines[loc]
        loc = loc[:-1]
    return None


def describe(err: ValidationError, text: str, path: Path | str) -> str:
    lines = key_lines(text)
    out = []
    for e in err.errors(include_url=False):
        error = (e.get("ctx") or {}).get("error")
        loc = tuple(e["loc"]) + tuple(getattr(error, "loc", ()))
        key = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in loc).replace(".[", "[")
        line = _line_for(loc, lines)
        where = f"{path}:{line}" if line else str(path)
        msg = e["msg"].removeprefix("Value error, ")
        out.append(f"{where}: {key or '(top level)'}: {msg}")
    return "\n".join(out)


def load_toml(path: Path | str, model: type[M], text: str | None = None) -> M:
    """Read and validate a TOML file; raise ConfigError with file:line: key: problem."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{path}: file not found") from None
        except UnicodeDecodeError as exc:
            line = exc.object[: exc.start].count(b"\n") + 1
            raise ConfigError(f"{path}:{line}: not UTF-8 (byte 0x{exc.object[exc.start]:02x}); save the file as UTF-8") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "(at line N, column M)"; lead with it like every other error
        at = re.search(r"at line (\d+)", str(exc))
        raise ConfigError(f"{path}{':' + at.group(1) if at else ''}: not valid TOML: {exc}") from None
    try:
        # Through JSON in strict mode: "600" is not a number and 1 is not a boolean, while names
        # of enums and paths, which TOML can only write as strings, are still accepted.
        return model.model_validate_json(json.dumps(data, default=_toml_scalar), strict=True)
    except ValidationError as exc:
        raise ConfigError(describe(exc, text, path)) from None


def _toml_scalar(value: date | time) -> str:
    # TOML's native dates and times (datetime is a date); the models then say which form they want.
    return value.isoformat()
