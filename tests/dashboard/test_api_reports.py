"""Reports (venue-local days and hours) on SQLite and PostgreSQL, plus alerts and foosball check-ins."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from broker.domain.floor import alert_kinds
from broker.storage.events import insert_event_once
from broker.storage.members import add_member, record_fee
from broker.storage.models import AuditEntry
from tests.dashboard.conftest import START
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


def _paid_member(api: Any, name: str = "Zadražil Miro", year: int | None = 2026) -> int:
    def _write(db: Any) -> int:
        m = add_member(db, name, actor="test")
        if year:
            record_fee(db, m.id, year, actor="test")
        return m.id

    result: int = on_writer(api.service, _write)
    return result


def _play_two_days(api: Any) -> None:
    member = _paid_member(api)
    a = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    b = api.ok("POST", "/api/sessions", 201, json={"table": "pool-05", "member_id": member})["id"]
    api.clock.advance(minutes=30)
    api.ok("POST", f"/api/sessions/{b}/transfer", json={"table": "pool-02"})  # no club-card rate there
    api.clock.advance(minutes=30)
    api.ok("POST", f"/api/sessions/{b}/extras", json={"extra": "topping"})
    api.ok("POST", f"/api/sessions/{b}/stop")
    _pay(api, b, 560)  # 2,00 + 3,00 of table time, the topping
    api.clock.advance(minutes=30)
    api.ok("POST", f"/api/sessions/{a}/stop")
    _pay(api, a, 400)  # a part of its 9,00: the rest stays owed (not revenue)
    api.clock.advance(hours=22, minutes=30)  # the next day, 18:00 local
    c = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    api.clock.advance(minutes=30)
    api.ok("POST", f"/api/sessions/{c}/stop")
    _pay(api, c, 300)


def _pay(api: Any, game: int, cents: int) -> None:
    tab = api.ok("GET", f"/api/sessions/{game}/tab")["id"]
    api.ok("POST", f"/api/tabs/{tab}/payments", 201, json={"method": "card", "amount_cents": cents})


def test_revenue_is_what_was_paid_by_day_table_and_category_and_table_time_what_the_games_billed(api: Api) -> None:
    _play_two_days(api)
    r = api.ok("GET", "/api/reports/revenue?from=2026-11-10&to=2026-11-12", as_manager=True)
    assert r["definition"] == "Revenue (incl. VAT, paid)" and r["total_cents"] == 560 + 400 + 300 and r["payments"] == 3
    assert r["by_day"] == {"2026-11-10": 960, "2026-11-11": 300, "2026-11-12": 0}
    assert r["by_table"] == {"pool-01": 700, "pool-02": 560}  # the game's tab: its table (it followed the move)
    assert sum(r["by_category"].values()) == r["total_cents"] and r["by_category"]["pizza_toppings"] == 60
    assert "partial_payment" not in r["by_category"]  # the 4,00 € part payment: table time
    assert r["table_time"] == {"games": 3, "total_cents": 900 + 500 + 300, "by_tariff": {"standard": 1500, "club_card": 200}}
    one_day = api.ok("GET", "/api/reports/revenue?from=2026-11-11", as_manager=True)
    assert (one_day["total_cents"], one_day["by_day"]) == (300, {"2026-11-11": 300})
    assert one_day["total_cents"] == api.ok("GET", "/api/days/2026-11-11", as_manager=True)["total_cents"]  # the Z report's
    assert "before it starts" in api.refused("GET", "/api/reports/revenue?from=2026-11-12&to=2026-11-10", 400)
    assert "a year at most" in api.refused("GET", "/api/reports/revenue?from=2020-01-01&to=2026-01-01", 400)


def test_utilisation_per_local_hour(api: Api) -> None:
    _play_two_days(api)
    u = api.ok("GET", "/api/reports/utilisation?day=2026-11-10", as_manager=True)
    # The business day runs 06:00 - 06:00: its 13th hour is 18:00 (the calendar day's 19th was before).
    assert len(u["hours"]) == 24 and u["hours"][0] == "2026-11-10T06:00:00+01:00" and u["hours"][12] == "2026-11-10T18:00:00+01:00"
    assert u["tables"]["pool-01"][12:14] == [60.0, 30.0] and u["totals"]["pool-01"] == 90.0
    assert (u["tables"]["pool-05"][12], u["tables"]["pool-02"][12]) == (30.0, 30.0)
    assert sum(u["totals"].values()) == 150.0
    # DST ends in the night of 24 to 25 October: that night belongs to the business day of the 24th.
    assert len(api.ok("GET", "/api/reports/utilisation?day=2026-10-24", as_manager=True)["hours"]) == 25
    assert len(api.ok("GET", "/api/reports/utilisation?day=2026-10-25", as_manager=True)["hours"]) == 24


def test_drops_per_table_hour_by_the_central_clock(api: Api) -> None:
    boot = uuid.uuid4().hex

    def _write(db: Any) -> None:
        for seq, (table, minutes) in enumerate([("pool-01", 5), ("pool-01", 6), ("pool-01", 7), ("pool-02", 70)], start=1):
            insert_event_once(
                db,
                table_id=table,
                boot=boot,
                seq=seq,
                type="pocket",
                node_ts=START,
                ts_synced=False,
                data={"pocket": 0, "pulse_ms": 30.0},
                received_at=START + timedelta(minutes=minutes),
            )

    on_writer(api.service, _write)
    d = api.ok("GET", "/api/reports/drops?day=2026-11-10", as_manager=True)
    assert (d["tables"]["pool-01"][12], d["tables"]["pool-02"][13], d["totals"]["pool-01"]) == (3, 1, 3)  # 18:00, 19:00
    assert "carom-01" not in d["tables"]  # no pockets
    assert api.ok("GET", "/api/reports/drops?day=2026-11-09", as_manager=True)["totals"]["pool-01"] == 0


def test_foosball_check_in_by_staff_and_use_per_member(api: Api) -> None:
    member = _paid_member(api)
    unpaid = _paid_member(api, "Axamit Miloš", year=None)

    def _write(db: Any) -> None:
        api.service.alerts.raise_alert(db, alert_kinds.foosball_no_member("foos-01"))

    on_writer(api.service, _write)
    c = api.ok("POST", "/api/foosball/foos-01/checkin", 201, json={"member_id": member})
    assert (c["member"], c["by"], c["goals"]) == ("Zadražil Miro", "staff", 0)
    assert not [a for a in api.ok("GET", "/api/alerts") if a["kind"] == "foosball_no_member"]  # the check-in settles it
    assert "not paid the 2026 fee" in api.refused("POST", "/api/foosball/foos-01/checkin", 409, json={"member_id": unpaid})
    assert "There is no foosball table pool-01" in api.refused("POST", "/api/foosball/pool-01/checkin", 404, json={"member_id": member})
    assert "no member" in api.refused("POST", "/api/foosball/foos-01/checkin", 404, json={"member_id": 999})
    tables = {t["table"]: t["checkins"] for t in api.ok("GET", "/api/foosball")}
    assert [x["member"] for x in tables["foos-01"]] == ["Zadražil Miro"] and tables["foos-02"] == []
    api.clock.advance(minutes=16)  # past the check-in window
    assert {t["table"]: t["checkins"] for t in api.ok("GET", "/api/foosball")}["foos-01"] == []
    use = api.ok("GET", "/api/reports/foosball?from=2026-11-10", as_manager=True)
    assert [(u["member"], u["checkins"], u["tables"]) for u in use] == [("Zadražil Miro", 1, ["foos-01"])]
    with api.service.store.reader() as db:
        assert db.scalars(select(AuditEntry.actor).where(AuditEntry.action == "foosball.checkin")).all() == ["jana"]


def test_alerts_are_listed_and_acknowledged(api: Api) -> None:
    def _write(db: Any) -> None:
        api.service.alerts.raise_alert(db, alert_kinds.node_offline("pool-03"))
        api.service.alerts.raise_alert(db, alert_kinds.idle_session("pool-04", 20))

    on_writer(api.service, _write)
    alerts = api.ok("GET", "/api/alerts")
    assert {a["kind"] for a in alerts} == {"node_offline", "idle_session"}
    first = next(a for a in alerts if a["kind"] == "node_offline")
    acked = api.ok("POST", f"/api/alerts/{first['id']}/ack")
    assert acked["acked_by"] == "jana" and acked["closed_at"] is None
    api.ok("POST", f"/api/alerts/{first['id']}/ack", json={"close": True})
    assert [a["kind"] for a in api.ok("GET", "/api/alerts")] == ["idle_session"]
    assert [a["kind"] for a in api.ok("GET", "/api/alerts?table=pool-03&open=false", as_manager=True)] == ["node_offline"]
    assert api.refused("GET", "/api/alerts?open=false", 403, as_manager=False)  # closed alerts are the manager's history
    assert "no alert 4242" in api.refused("POST", "/api/alerts/4242/ack", 404)
