"""Grafana alerting provisioning: the structure Grafana's file provisioning reads, the names the
hub really writes, and the notification path with no secret in the repository.

What is checked here and what is not (no Grafana server on these machines, and Debian 12 has no
`grafana` package: it comes from Grafana's own apt repository):
- the files parse and have the shape of Grafana's alerting file provisioning (apiVersion 1;
  `groups` of `rules` with uid, title, condition, data, for, noDataState, execErrState, labels,
  annotations; `contactPoints` with receivers; `policies`; `muteTimes`), as Grafana's
  documentation ("Use configuration files to provision alerting resources") describes it;
- every query runs on the provisioned datasource and names only measurements, fields and tags
  broker.adapters.metrics.MetricsWriter writes (read off the writer, as tests/deploy/test_grafana.py
  does), and those series exist on a real VictoriaMetrics after a real MetricsWriter wrote them;
- NOT checked: that the Flux runs. Flux needs InfluxDB v2 itself; VictoriaMetrics speaks
  PromQL/MetricsQL, not Flux, so the queries' logic (ages, differences, the union of lit tables
  and events) is reviewed, not executed, here.
"""

from __future__ import annotations

import re
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from tests.deploy.test_grafana import DATASOURCES, FLUX_COLUMNS, GRAFANA, written_schema

ALERTING = GRAFANA / "provisioning" / "alerting"
RULES = ALERTING / "lavos-rules.yaml"
NOTIFICATIONS = ALERTING / "lavos-notifications.yaml"
README = GRAFANA / "README.md"
VENUE = GRAFANA.parent / "venues" / "lavos.toml"
# Grafana's documented values for a rule's states and the server-side expression datasource.
NO_DATA_STATES = {"NoData", "Alerting", "OK"}
EXEC_ERR_STATES = {"Error", "Alerting", "OK"}
EXPRESSION_UID = "__expr__"
EXPRESSION_TYPES = {"reduce", "threshold", "math", "resample", "classic_conditions"}
RULE_KEYS = {"uid", "title", "condition", "data", "for", "noDataState", "execErrState", "labels", "annotations"}
LANGUAGE_ANNOTATIONS = {"summary", "description", "summary_en", "description_en"}
# The rules the issue asks for, by uid.
ASKED = {"lavos-node-offline", "lavos-session-no-events", "lavos-outbox-growing", "lavos-hub-ingest-stalled"}
# Columns the queries make for themselves (map/reduce records), not read from the bucket.
OWN_COLUMNS = {"lit", "sensed", "events"}
ENV_REF = re.compile(r"\$\{(LAVOS_[A-Z0-9_]+)\}")
SLOVAK_LETTERS = re.compile(r"[áäčďéíĺľňóôŕšťúýž]", re.IGNORECASE)


def load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["apiVersion"] == 1
    return doc


def rules() -> list[dict]:
    return [rule for group in load(RULES)["groups"] for rule in group["rules"]]


def rule_ids() -> list[str]:
    return [r["uid"] for r in rules()]


def by_uid(uid: str) -> dict:
    return next(r for r in rules() if r["uid"] == uid)


def flux(rule: dict) -> list[str]:
    return [q["model"]["query"] for q in rule["data"] if q["datasourceUid"] != EXPRESSION_UID]


def _duration_s(text: str) -> int:
    m = re.fullmatch(r"(\d+)([smhd])", text)
    assert m, f"{text!r} is not a Grafana duration like 5m"
    return int(m[1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]


def test_groups_have_the_provisioning_shape() -> None:
    doc = load(RULES)
    assert set(doc) == {"apiVersion", "groups"}
    for group in doc["groups"]:
        assert group["orgId"] == 1 and group["name"] and group["folder"] == "Lavos"
        # A rule's `for` is a multiple of its group's interval, and Grafana evaluates every 10 s at best.
        assert _duration_s(group["interval"]) >= 10
        for rule in group["rules"]:
            assert _duration_s(rule["for"]) % _duration_s(group["interval"]) == 0, rule["uid"]
    assert set(rule_ids()) == ASKED and len(rule_ids()) == len(set(rule_ids()))


@pytest.mark.parametrize("uid", sorted(ASKED))
def test_each_rule_is_complete(uid: str) -> None:
    rule = by_uid(uid)
    assert set(rule) >= RULE_KEYS, RULE_KEYS - set(rule)
    assert len(uid) <= 40 and re.fullmatch(r"[a-zA-Z0-9_-]+", uid)  # Grafana's limit on a uid
    assert rule["noDataState"] in NO_DATA_STATES and rule["execErrState"] in EXEC_ERR_STATES
    refs = [q["refId"] for q in rule["data"]]
    assert len(refs) == len(set(refs)) and rule["condition"] in refs
    for q in rule["data"]:
        assert q["model"]["refId"] == q["refId"]
        assert {"from", "to"} == set(q["relativeTimeRange"])
        if q["datasourceUid"] == EXPRESSION_UID:
            model = q["model"]
            assert model["type"] in EXPRESSION_TYPES and model["expression"] in refs and model["expression"] != q["refId"]
            if model["type"] == "threshold":
                (cond,) = model["conditions"]
                assert cond["evaluator"]["type"] in {"gt", "lt", "within_range", "outside_range"}
                assert all(isinstance(p, int | float) for p in cond["evaluator"]["params"])
        else:
            assert q["relativeTimeRange"]["from"] > q["relativeTimeRange"]["to"] >= 0
    # The condition is the threshold that ends the chain.
    condition = next(q for q in rule["data"] if q["refId"] == rule["condition"])
    assert condition["datasourceUid"] == EXPRESSION_UID and condition["model"]["type"] == "threshold"


@pytest.mark.parametrize("uid", sorted(ASKED))
def test_each_rule_queries_the_provisioned_datasource(uid: str) -> None:
    (ds,) = load(DATASOURCES)["datasources"]
    queries = [q for q in by_uid(uid)["data"] if q["datasourceUid"] != EXPRESSION_UID]
    assert queries and all(q["datasourceUid"] == ds["uid"] for q in queries)
    # The provisioned datasource speaks Flux: every query is Flux reading the datasource's bucket.
    assert ds["jsonData"]["version"] == "Flux"
    assert all("from(bucket: v.defaultBucket)" in q["model"]["query"] for q in queries)


@pytest.mark.parametrize("uid", sorted(ASKED))
def test_each_rule_speaks_slovak_and_english(uid: str) -> None:
    rule = by_uid(uid)
    assert rule["labels"]["severity"] in {"critical", "warning"}
    assert rule["labels"]["hours"] == "open"  # muted while closed: see test_closed_hours_mute_the_rules
    notes = rule["annotations"]
    assert set(notes) >= LANGUAGE_ANNOTATIONS
    assert all(notes[k].strip() for k in LANGUAGE_ANNOTATIONS)
    assert SLOVAK_LETTERS.search(notes["summary"] + notes["description"]), "the Slovak text has no Slovak letter"
    assert not SLOVAK_LETTERS.search(notes["summary_en"] + notes["description_en"])
    if "table" in "".join(flux(rule)):
        # A table's alert names the table: the label Grafana takes from the query's group key.
        assert all("{{ $labels.table }}" in notes[k] for k in ("summary", "summary_en"))


@pytest.mark.parametrize("uid", sorted(ASKED))
def test_queries_name_only_what_the_hub_writes(uid: str) -> None:
    schema = written_schema()
    for query in flux(by_uid(uid)):
        measurements = set(re.findall(r'r\._measurement\s*==\s*"([^"]+)"', query))
        fields = set(re.findall(r'r\._field\s*==\s*"([^"]+)"', query))
        assert measurements and fields, "a query must pick its measurement and field"
        assert measurements <= set(schema), measurements - set(schema)
        assert fields <= set().union(*(schema[m][1] for m in measurements))
        # Each measurement the query names carries each field it names alongside it.
        for m, f in re.findall(r'r\._measurement\s*==\s*"([^"]+)"[^|]*?r\._field\s*==\s*"([^"]+)"', query):
            assert f in schema[m][1], (m, f)
        tags = set().union(*(schema[m][0] for m in measurements))
        used = set(re.findall(r"\br\.([A-Za-z_][A-Za-z0-9_]*)", query))
        for cols in re.findall(r"columns:\s*\[([^\]]*)\]", query):
            used |= set(re.findall(r'"([^"]+)"', cols))
        assert used - FLUX_COLUMNS - OWN_COLUMNS <= tags, used - FLUX_COLUMNS - OWN_COLUMNS - tags


def test_no_dollar_outside_annotations_but_environment_secrets() -> None:
    """Grafana expands $NAME in every field but annotations: a `$labels` in a label or a query
    would silently become empty (grafana/grafana#70484), and a secret is only ever a reference."""
    for rule in rules():
        outside = yaml.safe_dump({k: v for k, v in rule.items() if k != "annotations"})
        assert "$" not in outside, rule["uid"]
    text = yaml.safe_dump(load(NOTIFICATIONS))  # the values Grafana reads, not the comments
    assert "$" not in ENV_REF.sub("", text)


def test_notifications_reach_the_managers_targets_with_secrets_from_the_environment() -> None:
    doc = load(NOTIFICATIONS)
    (point,) = doc["contactPoints"]
    receivers = {r["type"]: r for r in point["receivers"]}
    assert set(receivers) == {"webhook", "email"}
    assert len({r["uid"] for r in point["receivers"]}) == len(point["receivers"])
    hook = receivers["webhook"]["settings"]
    assert hook["url"] == "${LAVOS_ALERT_NTFY_URL}" and hook["httpMethod"] == "POST"
    assert receivers["email"]["settings"]["addresses"] == "${LAVOS_ALERT_EMAIL}"
    assert all(r["disableResolveMessage"] is False for r in point["receivers"])  # the resolved follow-up
    # Every variable the files use is documented for whoever sets up Grafana.
    readme = README.read_text(encoding="utf-8")
    for name in set(ENV_REF.findall(NOTIFICATIONS.read_text(encoding="utf-8"))):
        assert name in readme, f"{name} is not documented in deploy/grafana/README.md"


def test_the_policy_routes_every_rule_to_the_contact_point() -> None:
    doc = load(NOTIFICATIONS)
    names = {c["name"] for c in doc["contactPoints"]}
    (root,) = doc["policies"]
    assert root["orgId"] == 1 and root["receiver"] in names
    assert "table" in root["group_by"] and "alertname" in root["group_by"]
    for key in ("group_wait", "group_interval", "repeat_interval"):
        _duration_s(root[key])
    for route in root["routes"]:
        assert route["receiver"] in names


def test_closed_hours_mute_the_rules() -> None:
    doc = load(NOTIFICATIONS)
    mutes = {m["name"]: m for m in doc["muteTimes"]}
    (route,) = load(NOTIFICATIONS)["policies"][0]["routes"]
    assert route["object_matchers"] == [["hours", "=", "open"]]
    assert set(route["mute_time_intervals"]) <= set(mutes)
    (interval,) = mutes["lavos-closed"]["time_intervals"]
    assert interval["location"] == "Europe/Bratislava"
    (span,) = interval["times"]
    start, end = (datetime.strptime(span[k], "%H:%M") for k in ("start_time", "end_time"))
    # Muted only while the shipped venue is closed (its [hours] default, e.g. 16:00-00:00), with
    # a margin after closing for the last games and before opening for the staff.
    default = tomllib.loads(VENUE.read_text(encoding="utf-8"))["hours"]["default"]
    opens, closes = (datetime.strptime(default[k], "%H:%M") for k in ("open", "close"))
    assert closes + timedelta(minutes=30) <= start < end <= opens


def test_the_series_the_rules_read_exist_once_a_real_writer_wrote_them(victoria, tmp_path) -> None:
    """A real MetricsWriter against a real VictoriaMetrics (which stores field f of measurement m
    as the series m_f): every (measurement, field) the rules read is there, with its table tag."""
    from broker.adapters.metrics import MetricsWriter

    wanted: set[tuple[str, str]] = set()
    for rule in rules():
        for query in flux(rule):
            for m, f in re.findall(r'r\._measurement\s*==\s*"([^"]+)"[^|]*?r\._field\s*==\s*"([^"]+)"', query):
                wanted.add((m, f))
            for ms, f in re.findall(r'\(((?:r\._measurement == "[^"]+"(?: or )?)+)\) and r\._field == "([^"]+)"', query):
                wanted |= {(m, f) for m in re.findall(r'"([^"]+)"', ms)}
    assert ("goal", "count") in wanted and ("node", "outbox") in wanted
    at = datetime.now(UTC).replace(microsecond=0)
    with MetricsWriter(victoria.url, "token", "lavos", "lavos", tmp_path) as w:
        w.node("alert-pool-01", 12.5, 3, 48.0, 0, at)
        w.light("alert-pool-01", True, at)
        w.pocket("alert-pool-01", 2, at)
        w.goal("alert-foos-01", "home", at)
        assert w.flush()
    found = {(name, labels.get("table")) for name, labels, _, _ in victoria.samples("(node|light|pocket|goal)_.+")}
    for m, f in sorted(wanted):
        assert any(name == f"{m}_{f}" and table and table.startswith("alert-") for name, table in found), (m, f)
