"""The monitoring a club installs, run on the real servers: VictoriaMetrics and vmalert from
Debian's victoria-metrics package, started with the shipped settings, after a simulated evening.

- The evening: an in-process hub on a clock the test moves (no MQTT: the nodes' messages go to its
  ingest as the link would hand them over), writing its metrics with its own MetricsWriter to
  VictoriaMetrics started with deploy/vmalert/victoria-metrics.default. Games (one paused, one a
  member's, one still running), ball drops, foosball goals, a refused message, balls without a
  game, telemetry from every table.
- The dashboard: every query of every panel, read from deploy/grafana/dashboards/lavos.json,
  runs as Grafana's Prometheus datasource would run it (its variables substituted, a range query's
  start and end aligned to the step in the dashboard's time zone) and must return the figures the
  hub itself reports for the same evening (the reports page's figures, the monitoring page's
  drops per pocket and node rows, the alert history). Grafana itself is not installed here
  (Debian has no package of it); its provisioning files' shape is checked in test_grafana.py.
- The alert rules: deploy/vmalert/lavos-rules.yml loaded into a real vmalert (the shipped unit's
  flags, `for` shortened to nothing and a 1 s evaluation), its notifier the hub's own
  /api/monitoring route with a real API token: each rule fires for its cause, becomes a hall alert
  pushed to a webhook target of the hub's, and resolves after it ("Vyriešené: …").
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import subprocess
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone
from functools import partial
from pathlib import Path
from time import monotonic
from typing import Any, Literal

import httpx
import pytest
import yaml

from broker.accounts.users import create_user, issue_token, new_password
from broker.adapters.inbox import Inbound
from broker.adapters.metrics import MetricsWriter
from broker.adapters.notify import Notifier
from broker.compose import open_store
from broker.domain.floor import game_ops
from broker.domain.schedule import business_day, business_day_bounds
from broker.domain.venue import load_venue
from broker.floor.games import PauseGame, ResumeGame, StartGame, StopGame
from broker.floor.table_service import CheckInFoosball
from broker.hall.facade import HubFacade
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from broker.people.members import AddMember, RecordFee
from dashboard.api import create_app
from dashboard.web.pages_monitoring import sensor_health
from devices import contract
from sim.mosquitto import free_port
from tests.notify.receivers import Webhook
from tests.support.hub import REPO, VENUE, new_hub, on_writer
from tests.support.sqlite_template import CHEAP, migrated_sqlite
from tests.support.victoria import VMALERT, VictoriaMetrics, shipped_vm_flags, shipped_vmalert_flags
from tests.support.waiting import wait_until
from tests.support.web import serving_app

DASHBOARD = REPO / "deploy" / "grafana" / "dashboards" / "lavos.json"
DATASOURCE = REPO / "deploy" / "grafana" / "provisioning" / "datasources" / "lavos-victoriametrics.yaml"
RULES = REPO / "deploy" / "vmalert" / "lavos-rules.yml"
VENUE_TZ = load_venue(VENUE).tz
TABLES = [t.id for t in load_venue(VENUE).tables]
MAX_POINTS = 1000  # Grafana's maxDataPoints: the panel's width in pixels, about this on a desktop
# Test-only: a sample is seen by queries 1 s after it was written, not 30 s (VictoriaMetrics'
# -search.latencyOffset), so the rules react to the causes the test sets up at once.
TEST_FLAGS = ("-search.latencyOffset=1s",)


# -- a clock the test moves, then lets run ----------------------------------------------------


class EveningClock:
    """The hub's clock: set by the test through the evening, then following the real time (for the
    rules, which vmalert evaluates now)."""

    def __init__(self, start: datetime) -> None:
        self._at: datetime | None = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._at if self._at is not None else datetime.now(UTC)

    def set(self, at: datetime) -> None:
        with self._lock:
            self._at = at

    def run_real(self) -> None:
        with self._lock:
            self._at = None


# -- the nodes' messages, as the hub's link hands them over -----------------------------------


class Nodes:
    """Every table's node: its boot, event numbers, uptime; messages stamped by the evening's clock."""

    def __init__(self, hub: Any, clock: EveningClock, start: datetime) -> None:
        self.hub, self.clock, self.start = hub, clock, start
        self.seq: Counter[str] = Counter()
        self.mid = 0

    def deliver(self, messages: list[tuple[str, bytes]]) -> None:
        inbound = []
        for topic, payload in messages:
            self.mid += 1
            inbound.append(Inbound(topic, payload, self.mid, 1, monotonic()))
        self.hub.run_on_writer(lambda: self.hub.handlers.apply_batch(inbound))

    def online(self, table: str) -> tuple[str, bytes]:
        return contract.status_topic(table), contract.encode(contract.Status(state="online", boot=f"boot-{table}", version="1.0"))

    def light(self, table: str, on: bool, cause: contract.LightCause = "command") -> tuple[str, bytes]:
        return contract.light_state_topic(table), contract.encode(contract.LightState(on=on, cause=cause))

    def telemetry(self, table: str, i: int) -> tuple[str, bytes]:
        uptime = (self.clock() - self.start).total_seconds() + 60 + i
        tm = contract.Telemetry(uptime_s=uptime, cpu_temp_c=None if table == "darts-01" else 44.5 + i / 2, outbox=i % 3, reconnects=i % 4)
        return contract.telemetry_topic(table), contract.encode(tm)

    def _event(self, table: str, kind: str, data: Any, model: Any) -> tuple[str, bytes]:
        self.seq[table] += 1
        ev = model(v=1, table=table, type=kind, boot=f"boot-{table}", seq=self.seq[table], ts=self.clock(), ts_synced=True, data=data)
        return contract.event_topic(table, kind), contract.encode(ev)

    def drop(self, table: str, pocket: int) -> tuple[str, bytes]:
        return self._event(table, "pocket", contract.PocketData(pocket=pocket, pulse_ms=22.0), contract.PocketEvent)

    def goal(self, table: str, side: Literal["home", "away"]) -> tuple[str, bytes]:
        return self._event(table, "goal", contract.GoalData(side=side), contract.GoalEvent)


# -- the evening ------------------------------------------------------------------------------


@dataclass
class Evening:
    """The hub, the store it wrote, and what the hub itself reports about the evening."""

    hub: Any
    clock: EveningClock
    metrics: MetricsWriter
    vm: VictoriaMetrics
    nodes: Nodes
    start: datetime  # the evening's first minute
    end: datetime  # its last (the hub's figures are as of then)
    day: date  # the business day it belongs to
    figures: dict[str, Any] = field(default_factory=dict)


def evening_span(now: datetime) -> tuple[datetime, datetime]:
    """3 h 45 min ending 15 min ago (nothing reported since: the rules have something to say), in
    one business day (before the 06:00 cut if ending now would cross it)."""
    end = (now - timedelta(minutes=15)).replace(second=0, microsecond=0)
    start = end - timedelta(minutes=225)
    if business_day(start, load_venue(VENUE)) != business_day(end, load_venue(VENUE)):
        end = business_day_bounds(business_day(end, load_venue(VENUE)), load_venue(VENUE))[0] - timedelta(minutes=1)
        start = end - timedelta(minutes=225)
    return start, end


def play(ev: Evening) -> None:
    """The evening, minute by minute: each step sets the hub's clock, then does what happens then."""
    hub, nodes, clock = ev.hub, ev.nodes, ev.clock
    games: dict[str, int] = {}
    member = hub.execute(AddMember(name="Kováč Peter", actor="boss")).id
    script: dict[float, list[Callable[[], None]]] = defaultdict(list)

    def at(minute: float, fn: Callable[[], None]) -> None:
        script[minute].append(fn)

    def start(table: str, **kw: Any) -> None:
        games[table] = hub.execute(StartGame(table=table, actor="jana", **kw))
        nodes.deliver([nodes.light(table, True)])

    def stop(table: str) -> None:
        hub.execute(StopGame(game=games.pop(table), actor="jana"))
        nodes.deliver([nodes.light(table, False)])

    def pause(table: str, resume: bool = False) -> None:
        hub.execute((ResumeGame if resume else PauseGame)(game=games[table], actor="jana"))
        nodes.deliver([nodes.light(table, resume)])

    def drops(table: str, first: float, last: float, n: int) -> None:
        # Never on a whole minute, so never on an hour's edge: there VictoriaMetrics' window (t - 1h, t]
        # and the report's hour [t, t + 1h) would each count a ball dropped at exactly 19:00:00.000.
        for k in range(n):
            when = math.floor(first + (last - first) * k / n) + (17 + k % 30) / 60
            at(when, partial(lambda k: nodes.deliver([nodes.drop(table, k % 6)]), k))

    at(0, lambda: nodes.deliver([m for t in TABLES for m in (nodes.online(t), nodes.light(t, False, "boot"))]))
    for minute in range(0, 225, 15):
        at(minute + 0.5, lambda: nodes.deliver([nodes.telemetry(t, i) for i, t in enumerate(TABLES)]))
    at(1, lambda: hub.execute(RecordFee(member_id=member, year=HubFacade(hub).reads.fee_year(), actor="boss")))
    at(10, lambda: start("pool-01"))
    drops("pool-01", 11, 99, 40)
    at(100, lambda: stop("pool-01"))
    at(20, lambda: start("pool-08", member_id=member))  # a club-card table: the member's rate
    drops("pool-08", 21, 129, 30)
    at(50, lambda: pause("pool-08"))
    at(60, lambda: pause("pool-08", resume=True))
    at(130, lambda: stop("pool-08"))
    at(30, lambda: start("pool-03"))
    drops("pool-03", 31, 74, 20)
    at(75, lambda: stop("pool-03"))
    at(40, lambda: start("carom-01"))
    at(101, lambda: stop("carom-01"))
    at(110, lambda: start("pool-01"))
    drops("pool-01", 111, 169, 25)
    at(170, lambda: stop("pool-01"))
    at(160, lambda: start("pool-07"))  # still played at the end: lit, its last ball 50 minutes before
    drops("pool-07", 161, 175, 10)
    drops("pool-05", 140, 142, 5)  # balls without a game: the hub's play_without_session
    at(50, lambda: hub.execute(CheckInFoosball(table="foos-01", member_id=member, actor="jana")))
    for k in range(12):
        at(51 + k * 1.5, partial(lambda k: nodes.deliver([nodes.goal("foos-01", "home" if k % 3 else "away")]), k))
    at(80, lambda: nodes.deliver([(contract.event_topic("pool-04", "pocket"), b'{"not": "an event"}')]))  # refused
    for when in sorted(script):
        clock.set(ev.start + timedelta(minutes=when))
        for fn in script[when]:
            fn()
    clock.set(ev.end)


def hub_figures(ev: Evening) -> dict[str, Any]:
    """What the hub itself reports about the evening: its reports page, its monitoring page, its alerts."""
    reads = HubFacade(ev.hub).reads
    period = reads.reports.period_figures(ev.day, ev.day, [ev.day])
    # Minutes played by the games stopped (a game's metric point is written when it stops): the
    # hours grid less what the games still open have played so far.
    minutes: Counter[str] = Counter()
    for table, cells in period.utilisation[0].tables.items():
        minutes[table] += sum(cells)
    for table, g in ev.hub.open.items():
        minutes[table] -= sum(int((s.end - s.start).total_seconds()) for s in game_ops.segments(g.state, ev.hub.venue, ev.end))
    assert all(s % 60 == 0 for s in minutes.values()), "the evening's games are whole minutes"
    minutes = Counter({t: s // 60 for t, s in minutes.items()})
    billed_by_table: Counter[str] = Counter()
    for g in period.stopped:
        billed_by_table[g.table] += g.total_cents or 0
    hours = period.drops[0]
    # Each hour's bar stands at its start (the panels look an hour ahead: `[1h] offset -1h`), so the
    # hour still running when the range ends has its bar too.
    drops_per_hour = {(t, hours.hours[i]): n for t, cells in hours.tables.items() for i, n in enumerate(cells) if n}
    per_pocket = {(h.table, str(p)): n for h in sensor_health(reads) for p, n in enumerate(h.pockets) if n}
    nodes = {n.table: n for n in reads.floor.node_statuses() if n.telemetry_at is not None}
    rejects = {(t, reason): c.count for t, r in reads.floor.node_rejects().items() for reason, c in r.by_reason.items()}
    alerts = Counter(a.kind for a in reads.floor.alert_history(None, 1000) if ev.start <= a.opened_at <= ev.end)
    return {
        "games": period.table_time.games,
        "billed_cents": period.table_time.total_cents,
        "by_tariff": dict(period.table_time.by_tariff),
        "billed_by_table": dict(billed_by_table),
        "minutes": dict(minutes),
        "drops_per_hour": drops_per_hour,
        "per_pocket": per_pocket,
        "goals": sum(u.goals for u in period.foosball),
        "nodes": nodes,
        "rejects": rejects,
        "alerts": dict(alerts),
    }


@pytest.fixture(scope="module")
def vm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VictoriaMetrics]:
    """VictoriaMetrics as the hall runs it (the shipped ARGS), and one test-only flag."""
    v = VictoriaMetrics(tmp_path_factory.mktemp("vm"), flags=shipped_vm_flags() + TEST_FLAGS).start()
    yield v
    v.stop()


@pytest.fixture(scope="module")
def evening(vm: VictoriaMetrics, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evening]:
    workdir = tmp_path_factory.mktemp("evening")
    start, end = evening_span(datetime.now(UTC))
    clock = EveningClock(start)
    venue = load_venue(VENUE)
    store = open_store(migrated_sqlite(workdir / "hub.db"), venue=venue)
    metrics = MetricsWriter(vm.url, "unused", "lavos", "lavos", workdir / "spool", flush_interval=0.1, retry_initial=0.1, retry_max=0.5)
    hub = new_hub(store, venue=venue, metrics=metrics, clock=clock, data_dir=workdir)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Notifier, "poll_s", 0.1)
        mp.setattr(Notifier, "backoff_s", (0.2,))
        hub.start()
        hub.watchdog.stop()  # its rounds would act on the jumping clock; the evening is the script's
        try:
            ev = Evening(hub, clock, metrics, vm, Nodes(hub, clock, start), start, end, business_day(start, venue))
            play(ev)
            assert metrics.flush(), metrics.stats()
            ev.figures = hub_figures(ev)
            # A series VictoriaMetrics has just created may be found by a search a moment after its
            # samples are stored (its index is written apart from them): a loaded run once missed the
            # one hour pool-07 had drops in. Every drop the hub counted is searchable before a panel asks.
            drops = sum(ev.figures["per_pocket"].values())
            wait_until(lambda: sum(len(s["values"]) for s in vm.export("pocket_count")) == drops, what=f"{drops} drops searchable")
            yield ev
        finally:
            hub.close()  # closes the metrics writer too
            store.close()


# -- Grafana's Prometheus datasource, as far as the queries go --------------------------------


def dashboard() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return result


def panels() -> list[dict[str, Any]]:
    out = []
    for p in dashboard()["panels"]:
        out += [p, *p.get("panels", [])]  # a collapsed row holds its panels
    return [p for p in out if p["type"] != "row"]


def _seconds(text: str) -> int:
    m = re.fullmatch(r"(\d+)([smhd])", text)
    assert m, f"{text!r} is not an interval like 30s, 1h, 1d"
    return int(m[1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]


def _regex_escape(value: str) -> str:
    """Grafana's prometheusSpecialRegexEscape, for a value of a multi-value variable."""
    return re.sub(r"([\\^$*+?.()|\[\]{}])", r"\\\\\1", value)


def table_value(selected: list[str] | None) -> str:
    """$table as Grafana writes it into a query: All is its allValue; a choice is (a|b)."""
    var = next(v for v in dashboard()["templating"]["list"] if v["name"] == "table")
    if selected is None:
        result: str = var["allValue"]
        return result
    return "(" + "|".join(_regex_escape(v) for v in selected) + ")" if len(selected) > 1 else _regex_escape(selected[0])


@dataclass(frozen=True)
class Grafana:
    """A dashboard time range [start, end] and the table choice; runs a panel's targets on VictoriaMetrics."""

    vm_url: str
    start: datetime
    end: datetime
    tables: list[str] | None = None

    def utc_offset_s(self) -> int:
        offset = self.start.astimezone(VENUE_TZ).utcoffset()
        assert offset is not None
        return int(offset.total_seconds())

    def step_s(self, panel: dict[str, Any], target: dict[str, Any]) -> int:
        """$__interval: the target's or panel's minimum (else the datasource's), or the range over the points if longer."""
        floor = (
            target.get("interval")
            or panel.get("interval")
            or yaml.safe_load(DATASOURCE.read_text())["datasources"][0]["jsonData"]["timeInterval"]
        )
        return max(_seconds(floor), math.ceil((self.end - self.start).total_seconds() / MAX_POINTS))

    def expr(self, panel: dict[str, Any], target: dict[str, Any]) -> str:
        range_s = round((self.end - self.start).total_seconds())
        text = target["expr"].replace("$__range", f"{range_s}s").replace("$__interval", f"{self.step_s(panel, target)}s")
        text = text.replace("${table:regex}", table_value(self.tables)).replace("$table", table_value(self.tables))
        assert "$" not in text, f"{panel['title']}: a variable Grafana would fill in is left: {text}"
        result: str = text
        return result

    def run(self, panel: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """Every target of the panel: refId -> VictoriaMetrics' result (instant: a vector; range: a matrix)."""
        out = {}
        for t in panel["targets"]:
            assert t["datasource"]["uid"] == "lavos-metrics"
            expr = self.expr(panel, t)
            if t.get("instant"):
                r = httpx.post(f"{self.vm_url}/api/v1/query", data={"query": expr, "time": self.end.timestamp()}, timeout=30)
            else:
                step = self.step_s(panel, t)
                off = self.utc_offset_s()
                start = (math.floor((self.start.timestamp() + off) / step) * step) - off  # aligned in the dashboard's zone
                end = (math.floor((self.end.timestamp() + off) / step) * step) - off
                r = httpx.post(
                    f"{self.vm_url}/api/v1/query_range", data={"query": expr, "start": start, "end": end, "step": step}, timeout=30
                )
            assert r.status_code == 200, f"{panel['title']} {t['refId']}: {r.status_code} {r.text}\n{expr}"
            body = r.json()
            assert body["status"] == "success", body
            out[t["refId"]] = body["data"]["result"]
        return out


def instant(result: list[dict[str, Any]], *labels: str) -> dict[Any, float]:
    """An instant vector as {label values: value} (a single series without labels: {(): value})."""
    return {tuple(s["metric"].get(k, "") for k in labels) if labels else (): float(s["value"][1]) for s in result}


def points(result: list[dict[str, Any]], *labels: str) -> dict[Any, dict[datetime, float]]:
    return {
        tuple(s["metric"].get(k, "") for k in labels): {datetime.fromtimestamp(ts, UTC): float(v) for ts, v in s["values"]} for s in result
    }


def last_points(result: list[dict[str, Any]]) -> dict[str, float]:
    return {s["metric"]["table"]: float(s["values"][-1][1]) for s in result}


def midnight(day: date) -> datetime:
    """The per-day panels' point for business day `day`: its local midnight, as Grafana aligns a 1d
    step, with the zone's offset at the range's start (the day's 06:00; on a DST day it differs)."""
    offset = datetime.combine(day, time(6), VENUE_TZ).utcoffset()
    assert offset is not None
    return datetime.combine(day, time(0), timezone(offset)).astimezone(UTC)


# -- the panels, each checked against what the hub reports ------------------------------------

Check = Callable[[Evening, dict[str, Any], dict[str, list[dict[str, Any]]]], None]
CHECKS: dict[int, Check] = {}


def checks(*panel_ids: int) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        for pid in panel_ids:
            CHECKS[pid] = fn
        return fn

    return register


@checks(2)
def _games(ev: Evening, panel: Any, r: Any) -> None:
    assert instant(r["A"]) == {(): ev.figures["games"]} and ev.figures["games"] == 5


@checks(3)
def _minutes(ev: Evening, panel: Any, r: Any) -> None:
    assert instant(r["A"]) == {(): sum(ev.figures["minutes"].values())}


@checks(4)
def _billed(ev: Evening, panel: Any, r: Any) -> None:
    assert instant(r["A"]) == {(): ev.figures["billed_cents"] / 100}


@checks(5)
def _balls(ev: Evening, panel: Any, r: Any) -> None:
    assert instant(r["A"]) == {(): sum(ev.figures["per_pocket"].values())}


@checks(7)
def _billed_per_day_by_tariff(ev: Evening, panel: Any, r: Any) -> None:
    series = points(r["A"], "tariff")
    on_the_day = {tariff: round(values.get(midnight(ev.day), 0) * 100) for (tariff,), values in series.items()}
    assert on_the_day == ev.figures["by_tariff"] and len(on_the_day) == 2  # standard and the member's club card
    for (tariff,), values in series.items():  # no other day holds anything
        assert all(v == 0 for t, v in values.items() if t != midnight(ev.day)), tariff


@checks(8)
def _billed_by_table(ev: Evening, panel: Any, r: Any) -> None:
    assert {t: round(v * 100) for (t,), v in instant(r["A"], "table").items()} == ev.figures["billed_by_table"]


@checks(10)
def _minutes_per_day(ev: Evening, panel: Any, r: Any) -> None:
    got = {t: v.get(midnight(ev.day)) for (t,), v in points(r["A"], "table").items()}
    assert got == {t: m for t, m in ev.figures["minutes"].items() if m}


@checks(11)
def _lights(ev: Evening, panel: Any, r: Any) -> None:
    want = {t: float(n.light_on) for t, n in ev.figures["nodes"].items()}
    assert last_points(r["A"]) == want and want["pool-07"] == 1.0


@checks(13)
def _drops_per_hour(ev: Evening, panel: Any, r: Any) -> None:
    got = {(t, at): v for (t,), values in points(r["A"], "table").items() for at, v in values.items() if v}
    assert got == ev.figures["drops_per_hour"]


@checks(14)
def _per_pocket(ev: Evening, panel: Any, r: Any) -> None:
    assert instant(r["A"], "table", "pocket") == ev.figures["per_pocket"]


@checks(15)
def _goals(ev: Evening, panel: Any, r: Any) -> None:
    assert sum(v for s in points(r["A"], "table", "side").values() for v in s.values()) == ev.figures["goals"] == 12


@checks(17)
def _modules_now(ev: Evening, panel: Any, r: Any) -> None:
    nodes = ev.figures["nodes"]
    assert len(nodes) == len(TABLES)
    lag = instant(r["A"], "table")
    for t, n in nodes.items():
        assert abs(lag[(t,)] - (ev.end - n.telemetry_at).total_seconds()) < 1, t
    assert instant(r["B"], "table") == {(t,): n.uptime_s for t, n in nodes.items()}
    assert instant(r["C"], "table") == {(t,): n.telemetry["outbox"] for t, n in nodes.items()}
    assert instant(r["D"], "table") == {(t,): n.cpu_temp_c for t, n in nodes.items() if n.cpu_temp_c is not None}
    assert instant(r["E"], "table") == {(t,): n.reconnects for t, n in nodes.items()}


@checks(18, 19, 20, 21)
def _node_series(ev: Evening, panel: Any, r: Any) -> None:
    (target,) = panel["targets"]
    (name,) = re.findall(r"\bnode_(\w+)\{", target["expr"])  # the telemetry field the panel shows
    want = {t: float(n.telemetry[name]) for t, n in ev.figures["nodes"].items() if n.telemetry.get(name) is not None}
    assert last_points(r["A"]) == want and want


@checks(22)
def _rejects(ev: Evening, panel: Any, r: Any) -> None:
    assert instant(r["A"], "table", "reason") == ev.figures["rejects"] and ev.figures["rejects"]


@checks(24)
def _alerts_per_hour(ev: Evening, panel: Any, r: Any) -> None:
    got: Counter[str] = Counter()
    for (kind,), values in points(r["A"], "kind").items():
        got[kind] += round(sum(values.values()))
    assert dict(got) == ev.figures["alerts"] and ev.figures["alerts"] == {"play_without_session": 1}


@checks(25)
def _alerts_by_kind(ev: Evening, panel: Any, r: Any) -> None:
    assert instant(r["A"], "kind") == {(k,): n for k, n in ev.figures["alerts"].items()}


@pytest.mark.parametrize("panel", panels(), ids=lambda p: f"{p['id']}-{p['title'].split(' / ')[-1]}")
def test_every_panel_shows_what_the_hub_reports(evening: Evening, panel: Any) -> None:
    grafana = Grafana(evening.vm.url, business_day_bounds(evening.day, load_venue(VENUE))[0], evening.end)
    assert panel["id"] in CHECKS, f"panel {panel['id']} ({panel['title']}) has no check here: add one"
    CHECKS[panel["id"]](evening, panel, grafana.run(panel))


def test_choosing_tables_narrows_the_panels(evening: Evening) -> None:
    grafana = Grafana(evening.vm.url, business_day_bounds(evening.day, load_venue(VENUE))[0], evening.end, ["pool-01", "pool-08"])
    by_id = {p["id"]: p for p in panels()}
    assert instant(grafana.run(by_id[8])["A"], "table") == {
        (t,): c / 100 for t, c in evening.figures["billed_by_table"].items() if t in ("pool-01", "pool-08")
    }
    assert instant(grafana.run(by_id[2])["A"]) == {(): 3.0}  # pool-01 twice, pool-08 once


def test_the_table_variable_lists_every_table_that_reported(evening: Evening) -> None:
    var = next(v for v in dashboard()["templating"]["list"] if v["name"] == "table")
    (label,) = re.findall(r"^label_values\((\w+)\)$", var["definition"])
    r = httpx.get(f"{evening.vm.url}/api/v1/label/{label}/values", timeout=10)
    assert set(r.json()["data"]) >= set(TABLES)


# -- the rules, in a real vmalert, through the hub --------------------------------------------


@contextlib.contextmanager
def running_vmalert(workdir: Path, vm_url: str, hub_url: str, token: str) -> Iterator[str]:
    """vmalert with the shipped unit's flags; the rules' `for` shortened to nothing, a 1 s
    evaluation, and the test's addresses and token file."""
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    for group in rules["groups"]:
        group["interval"] = "1s"
        for rule in group["rules"]:
            rule["for"] = "0s"
    (workdir / "rules.yml").write_text(yaml.safe_dump(rules, allow_unicode=True), encoding="utf-8")
    (workdir / "token").write_text(token + "\n")
    port = free_port()
    flags = shipped_vmalert_flags() | {
        "rule": str(workdir / "rules.yml"),
        "datasource.url": vm_url,
        "notifier.url": hub_url + "/api/monitoring",
        "notifier.bearerTokenFile": str(workdir / "token"),
        "httpListenAddr": f"127.0.0.1:{port}",
        "evaluationInterval": "1s",
        "loggerLevel": "INFO",
    }
    with open(workdir / "vmalert.log", "ab") as log:
        proc = subprocess.Popen([str(VMALERT), *(f"-{k}={v}" for k, v in flags.items())], stdout=log, stderr=log)
    try:
        wait_until(lambda: _healthy(port) or proc.poll() is not None, timeout=20, what="vmalert up")
        assert proc.poll() is None, (workdir / "vmalert.log").read_text()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).text == "OK"
    except httpx.TransportError:
        return False


def rule_alerts(hub: Any) -> dict[tuple[str, str | None], Any]:
    """The hub's open alerts of the monitoring rules: (rule, table) -> alert."""
    out = {}
    for a in HubFacade(hub).reads.floor.open_alerts():
        if a.kind == "monitoring":
            _, rule, *table = a.cause_key.split(":")
            out[(rule, table[0] if table else None)] = a
    return out


def wait_alerts(hub: Any, want: set[tuple[str, str | None]]) -> None:
    """Until the hub's open rule alerts are `want` (vmalert evaluates every second)."""
    try:
        wait_until(lambda: set(rule_alerts(hub)) == want, timeout=30)
    except AssertionError:
        raise AssertionError(
            f"the hub's open rule alerts are {sorted(set(rule_alerts(hub)), key=str)}, not {sorted(want, key=str)}"
        ) from None


def test_every_rule_fires_for_its_cause_and_resolves_through_the_hub(evening: Evening, tmp_path: Path) -> None:
    ev, hub, metrics, vm = evening, evening.hub, evening.metrics, evening.vm
    ev.clock.run_real()  # vmalert evaluates now; the hub compares its alerts' end with its own clock
    assert hub.open.get("pool-07") is not None  # a game runs: the hall is attended whatever the hour of the test
    token = on_writer(hub, lambda db: _monitoring_account(db))
    webhook = Webhook().start()
    hub.execute(SaveNotifySettings(settings=NotifySettings((Target(id="boss", url=webhook.url()),)), actor="boss"))
    try:
        with serving_app(create_app(hub)) as base, running_vmalert(tmp_path, vm.url, base, token):
            # The evening ended 15 minutes ago: every node has gone quiet, nothing reaches the store, and
            # pool-07 has been lit 65 minutes with its last ball 65 minutes ago.
            silent = {("LavosNodeSilent", t) for t in TABLES}
            first = silent | {("LavosIngestStalled", None), ("LavosLitWithoutEvents", "pool-07")}
            wait_alerts(hub, first)
            texts: Callable[[], list[str]] = lambda: [m["message"] for m in webhook.received]  # noqa: E731
            wait_until(lambda: len(texts()) >= len(first), timeout=20, what="a push per alert")
            assert any(t.startswith("Pool 7: stôl svieti vyše 30 minút") for t in texts())
            assert any(t.startswith("Karambol: modul pri stole je odpojený") for t in texts())
            assert any(t.startswith("10 minút neprišli žiadne údaje zo stolov") for t in texts())

            # The nodes report again (pool-03 with 120 events waiting), pool-05's balls drop with its
            # light off, and pool-07 sees a ball.
            now = datetime.now(UTC)
            for i, t in enumerate(TABLES):
                metrics.node(t, 20_000.0, 120 if t == "pool-03" else 0, 45.0, 0, now + timedelta(milliseconds=i))
            for minutes, waiting in ((10, 0), (5, 60)):  # pool-03's reports of the last 15 minutes, as it sends them
                metrics.node("pool-03", 20_000.0 - minutes * 60, waiting, 45.0, 0, now - timedelta(minutes=minutes))
            metrics.pockets([("pool-05", 1, now), ("pool-05", 2, now + timedelta(milliseconds=1)), ("pool-07", 0, now)])
            assert metrics.flush()
            second: set[tuple[str, str | None]] = {("LavosOutboxGrowing", "pool-03"), ("LavosBallsWithoutGame", "pool-05")}
            wait_alerts(hub, second)

            # pool-03's outbox is sent, pool-05's game starts (its light on).
            now = datetime.now(UTC)
            metrics.node("pool-03", 20_010.0, 0, 45.0, 0, now)
            metrics.light("pool-05", True, now)
            assert metrics.flush()
            wait_alerts(hub, set())
            follow_ups: Callable[[], list[str]] = lambda: [t for t in texts() if t.startswith("Vyriešené: ")]  # noqa: E731
            wait_until(lambda: len(follow_ups()) == len(first | second), timeout=20, what="a follow-up per alert")
            assert any(t.startswith("Vyriešené: Pool 3: modulu pribúdajú neodoslané udalosti") for t in texts())
            assert any(t.startswith("Vyriešené: Pool 5: 5 minút padajú gule") for t in texts())
    finally:
        webhook.stop()
    # Every rule of the shipped file has fired and resolved.
    shipped = {r["alert"] for g in yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"] for r in g["rules"]}
    seen = {rule for rule, _ in first | second}
    assert seen == shipped


def _monitoring_account(db: Any) -> str:
    create_user(db, "monitoring", new_password("monitoring-password", CHEAP), "manager", actor="test")
    return issue_token(db, "monitoring", "vmalert", actor="test")
