"""The monitoring rules' notifications: vmalert posts here as to an Alertmanager.

vmalert (deploy/vmalert/) is started with `-notifier.url=http://127.0.0.1:8080/api/monitoring`
and `-notifier.bearerTokenFile=` an API token of an account allowed "monitoring.report" (the
manager's: `lavos user token`), and posts every alert of a rule to `<url>/api/v2/alerts` in
Alertmanager's API v2 shape: a list of {labels, annotations, startsAt, endsAt, generatorURL}. An
alert whose endsAt has passed has resolved; vmalert sends a firing one with an endsAt a few
evaluations ahead. The labels name the rule (alertname), its severity and, for a table's rule,
the table; the annotations carry the words (summary in Slovak, summary_en in English).

What becomes of them is the hub's (broker.floor.monitoring_rules): hall alerts, pushed to the
manager's targets like every other. Anything else posted here is refused with a 4xx before the hub
sees it; a caller without the token gets a 401 before its body is read (dashboard.api.limits).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi import Body as BodyParam
from pydantic import AwareDatetime, Field, model_validator

from broker.accounts.staff import Staff
from broker.floor.monitoring_rules import ReportRuleAlerts, RuleAlert, RuleReport
from dashboard.api.auth import can
from dashboard.api.deps import Hub, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(prefix="/monitoring", tags=["monitoring"])
CAP = "monitoring.report"
MAX_ALERTS = 500  # a rule of a 14-table hall sends at most 14; a whole evaluation of every rule fits
WORDS = 300  # of a rule's summary kept for the alert (staff read a line, not a page)

RULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # a Prometheus alert name (no ':': it would spell another cause)
TABLE = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")  # a venue's table id
SEVERITIES = ("info", "warning", "critical")
LabelName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]


class PostedAlert(Body):
    """One alert as Alertmanager's API v2 takes it (postableAlert). The hub reads the labels
    alertname, table and severity (a rule's others are kept by vmalert, not here) and the
    annotations summary (Slovak) and summary_en (English)."""

    labels: Annotated[dict[LabelName, Annotated[str, text(200)]], Field(max_length=30)]
    annotations: Annotated[dict[LabelName, Annotated[str, text(2000)]], Field(max_length=30)] = {}  # noqa: RUF012 - pydantic copies a default per instance
    startsAt: Annotated[AwareDatetime, Field(strict=False)] | None = None  # Alertmanager's field names (RFC 3339)
    endsAt: Annotated[AwareDatetime, Field(strict=False)] | None = None
    generatorURL: Annotated[str, text(2000)] | None = None

    @model_validator(mode="after")
    def _rule(self) -> PostedAlert:
        name, table, severity = self.labels.get("alertname"), self.labels.get("table"), self.labels.get("severity", "warning")
        if name is None or not RULE_NAME.fullmatch(name):
            raise ValueError("labels.alertname must be a rule's name: letters, digits and _, at most 64")
        if table is not None and not TABLE.fullmatch(table):
            raise ValueError("labels.table must be a table id: lower-case letters, digits, - and _, at most 32")
        if severity not in SEVERITIES:
            raise ValueError(f"labels.severity must be one of {', '.join(SEVERITIES)}")
        return self


def _words(text: str | None, fallback: str) -> str:
    text = " ".join((text or "").split())  # one line: the stored text is a push message's first line too
    return text[:WORDS] if text else fallback


def rule_alert(posted: PostedAlert, now: datetime) -> RuleAlert:
    """What the hub keeps of a posted alert; firing unless its endsAt has passed."""
    name, notes = posted.labels["alertname"], posted.annotations
    return RuleAlert(
        rule=name,
        table=posted.labels.get("table"),
        severity=posted.labels.get("severity", "warning"),
        text=_words(notes.get("summary"), f"pravidlo monitoringu {name}"),
        text_en=_words(notes.get("summary_en"), _words(notes.get("summary"), f"monitoring rule {name}")),
        firing=posted.endsAt is None or posted.endsAt > now,
    )


@router.post(
    "/api/v2/alerts",
    response_model=RuleReport,
    summary="The monitoring rules' alerts from vmalert, in Alertmanager's API v2 shape: firing ones open hall alerts, resolved ones close them",
)
def post_alerts(
    hub: Hub,
    reads: Reads,
    user: Annotated[Staff, Depends(can(CAP))],
    alerts: Annotated[list[PostedAlert], BodyParam(max_length=MAX_ALERTS)],
) -> RuleReport:
    now = reads.clock()
    return hub.execute(ReportRuleAlerts(alerts=tuple(rule_alert(a, now) for a in alerts), actor=user.username))
