"""The one after-commit mechanism: effects that may happen only once the database has the change.

MQTT publishes, live pushes, metrics and push notifications must never run for a change that was
rolled back, and no transaction may wait on a socket. So code that changes something registers
its effects on the transaction that makes the change:

    with store.session() as db:
        ...
        after_commit(db).add(lambda: publish(table))

`Store.session()` hands them on when, and only when, the transaction commits; a rolled-back one
drops them. Where they go then:
- inside `deferred()` (the hub's writer wraps every item it runs: a command, a batch of MQTT
  messages, a reconnect), they wait until the item is done, so the owned state the item updates
  after its commit is what the effects see (a published game summary reads the open games);
- elsewhere (a tool without a hub), they run right after the commit.

An effect that fails is logged and the others still run: the change is committed already.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("lavos.hub")

Effect = Callable[[], None]
_KEY = "lavos.after_commit"
_local = threading.local()


class Effects:
    """The effects of one transaction, in the order they were added."""

    __slots__ = ("actions",)

    def __init__(self) -> None:
        self.actions: list[Effect] = []

    def add(self, fn: Effect) -> None:
        self.actions.append(fn)


def after_commit(db: Any) -> Effects:
    """The effects of `db`'s transaction (a SQLAlchemy Session opened by Store.session())."""
    found: Effects | None = db.info.get(_KEY)
    if found is None:
        found = db.info[_KEY] = Effects()
    return found


def committed(db: Any) -> None:
    """Store.session() calls this after `db` committed: its effects run now, or at the end of the
    enclosing `deferred()` block."""
    effects: Effects | None = db.info.pop(_KEY, None)
    if effects is None or not effects.actions:
        return
    waiting: list[Effect] | None = getattr(_local, "waiting", None)
    if waiting is not None:
        waiting.extend(effects.actions)
        return
    _run(effects.actions)


def rolled_back(db: Any) -> None:
    """Store.session() calls this when `db` was rolled back: its effects never happen."""
    db.info.pop(_KEY, None)


@contextmanager
def deferred() -> Iterator[None]:
    """Within: the effects of every transaction committed on this thread wait until the block ends
    (also when it raises: what was committed stays committed). A nested block joins the outer one."""
    if getattr(_local, "waiting", None) is not None:
        yield
        return
    waiting: list[Effect] = []
    _local.waiting = waiting
    try:
        yield
    finally:
        _local.waiting = None
        _run(waiting)


def _run(actions: list[Effect]) -> None:
    # An effect may commit changes of its own (a listener that starts something): theirs run too.
    for fn in actions:
        try:
            fn()
        except Exception:
            log.exception("after-commit action failed")
