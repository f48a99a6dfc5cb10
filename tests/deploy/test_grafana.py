"""Grafana provisioning: parses, and every query asks only for what MetricsWriter really writes.

The names are not copied here: they are read off broker.adapters.metrics.MetricsWriter by calling each of
its point methods with a recorder in place of the writer, so renaming a field there without
updating the dashboard fails this test instead of leaving an empty panel at the club.
"""

from __future__ import annotations

import inspect
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from broker.adapters.metrics import MetricsWriter

GRAFANA = Path(__file__).resolve().parents[2] / "deploy" / "grafana"
DASHBOARD = GRAFANA / "dashboards" / "lavos.json"
DATASOURCES = GRAFANA / "provisioning" / "datasources" / "lavos-influxdb.yaml"
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
# Columns every Flux row has, whatever the measurement.
FLUX_COLUMNS = {"_time", "_value", "_start", "_stop", "_measurement", "_field"}


class Recorder:
    """Stands in for a MetricsWriter's queue: the writer's own methods build the lines (through
    write() or, for ball drops, the batched pockets()), this parses what would be queued."""

    write = MetricsWriter.write
    pockets = MetricsWriter.pockets

    def __init__(self) -> None:
        self.points: list[tuple[str, dict, dict]] = []

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


def panels() -> list[dict]:
    out = []
    for p in json.loads(DASHBOARD.read_text(encoding="utf-8"))["panels"]:
        out += [p, *p.get("panels", [])]  # a collapsed row holds its panels
    return out


def queries() -> list[tuple[str, str]]:
    return [(p["title"], t["query"]) for p in panels() for t in p.get("targets", [])]


def _strings(pattern: str, text: str) -> set[str]:
    return set(re.findall(pattern, text))


def test_the_schema_derived_from_the_writer() -> None:
    schema = written_schema()
    assert schema["node"] == ({"table"}, {"uptime_s", "outbox", "cpu_temp_c", "reconnects"})
    assert schema["pocket"] == ({"table", "pocket"}, {"count"})


@pytest.mark.parametrize("title,query", queries())
def test_every_query_names_only_what_the_writer_writes(title: str, query: str) -> None:
    schema = written_schema()
    measurements = _strings(r'r\._measurement\s*==\s*"([^"]+)"', query)
    fields = _strings(r'r\._field\s*==\s*"([^"]+)"', query)
    assert measurements, f"{title}: a query must pick its measurement"
    assert fields, f"{title}: a query must pick its field"
    assert measurements <= set(schema), f"{title}: measurements {measurements - set(schema)} are never written"
    known_fields = set().union(*(schema[m][1] for m in measurements))
    assert fields <= known_fields, f"{title}: fields {fields - known_fields} are not written to {measurements}"
    known_tags = set().union(*(schema[m][0] for m in measurements))
    used = _strings(r"\br\.([A-Za-z_][A-Za-z0-9_]*)", query) | _strings(r'r\["([^"]+)"\]', query)
    for cols in re.findall(r"columns:\s*\[([^\]]*)\]", query):
        used |= _strings(r'"([^"]+)"', cols)
    assert used - FLUX_COLUMNS <= known_tags, f"{title}: tags {used - FLUX_COLUMNS - known_tags} are not written to {measurements}"
    # The bucket and time range come from Grafana: one datasource setting moves every panel.
    assert "from(bucket: v.defaultBucket)" in query and "range(start: v.timeRangeStart, stop: v.timeRangeStop)" in query


def test_the_dashboard_covers_what_the_issue_asks_for() -> None:
    asked = {
        "session": {"amount_cents", "minutes"},
        "light": {"on"},
        "pocket": {"count"},
        "node": {"uptime_s", "outbox", "cpu_temp_c", "reconnects"},
        "alert": {"count"},
    }
    text = "\n".join(q for _, q in queries())
    for measurement, fields in asked.items():
        for field in fields:
            assert f'r._measurement == "{measurement}" and r._field == "{field}"' in text, (measurement, field)


def test_template_variable_uses_a_written_tag() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    tags = set().union(*(t for t, _ in written_schema().values()))
    for var in dash["templating"]["list"]:
        assert _strings(r'tag:\s*"([^"]+)"', var["query"]) <= tags


def test_panels_use_the_provisioned_datasource() -> None:
    provisioned = yaml.safe_load(DATASOURCES.read_text(encoding="utf-8"))
    assert provisioned["apiVersion"] == 1
    uids = {d["uid"] for d in provisioned["datasources"]}
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    refs = [p["datasource"] for p in panels() if p["type"] != "row"]
    refs += [t["datasource"] for p in panels() for t in p.get("targets", [])]
    refs += [v["datasource"] for v in dash["templating"]["list"]]
    assert refs and all(r["uid"] in uids and r["type"] == "influxdb" for r in refs)


def test_datasource_is_flux_with_secrets_from_the_environment() -> None:
    (ds,) = yaml.safe_load(DATASOURCES.read_text(encoding="utf-8"))["datasources"]
    assert ds["type"] == "influxdb" and ds["jsonData"]["version"] == "Flux"
    assert ds["url"] == "${LAVOS_INFLUX_URL}"
    assert ds["jsonData"]["organization"] == "${LAVOS_INFLUX_ORG}"
    assert ds["jsonData"]["defaultBucket"] == "${LAVOS_INFLUX_BUCKET}"
    assert ds["secureJsonData"]["token"] == "${LAVOS_INFLUX_TOKEN}"


def test_dashboard_layout_is_sound() -> None:
    dash = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert dash["uid"] and dash["timezone"] == "Europe/Bratislava"
    ids = [p["id"] for p in panels()]
    assert len(ids) == len(set(ids))
    for p in panels():
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24 and g["h"] > 0, p["title"]
    # Grafana interpolates environment variables in provisioning files, not in dashboards.
    assert "LAVOS_" not in DASHBOARD.read_text(encoding="utf-8")


def test_dashboard_provider_points_at_a_configurable_folder() -> None:
    (provider,) = yaml.safe_load(PROVIDERS.read_text(encoding="utf-8"))["providers"]
    assert provider["type"] == "file" and provider["options"]["path"] == "${LAVOS_GRAFANA_DASHBOARDS}"
