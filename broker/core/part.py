"""A part of the hall: one capability as the hub composes it (docs/architecture.md, "The parts").

A part holds its commands' handlers (`@handles` methods, on itself or on the objects `handlers()`
names), its owned state, its watchdog rounds, what it starts and stops, and the refusals it
raises that the hub turns into its own errors (`as_not_found`: a NotFound, a 404 on the API;
`as_service_error`: a ServiceError, a 409). The hub keeps a list of its parts and gathers all of that from
them, so it names no part's handler, round or refusal itself.

The hooks are named for what has happened to the hub (`started`, `stopping`, `stopped`), as a part's
commands may well be called StartGame and StopGame. The hub calls `started()` in the order of its
list and stops the parts in reverse order in two steps: `stopping()` before its writer stops (what
submits work to the writer), `stopped()` after it (what the writer's last items wrote to besides the
database, e.g. a spool).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import ClassVar

from broker.domain.refusals import Refusal

Round = Callable[[datetime], None]


class Part:
    """The base of the hub's parts: every hook is optional (none does anything by default)."""

    as_not_found: ClassVar[tuple[type[Refusal], ...]] = ()
    as_service_error: ClassVar[tuple[type[Refusal], ...]] = ()

    def handlers(self) -> Sequence[object]:
        """The objects whose `@handles` methods are this part's commands' handlers."""
        return (self,)

    def rounds(self) -> Sequence[Round]:
        """What the watchdog runs on each round (on the writer), in this order."""
        return ()

    def started(self) -> None:
        """The hub's writer, link and watchdog have started."""

    def stopping(self) -> None:
        """The hub's writer is about to stop: stop handing it work."""

    def stopped(self) -> None:
        """The hub's writer stopped: let go of what its last items wrote to."""
