"""Remote monitoring for the manager: every table node's health (and which run a software
version other than the hub's: they missed a fleet update) and the messages the hub refused from it, each pocket sensor's drops and faults today, the alert history, and a link to
Grafana for the long view.

Node rows are the read models' NodeStatus values (what /api/nodes answers with). The Grafana link
is the URL in the environment variable LAVOS_GRAFANA_URL of `lavos server` (unset: no link);
see deploy/grafana/README.md.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import Response

from broker.accounts.staff import Staff
from broker.domain.floor import reject_tally as rejects
from broker.domain.floor.alert_kinds import sensor_place
from broker.hall.read_models import HallReads
from dashboard.api.deps import get_hub
from dashboard.web import i18n
from dashboard.web.auth import page_can
from dashboard.web.i18n import N_
from dashboard.web.request_text import translated
from dashboard.web.templating import NavLink, render
from devices.kinds import pocket_sensor
from devices.version import software_version

router = APIRouter(prefix="/monitoring")
# The top bar's word is the short one staff use for a table's Pi ("Modul odpojený"): the
# manager's eleven links must stay one row at 1280 px (the floor's last tables below them).
NAV = [NavLink("/monitoring", N_("Modules"), role="manager", order=80)]

GRAFANA_ENV = "LAVOS_GRAFANA_URL"
HISTORY_LIMIT = 200
TableQuery = Annotated[str | None, Query(max_length=32)]
REASON_NAMES = {
    rejects.INVALID: N_("breaks the message format"),
    rejects.UNKNOWN_TABLE: N_("table not in the venue file"),
    rejects.UNKNOWN_SENSOR: N_("sensor not wired on this node"),
    rejects.HANDLER_ERROR: N_("failed to apply"),
    rejects.CLOCK: N_("node clock off (applied at the hub's time)"),
    rejects.CONTRACT: N_("speaks another wire contract version (update the module)"),
}
# What a node reported about a beam (devices.contract sensor_fault kinds), in staff's words.
FAULT_NAMES = {"stuck": N_("stuck"), "chatter": N_("chattering"), "recovered": N_("working again")}


def grafana_url() -> str | None:
    """The configured Grafana address, if it is an http(s) URL (anything else would be a broken or unsafe link)."""
    url = os.environ.get(GRAFANA_ENV, "").strip()
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None


@dataclass
class SensorHealth:
    """One table's beam sensors today: drops per pocket, fault reports per sensor, open fault alerts."""

    table: str
    pockets: list[int]
    name: str = ""
    name_en: str | None = None
    faults: Counter[str] = field(default_factory=Counter)
    last_fault: dict[str, str] = field(default_factory=dict)  # sensor → stuck / chatter / recovered
    open_faults: set[str] = field(default_factory=set)

    def pocket_sensor(self, index: int) -> str:
        return pocket_sensor(index)

    def place(self, sensor: str) -> str:
        """Where the sensor is, in the page's language: "pri bránke domácich" / "at the home goal"."""
        sk, en = sensor_place(sensor)
        return sk if i18n.current_lang() == "sk" else en

    @property
    def other_sensors(self) -> list[str]:
        pockets = {self.pocket_sensor(i) for i in range(len(self.pockets))}
        return sorted((set(self.faults) | self.open_faults) - pockets)


def sensor_health(reads: HallReads) -> list[SensorHealth]:
    start, end = reads.reports.day_bounds(reads.today())
    health = {
        t.id: SensorHealth(t.id, [0] * len(t.pin_map.pockets), t.name, t.name_en)
        for t in reads.venue.tables
        if t.pin_map.pockets or t.pin_map.goal_home is not None
    }
    for e in reads.floor.sensor_events(start, end):
        h = health.get(e.table)
        if h is None:
            continue
        if e.type == "pocket":
            pocket = e.data.get("pocket")
            if isinstance(pocket, int) and 0 <= pocket < len(h.pockets):
                h.pockets[pocket] += 1
        else:
            sensor = str(e.data.get("sensor", "?"))
            if e.data.get("kind") != "recovered":
                h.faults[sensor] += 1
            h.last_fault[sensor] = str(e.data.get("kind", ""))
    for a in reads.floor.open_alerts():
        if a.kind == "sensor_fault" and a.table in health:
            # cause_key is sensor_fault:<table>:<sensor> (broker.domain.floor.alert_kinds)
            health[a.table].open_faults.add(a.cause_key.split(":", 2)[-1])
    return list(health.values())


@router.get("")
def monitoring_page(request: Request, user: Annotated[Staff, Depends(page_can("nodes.view"))], table: TableQuery = None) -> Response:
    reads = get_hub(request).reads
    if table and table not in reads.tables:
        raise HTTPException(400, translated(request, N_("There is no table %(table)s; choose one from the list."), table=table))
    return render(
        request,
        "monitoring.html",
        {
            "nodes": reads.floor.node_statuses(),
            "health": sensor_health(reads),
            "alerts": reads.floor.alert_history(table or None, HISTORY_LIMIT),
            "table_filter": table,
            "tables": reads.venue.tables,
            "grafana_url": grafana_url(),
            "history_limit": HISTORY_LIMIT,
            "unknown_rejects": reads.floor.unknown_rejects(),
            "reason_names": REASON_NAMES,
            "fault_names": FAULT_NAMES,
            "samples_kept": rejects.SAMPLES_PER_TABLE,
            "refused_records": reads.outbox.refused_records(),
            "hub_version": software_version(),
        },
    )


@router.get("/nodes-fragment")
def nodes_fragment(request: Request, user: Annotated[Staff, Depends(page_can("nodes.view"))]) -> Response:
    """The node table alone, re-fetched by the page when a node or alert changes (data-live)."""
    reads = get_hub(request).reads
    return render(
        request,
        "_monitoring_nodes.html",
        {
            "nodes": reads.floor.node_statuses(),
            "health": sensor_health(reads),
            "unknown_rejects": reads.floor.unknown_rejects(),
            "reason_names": REASON_NAMES,
            "fault_names": FAULT_NAMES,
            "samples_kept": rejects.SAMPLES_PER_TABLE,
            "hub_version": software_version(),
        },
    )
