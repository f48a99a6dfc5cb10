"""Store failures as the hub's own errors, so callers (the dashboard) never see sqlalchemy.

The facade and the read models wrap every database call in `translated()`: a concurrent change
that breaks a constraint is a Conflict (a ServiceError: "not possible now"), a database that
cannot be reached is StoreUnavailable, and the store's own "no such row" is NotFound.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from sqlalchemy import exc as sa

from broker.core.errors import NotFound, ServiceError
from broker.domain.refusals import N_
from broker.storage.errors import StoreError

log = logging.getLogger("lavos.hub")

P = ParamSpec("P")
R = TypeVar("R")

CONFLICT = N_("This conflicts with a change made at the same moment; reload the page and try again.")
UNAVAILABLE = "the database is unavailable; try again in a moment, and tell the manager if it persists"


class Conflict(ServiceError):
    """Two changes met at the same moment and the database kept the other one."""


class StoreUnavailable(RuntimeError):
    """The database cannot be reached (or is locked too long); str() says what to do."""


@contextmanager
def translated() -> Iterator[None]:
    try:
        yield
    except sa.IntegrityError as e:
        # The database's message may quote the conflicting key (a card UID): at DEBUG only.
        log.info("integrity conflict: %s", type(e.orig).__name__)
        log.debug("integrity conflict: %s", e.orig)
        raise Conflict(CONFLICT) from None
    except sa.OperationalError as e:
        log.error("database unavailable: %s", e.orig)
        raise StoreUnavailable(UNAVAILABLE) from None
    except StoreError as e:
        raise NotFound(N_("It is no longer there; reload the page."), detail=str(e)) from None


def store_call(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator form of `translated()`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with translated():
            return fn(*args, **kwargs)

    return wrapper
