"""What the alert banner shows: open alerts staff have not acknowledged yet, loudest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from broker.hall.read_models import AlertView, HallReads

# Foosball without a member is the one the club cares about most ("LEN PRE REGISTROVANÝCH ČLENOV").
LOUD_KINDS = frozenset({"foosball_no_member"})
_RANK = {"critical": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class BannerAlert:
    id: int
    kind: str
    table: str | None
    severity: str
    message: str
    message_en: str
    opened_at: datetime
    count: int
    acked: bool
    acked_at: datetime | None = None
    acked_by: str | None = None

    @property
    def loud(self) -> bool:
        return self.kind in LOUD_KINDS

    def text(self, lang: str) -> str:
        return self.message if lang == "sk" else self.message_en


def _banner(a: AlertView) -> BannerAlert:
    return BannerAlert(
        a.id, a.kind, a.table_id, a.severity, a.message, a.message_en, a.opened_at, a.count, a.acked_at is not None, a.acked_at, a.acked_by
    )


def all_open(reads: HallReads) -> list[BannerAlert]:
    """Every open alert (acknowledged too), loud first, then by severity, newest first; one query."""
    rows = [_banner(a) for a in reads.open_alerts()]
    rows.sort(key=lambda a: a.opened_at, reverse=True)
    rows.sort(key=lambda a: (not a.loud, _RANK.get(a.severity, 3)))
    return rows


def banner_alerts(reads: HallReads) -> list[BannerAlert]:
    return [a for a in all_open(reads) if not a.acked]
