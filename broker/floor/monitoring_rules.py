"""The monitoring rules' alerts as hall alerts: what vmalert says fires reaches the bar and the
manager's push targets like any alert of the hub.

vmalert (Debian's victoria-metrics package) evaluates deploy/vmalert/lavos-rules.yml over the
metrics the hub writes and posts what fires, and what has resolved, to an Alertmanager's API;
the hub takes that post (dashboard/api/monitoring.py) and hands this part one `ReportRuleAlerts`.
The rules, each in one place here:
- one open alert per rule and table (broker.domain.floor.alert_kinds.monitoring_rule_key), kind
  "monitoring", worded by the rule file (Slovak and English), the table's name in front;
- firing opens it, once: vmalert repeats a firing alert at every evaluation, and an open one is
  left as it is (its count is not the number of evaluations). Resolved closes it, with the
  push follow-up "Vyriešené: …"; vmalert repeats a resolution for a while too, and a cause with
  nothing open is nothing to do;
- while the hall is shut (outside its opening hours, from OPENS_EARLY before opening to
  CLOSES_LATE after closing, and no game running) a firing rule opens nothing: the tables'
  modules are switched off at night and nobody is there to help. vmalert repeats it, so a rule
  still firing when the hall opens is raised then. A resolution is always taken.
Staff may acknowledge such an alert (it stays open until the rule resolves); one they close
while the rule still fires opens again at vmalert's next evaluation, as any alert whose cause
comes back.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select

from broker.core.commands import Command, command, handles
from broker.core.part import Part
from broker.core.ports import HallState
from broker.domain.floor import alert_kinds
from broker.domain.json_shape import every_field_sent
from broker.domain.schedule import opening_periods
from broker.storage.models import Alert

log = logging.getLogger("lavos.hub")

OPENS_EARLY = timedelta(minutes=30)  # staff come in before the doors open
CLOSES_LATE = timedelta(minutes=60)  # the last games, the close-out


@dataclass(frozen=True)
class RuleAlert:
    """One alert of a monitoring rule as vmalert sent it: firing or resolved, for a table or the hall."""

    rule: str  # the rule's name (vmalert's alertname)
    table: str | None  # the series' table label, if the rule is about one table
    severity: str  # info, warning, critical
    text: str  # Slovak (annotation summary)
    text_en: str  # English (annotation summary_en)
    firing: bool


@every_field_sent
@dataclass(frozen=True)
class RuleReport:
    """What became of a post: alerts opened, closed, and firing ones not raised while the hall is shut."""

    opened: int = 0
    closed: int = 0
    held: int = 0


@command
class ReportRuleAlerts(Command[RuleReport]):
    """vmalert's alerts (the monitoring rules): a firing rule opens one hall alert per table (kind
    "monitoring", not while the hall is shut), a resolved one closes it."""

    alerts: tuple[RuleAlert, ...]


def attended(hall: HallState, at: datetime) -> bool:
    """Is anyone there to act on an alert: within the opening hours (and their margins), or a game running."""
    return bool(opening_periods(hall.venue, at - CLOSES_LATE, at + OPENS_EARLY)) or bool(hall.games.view())


class MonitoringRules(Part):
    def __init__(self, hall: HallState) -> None:
        self.h = hall

    @handles(ReportRuleAlerts)
    def report(self, c: ReportRuleAlerts) -> RuleReport:
        now = self.h.clock()
        open_now = attended(self.h, now)
        opened = closed = held = 0
        with self.h.store.session() as db:
            for a in c.alerts:
                spec = alert_kinds.monitoring_rule(a.rule, a.table, a.severity, a.text, a.text_en, in_venue=a.table in self.h.tables)
                is_open = db.scalar(select(Alert.id).where(Alert.cause_key == spec.cause_key, Alert.closed_at.is_(None))) is not None
                if not a.firing:
                    if is_open:
                        self.h.alerts.settle(db, spec.cause_key, now)
                        closed += 1
                elif is_open:
                    continue
                elif not open_now:
                    held += 1
                else:
                    self.h.alerts.raise_alert(db, spec)
                    opened += 1
        if held:
            log.info("monitoring: %d firing rule alert(s) not raised: the hall is shut", held)
        return RuleReport(opened, closed, held)
