"""What the alert banner shows: open alerts staff have not acknowledged yet, loudest first."""

from __future__ import annotations

from broker.floor.reads import AlertView
from broker.hall.read_models import HallReads

_RANK = {"critical": 0, "warning": 1, "info": 2}


def all_open(reads: HallReads) -> list[AlertView]:
    """Every open alert (acknowledged too), loud first, then by severity, newest first; one query."""
    rows = reads.floor.open_alerts()
    rows.sort(key=lambda a: a.opened_at, reverse=True)
    rows.sort(key=lambda a: (not a.loud, _RANK.get(a.severity, 3)))
    return rows


def banner_alerts(reads: HallReads) -> list[AlertView]:
    return [a for a in all_open(reads) if not a.acked]
