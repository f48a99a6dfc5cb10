"""Commands as data: every change to the hall, the till, members, accounts and settings.

A command is a frozen dataclass that says what is asked and by whom (`actor`); the type
parameter is what its handler answers:

    @command
    class PauseGame(Command[GameState]):
        game: int

An API route and a page route that do the same thing build the same command and hand it to
`Hub.execute` (through the dashboard's facade). The hub's one writer runs it: it looks up the
one handler of its type, calls it, and the handler validates, commits and registers its effects
(broker.storage.after_commit), which run after its commit. Nothing else changes hall state.

A handler is a method of the hub part that owns the rules (the games, a table, the tabs, the
payments…), marked with `@handles`:

    class Games:
        @handles(PauseGame)
        def pause(self, c: PauseGame) -> GameState: ...

The hub gives `Handlers` its parts when it is built; every command type must have exactly one
handler among them, or the hub does not start (docs/architecture.md: how to add a command).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, dataclass_transform

R = TypeVar("R", covariant=True)
C = TypeVar("C", bound="Command[Any]")
T = TypeVar("T")

_HANDLES = "__lavos_handles__"
_ABSTRACT = "__lavos_abstract__"


@dataclass(frozen=True, kw_only=True)
class Command(Generic[R]):
    """Base of every command; `actor` is who asks (a staff username, "system" for the hub itself)."""

    actor: str


@dataclass_transform(frozen_default=True, kw_only_default=True)
def command(cls: type[T]) -> type[T]:
    """Make `cls` a command: a frozen, keyword-only dataclass (so a command is never changed on
    its way, and a call site names every field it sets)."""
    return dataclass(frozen=True, kw_only=True)(cls)


@dataclass_transform(frozen_default=True, kw_only_default=True)
def abstract_command(cls: type[T]) -> type[T]:
    """A base that commands share fields through (e.g. the game they act on); it has no handler."""
    cls = command(cls)
    setattr(cls, _ABSTRACT, True)
    return cls


def handles(kind: type[Command[Any]]) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Mark a hub part's method as the handler of `kind` (found by `Handlers`)."""

    def mark(fn: Callable[..., T]) -> Callable[..., T]:
        setattr(fn, _HANDLES, kind)
        return fn

    return mark


class UnknownCommand(TypeError):
    pass


def all_commands(prefix: str = "broker.") -> list[type[Command[Any]]]:
    """Every command type of the hub's modules imported so far (not the abstract bases), by name."""
    found: set[type[Command[Any]]] = set()
    todo = list(Command.__subclasses__())
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if kind.__module__.startswith(prefix) and not kind.__dict__.get(_ABSTRACT, False):
            found.add(kind)
    return sorted(found, key=lambda k: k.__name__)


class Handlers:
    """The handler of each command type, bound to the parts that hold them."""

    def __init__(self, parts: Iterable[object], *, prefix: str = "broker.") -> None:
        self._by_kind: dict[type[Command[Any]], Callable[[Any], Any]] = {}
        for part in parts:
            for name in dir(type(part)):
                kind = getattr(getattr(type(part), name), _HANDLES, None)
                if kind is None:
                    continue
                if kind in self._by_kind:
                    raise TypeError(
                        f"{kind.__name__} has two handlers: {self._by_kind[kind].__qualname__} and {type(part).__name__}.{name}"
                    )
                self._by_kind[kind] = getattr(part, name)
        missing = [k.__name__ for k in all_commands(prefix) if k not in self._by_kind]
        if missing:
            raise TypeError(f"commands without a handler: {', '.join(missing)}")

    def kinds(self) -> list[type[Command[Any]]]:
        return sorted(self._by_kind, key=lambda k: k.__name__)

    def handler_of(self, cmd: Command[T]) -> Callable[[Command[T]], T]:
        try:
            return self._by_kind[type(cmd)]
        except KeyError:
            raise UnknownCommand(f"{type(cmd).__name__} is not a command this hub knows") from None
