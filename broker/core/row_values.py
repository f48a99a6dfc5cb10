"""Frozen values copied out of ORM rows inside a read, so nothing a caller holds can lazy-load later."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

V = TypeVar("V", bound="DataclassInstance")


def copy_row(cls: type[V], row: Any, **extra: Any) -> V:
    """A value of `cls` (a dataclass) from the row's attributes of the same names (plus `extra`)."""
    names = [f.name for f in fields(cls) if f.name not in extra]
    return cls(**{n: getattr(row, n) for n in names}, **extra)
