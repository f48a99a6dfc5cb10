"""What the alert banner shows: open alerts staff have not acknowledged yet, loudest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from broker.db.alerts import open_alerts
from broker.db.models import Alert
from broker.service import CentralService

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

    @property
    def loud(self) -> bool:
        return self.kind in LOUD_KINDS

    def text(self, lang: str) -> str:
        return self.message if lang == "sk" else self.message_en


def _banner(a: Alert) -> BannerAlert:
    return BannerAlert(a.id, a.kind, a.table_id, a.severity, a.message, a.message_en, a.opened_at, a.count, a.acked_at is not None)


def all_open(service: CentralService) -> list[BannerAlert]:
    """Every open alert (acknowledged too), loud first, then by severity, newest first; one query."""
    with service.store.reader() as db:
        rows = [_banner(a) for a in open_alerts(db)]
    rows.sort(key=lambda a: a.opened_at, reverse=True)
    rows.sort(key=lambda a: (not a.loud, _RANK.get(a.severity, 3)))
    return rows


def banner_alerts(service: CentralService) -> list[BannerAlert]:
    return [a for a in all_open(service) if not a.acked]
