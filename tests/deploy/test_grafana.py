"""The monitoring's files, read as Grafana and vmalert read them: the provisioning's shape, and every
query and rule asking only for what MetricsWriter really writes.

The names are not copied here: they are read off broker.adapters.metrics.MetricsWriter by calling each of
its point methods with a recorder in place of the writer, so renaming a field there without
updating the dashboard fails this test instead of leaving an empty panel at the club. VictoriaMetrics
stores field f of measurement m as the series m_f with the point's tags as labels. That the queries
return the right figures, and the rules fire, is tests/deploy/test_monitoring.py's, on the real
servers; Grafana itself cannot be installed here (Debian has no package of it).
"""

from __future__ import annotations

import inspect
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from broker.adapters.metrics import MetricsWriter

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "lavos.json"
DATASOURCES = GRAFANA / "provisioning" / "datasources" / "lavos-victoriametrics.yaml"
RULES = GRAFANA.parent / "vmalert" / "lavos-rules.yml"
README = GRAFANA / "README.md"
PROVIDERS = GRAFANA / "provisioning" / "dashboards" / "lavos.yaml"
AT = datetime(2026, 11, 30, 17, 5, tzinfo=UTC)
SAMPLE_CALLS = {
    "pocket": ("pool-01", 0, AT),
    "goal": ("foos-01", "home", AT),
    "session": ("pool-01", "standard", 60, 600, AT),
    "light": ("pool-01", True, AT),
    "node": ("pool-01", 12.5, 0, 48.2, 1, AT),
    "alert": ("node_offline", AT),
    "reject": ("pool-01", "unknown_sensor", 3, AT),
}
SLOVAK_LETTERS = re.compile(r"[áäčďéíĺľňóôŕšťúýž]", re.IGNORECASE)
# MetricsQL/PromQL words that look like a series name in a query.
FUNCTIONS = {"sum_over_time", "count_over_time", "last_over_time", "max_over_time", "min_over_time", "absent_over_time", "label_values"}


class Recorder:
    """Stands in for a MetricsWriter's queue: the writer's own methods build the lines (through
    write() or, for ball drops, the batched pockets()), this parses what would be queued."""

    write = MetricsWriter.write
    pockets = MetricsWriter.pockets

    def __init__(self) -> None:
        self.points: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

    def _append(self, lines: list[str]) -> None:
        for line in lines:  # measurement,tag=v,... field=v,... timestamp (the samples have no spaces)
            head, fields, _ts = line.rsplit(" ", 2)
            measurement, *tags = head.split(",")
            self.points.append((measurement, dict(t.split("=", 1) for t in tags), dict(f.split("=", 1) for f in fields.split(","))))


def written_schema() -> dict[str, tuple[set[str], set[str]]]:
    """measurement → (tag keys, field keys), as MetricsWriter's own point methods write them."""
    # write() itself and pockets() (the batch form of pocket()) are not point kinds of their own
    methods = {
        name
        for name, fn in inspect.getmembers(MetricsWriter, inspect.isfunction)
        if not name.startswith("_")
        and name not in ("write", "pockets")
        and any(call in inspect.getsource(fn) for call in ("self.write(", "self.pockets(", "self._append("))
    }
    assert methods == set(SAMPLE_CALLS), "MetricsWriter has a new point method: add a sample call here and a panel"
    rec = Recorder()
    for name, args in SAMPLE_CALLS.items():
        getattr(MetricsWriter, name)(rec, *args)
    schema: dict[str, tuple[set[str], set[str]]] = {}
    for measurement, tags, fields in rec.points:
        t, f = schema.setdefault(measurement, (set(), set()))
        t |= set(tags)
        f |= set(fields)
    return schema


def series() -> dict[str, set[str]]:
    """Every series VictoriaMetrics holds of what the writer writes (measurement_field) -> its labels."""
    return {f"{m}_{f}": tags for m, (tags, fields) in written_schema().items() for f in fields}


def panels() -> list[dict[str, Any]]:
    out = []
    for p in json.loads(DASHBOARD.read_text(encoding="utf-8"))["panels"]:
        out += [p, *p.get("panels", [])]  # a collapsed row holds its panels
    return out


def queries() -> list[tuple[str, str]]:
    return [(f"{p['title']} {t['refId']}", t["expr"]) for p in panels() for t in p.get("targets", [])]


def rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [r for g in doc["groups"] for r in g["rules"]]


def names_and_labels(expr: str) -> tuple[set[str], set[str]]:
    """The series a MetricsQL expression reads, and the labels it groups or filters by."""
    names = set(re.findall(r"\b([a-z][a-z0-9]*_[a-z0-9_]+)\s*(?:\{|\[)", expr)) - FUNCTIONS
    for alternatives in re.findall(r'__name__=~"([^"]+)"', expr):
        names |= set(alternatives.split("|"))
    labels = set(re.findall(r"\b(?:by|on)\s*\(([^)]*)\)", expr))
    labels = {label.strip() for group in labels for label in group.split(",") if label.strip()}
    labels |= set(re.findall(r"[{,]\s*([a-z_]+)\s*=~?", expr)) - {"__name__"}
    return names, labels


def test_the_schema_derived_from_the_writer() -> None:
    schema = written_schema()
    assert schema["node"] == ({"table"}, {"uptime_s", "outbox", "cpu_temp_c", "reconnects"})
    assert schema["pocket"] == ({"table", "pocket"}, {"count"})


@pytest.mark.parametrize("where,expr", queries() + [(r["alert"], r["expr"]) for r in rules()])
def test_every_query_and_rule_reads_only_what_the_writer_writes(where: str, expr: str) -> None:
    known = series()
    names, labels = names_and_labels(expr)
    assert names, f"{where}: reads no series"
    assert names <= set(known), f"{where}: {names - set(known)} are never written (written: {sorted(known)})"
    tags = set().union(*(known[n] for n in names))
    assert labels <= tags, f"{where}: labels {labels - tags} are not on {names}"


def test_the_dashboard_covers_what_the_issue_asks_for() -> None:
    read = set().union(*(names_and_labels(q)[0] for _, q in queries()))
    # games and minutes played, the bills, drops per pocket, node health, lights, alerts, refusals
    assert read == set(series())
    titles = {p["title"] for p in panels()}
    for asked in ("Hry / Games", "Odohrané minúty / Minutes played", "Podľa kapsy / Per pocket", "Moduly teraz / Modules now"):
        assert asked in titles


def test_template_variable_uses_a_written_label() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    labels = set().union(*series().values())
    (var,) = dash["templating"]["list"]
    assert var["type"] == "query" and var["datasource"]["uid"] == "lavos-metrics"
    (label,) = re.findall(r"^label_values\((\w+)\)$", var["definition"])
    assert label in labels and var["query"]["query"] == var["definition"]
    assert var["includeAll"] and var["allValue"] == ".*"  # All matches every table, even one that reported nothing yet
    for where, q in queries():
        if "table" in names_and_labels(q)[1] and "alert_count" not in q:
            assert 'table=~"$table"' in q, f"{where}: the table choice does not narrow it"


def test_panels_use_the_provisioned_datasource() -> None:
    provisioned = yaml.safe_load(DATASOURCES.read_text(encoding="utf-8"))
    assert provisioned["apiVersion"] == 1
    (ds,) = provisioned["datasources"]
    refs = [p["datasource"] for p in panels() if p["type"] != "row"]
    refs += [t["datasource"] for p in panels() for t in p.get("targets", [])]
    assert refs and all(r == {"type": "prometheus", "uid": ds["uid"]} for r in refs)
    for p in panels():
        for t in p.get("targets", []):
            assert t["instant"] != t["range"], f"{p['title']}: a target is either instant or a range"
            assert t["refId"] and t["expr"].strip()


def test_the_datasource_is_victoriametrics_through_grafanas_prometheus_type() -> None:
    (ds,) = yaml.safe_load(DATASOURCES.read_text(encoding="utf-8"))["datasources"]
    assert set(ds) >= {"name", "uid", "type", "access", "url"}
    assert (ds["type"], ds["access"], ds["url"]) == ("prometheus", "proxy", "${LAVOS_METRICS_URL}")
    assert re.fullmatch(r"\d+[smh]", ds["jsonData"]["timeInterval"])
    assert "secureJsonData" not in ds  # VictoriaMetrics has no login: loopback only (deploy/vmalert/victoria-metrics.default)
    assert "LAVOS_METRICS_URL" in README.read_text(encoding="utf-8")


def test_dashboard_layout_is_sound() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert dash["uid"] and dash["timezone"] == "Europe/Bratislava"
    ids = [p["id"] for p in panels()]
    assert len(ids) == len(set(ids))
    for p in panels():
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"]
        assert " / " in p["title"], f"{p['title']}: Slovak / English"
    # Grafana interpolates environment variables in provisioning files, not in dashboards.
    assert "LAVOS_" not in DASHBOARD.read_text(encoding="utf-8")


def test_dashboard_provider_points_at_a_configurable_folder() -> None:
    (provider,) = yaml.safe_load(PROVIDERS.read_text(encoding="utf-8"))["providers"]
    assert provider["type"] == "file" and provider["options"]["path"] == "${LAVOS_GRAFANA_DASHBOARDS}"


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r["alert"])
def test_each_rule_says_it_in_slovak_and_english_as_the_hub_takes_it(rule: dict[str, Any]) -> None:
    from dashboard.api.monitoring import PostedAlert

    PostedAlert(labels={"alertname": rule["alert"], **rule["labels"]}, annotations=rule["annotations"])  # the hub's route takes it
    assert set(rule) == {"alert", "expr", "for", "labels", "annotations"}
    assert rule["labels"]["severity"] in ("warning", "critical")
    notes = rule["annotations"]
    assert set(notes) == {"summary", "summary_en"}
    assert SLOVAK_LETTERS.search(notes["summary"]) and not SLOVAK_LETTERS.search(notes["summary_en"])
    # The hub puts the table's name in front ("Pool 3: ..."); a template would say its id again.
    assert "{{" not in notes["summary"] + notes["summary_en"]
    assert re.fullmatch(r"\d+[sm]", rule["for"])
