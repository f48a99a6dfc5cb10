"""Frozen values copied out of ORM rows inside a read, so nothing a caller holds can lazy-load later."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

V = TypeVar("V")


def copy_row(cls: type[V], row: Any, **extra: Any) -> V:
    """A value of `cls` (a dataclass) from the row's attributes of the same names (plus `extra`)."""
    names = [f.name for f in fields(cls) if f.name not in extra]  # type: ignore[arg-type]
    return cls(**{n: getattr(row, n) for n in names}, **extra)
