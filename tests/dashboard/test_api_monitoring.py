"""POST /api/monitoring/api/v2/alerts: vmalert's notifications (Alertmanager's API v2 shape) become
hall alerts (broker.floor.monitoring_rules). In-process: a hub without MQTT, the API on a TestClient.

As an attacker on the club's Wi-Fi would try it: no token, a wrong one, a staff login's, garbage,
too much, and alerts named like the hub's own to close them. And the rules: one open alert per rule
and table however often vmalert repeats it, closed by its resolution, nothing raised while the
hall is shut. tests/deploy/test_monitoring.py runs the same route under a real vmalert.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient

from broker.accounts.users import create_user, issue_token, new_password
from broker.compose import open_store
from broker.domain.floor import alert_kinds
from broker.floor.games import StartGame
from broker.hall.facade import HubFacade
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from tests.dashboard.conftest import FakeClock, basic, bearer
from tests.support.hub import new_hub, on_writer
from tests.support.sqlite_template import CHEAP, migrated_sqlite
from tests.support.web import bound_app

if TYPE_CHECKING:
    from pathlib import Path

    import starlette.testclient

    from broker.hall.hub import Hub


PATH = "/api/monitoring/api/v2/alerts"
PASSWORD = "monitoring-heslo"
# Tuesday 10 November 2026, 18:00 in Bratislava: open (16:00-00:00).
OPEN = datetime(2026, 11, 10, 17, 0, tzinfo=UTC)
SHUT = datetime(2026, 11, 11, 2, 0, tzinfo=UTC)  # 03:00 local: closed three hours ago, opens at 16:00


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(OPEN)


@pytest.fixture
def hub(tmp_path: Path, clock: FakeClock) -> Iterator[Hub]:
    store = open_store(migrated_sqlite(tmp_path / "hub.db"))
    h = new_hub(store, clock=clock, data_dir=tmp_path)
    yield h
    h.close()
    store.close()


@pytest.fixture
def api(hub: Hub) -> Iterator[starlette.testclient.TestClient]:
    def accounts(db: Any) -> tuple[str, str]:
        hashed = new_password(PASSWORD, CHEAP)
        create_user(db, "monitoring", hashed, "manager", actor="test")
        create_user(db, "jana", hashed, "staff", actor="test")
        return issue_token(db, "monitoring", "vmalert", actor="test"), issue_token(db, "jana", "bar", actor="test")

    vmalert, staff = on_writer(hub, accounts)
    with TestClient(bound_app(hub, pages=False)) as client:  # the process's app (its routes built once)
        client.vmalert, client.staff = bearer(vmalert), bearer(staff)
        yield client


def alert(rule: str, table: str | None = "pool-03", *, firing: bool = True, at: datetime = OPEN, **labels: str) -> dict[str, Any]:
    """One alert as vmalert posts it (its fields and their spelling, from a real vmalert 1.79)."""
    ends = at + timedelta(minutes=3) if firing else at - timedelta(seconds=1)
    return {
        "startsAt": (at - timedelta(minutes=5)).isoformat().replace("+00:00", "Z"),
        "endsAt": ends.isoformat().replace("+00:00", "Z"),
        "generatorURL": "http://127.0.0.1:8880/vmalert/api/v1/alert?group_id=1&alert_id=2",
        "labels": {"alertname": rule, "alertgroup": "lavos-hall", "severity": "critical", **({"table": table} if table else {}), **labels},
        "annotations": {"summary": "modul pri stole je odpojený", "summary_en": "the table's module is offline"},
    }


def monitoring_alerts(hub: Any) -> list[Any]:
    return [a for a in HubFacade(hub).reads.floor.alert_history(None, 100) if a.kind == alert_kinds.MONITORING]


def post(api: Any, alerts: list[dict[str, Any]], status: int = 200) -> dict[str, Any]:
    r = api.post(PATH, json=alerts, headers=api.vmalert)
    assert r.status_code == status, r.text
    result: dict[Any, Any] = r.json()
    return result


def test_only_the_monitoring_token_may_post(api: starlette.testclient.TestClient, hub: Hub) -> None:
    body = [alert("LavosNodeSilent")]
    assert api.post(PATH, json=body).status_code == 401  # no token: refused before the body is read
    assert api.post(PATH, json=body, headers=bearer("lavos-not-a-token")).status_code == 401
    assert api.post(PATH, json=body, headers=basic("monitoring", "wrong")).status_code == 401
    assert api.post(PATH, json=body, headers=api.staff).status_code == 403  # the bar's tablet cannot
    assert not monitoring_alerts(hub)
    assert post(api, body) == {"opened": 1, "closed": 0, "held": 0}


@pytest.mark.parametrize(
    "body",
    [
        {"labels": {"alertname": "LavosNodeSilent"}},  # not a list
        [{"annotations": {"summary": "x"}}],  # no labels
        [alert("Lavos:NodeSilent:pool-01")],  # a name that would spell another cause
        [alert("LavosNodeSilent", "pool-01:x")],
        [alert("LavosNodeSilent", "Pool 1")],
        [alert("LavosNodeSilent", severity="page")],
        [alert("LavosNodeSilent") | {"endsAt": "tomorrow"}],
        [alert("LavosNodeSilent") | {"endsAt": "2026-11-10T17:03:00"}],  # no offset: whose 17:03?
        [alert("LavosNodeSilent")] * 501,
        [{**alert("LavosNodeSilent"), "annotations": {"summary": "zlý\x00text"}}],
    ],
    ids=["object", "no-labels", "colon-in-name", "colon-in-table", "space-in-table", "severity", "endsAt", "naive-endsAt", "501", "nul"],
)
def test_garbage_is_a_4xx_and_changes_nothing(api: starlette.testclient.TestClient, hub: Hub, body: Any) -> None:
    r = api.post(PATH, content=json.dumps(body), headers=api.vmalert | {"Content-Type": "application/json"})
    assert r.status_code in (413, 422), r.text
    assert not monitoring_alerts(hub)


def test_a_body_past_the_cap_is_413(api: starlette.testclient.TestClient, hub: Hub) -> None:
    big = [alert("LavosNodeSilent") | {"annotations": {"summary": "x" * 1500}} for _ in range(60)]
    r = api.post(PATH, json=big, headers=api.vmalert)
    assert r.status_code == 413
    assert not monitoring_alerts(hub)


def test_it_cannot_close_or_touch_the_hubs_own_alerts(api: starlette.testclient.TestClient, hub: Hub) -> None:
    on_writer(hub, lambda db: hub.alerts.raise_alert(db, alert_kinds.node_offline("pool-01")))
    post(api, [alert("node_offline", "pool-01", firing=False), alert("node_offline", "pool-01")])
    own = [a for a in HubFacade(hub).reads.floor.open_alerts() if a.kind == "node_offline"]
    assert len(own) == 1 and own[0].count == 1 and own[0].closed_at is None
    (theirs,) = monitoring_alerts(hub)
    assert theirs.cause_key == "rule:node_offline:pool-01" and theirs.closed_at is None


def test_one_alert_per_rule_and_table_however_often_vmalert_repeats_it(
    api: starlette.testclient.TestClient, hub: Hub, clock: FakeClock
) -> None:
    hub.start()
    hub.watchdog.stop()
    hub.execute(SaveNotifySettings(settings=NotifySettings((Target(id="boss", url="json://127.0.0.1:9/hook"),)), actor="boss"))
    for _ in range(3):  # vmalert sends a firing alert at every evaluation
        post(api, [alert("LavosNodeSilent", "pool-03"), alert("LavosIngestStalled", None)])
        clock.advance(minutes=1)
    assert {a.cause_key: (a.table, a.count, a.message) for a in monitoring_alerts(hub)} == {
        "rule:LavosIngestStalled": (None, 1, "modul pri stole je odpojený"),
        "rule:LavosNodeSilent:pool-03": ("pool-03", 1, "Pool 3: modul pri stole je odpojený"),
    }
    pushed: Callable[[], list[str]] = lambda: [m.body for m in hub.notifications.history() if m.key.startswith(("open:", "resolved:"))]  # noqa: E731
    assert sorted(pushed()) == ["Pool 3: modul pri stole je odpojený", "modul pri stole je odpojený"]

    for _ in range(2):  # and a resolution for a while
        assert post(api, [alert("LavosNodeSilent", "pool-03", firing=False, at=clock())])["closed"] in (0, 1)
    assert [a.closed_at is not None for a in sorted(monitoring_alerts(hub), key=lambda a: a.cause_key)] == [False, True]
    assert "Vyriešené: Pool 3: modul pri stole je odpojený" in pushed() and len(pushed()) == 3

    post(api, [alert("LavosNodeSilent", "pool-03", at=clock())])  # it fires again: a new alert
    assert len([a for a in monitoring_alerts(hub) if a.table == "pool-03"]) == 2


def test_nothing_is_raised_while_the_hall_is_shut_but_resolutions_are_taken(
    api: starlette.testclient.TestClient, hub: Hub, clock: FakeClock
) -> None:
    post(api, [alert("LavosNodeSilent", "pool-03")])
    clock.advance(hours=9)  # 03:00: shut
    assert clock() == SHUT
    assert post(api, [alert("LavosNodeSilent", "pool-04", at=SHUT), alert("LavosNodeSilent", "pool-03", firing=False, at=SHUT)]) == {
        "opened": 0,
        "closed": 1,
        "held": 1,
    }
    assert {a.table for a in monitoring_alerts(hub) if a.closed_at is None} == set()
    hub.execute(StartGame(table="pool-01", actor="jana"))  # someone plays at 03:00: someone is there
    assert post(api, [alert("LavosNodeSilent", "pool-04", at=SHUT)])["opened"] == 1


def test_a_table_the_venue_does_not_know_is_named_in_the_text(api: starlette.testclient.TestClient, hub: Hub) -> None:
    post(api, [alert("LavosNodeSilent", "pool-99")])
    (a,) = monitoring_alerts(hub)
    assert (a.table, a.message, a.message_en) == (None, "pool-99: modul pri stole je odpojený", "pool-99: the table's module is offline")
