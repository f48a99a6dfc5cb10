"""Sessions through the API on SQLite and PostgreSQL: every operation, its bill, its audit trail, its refusals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from broker.hall.read_models import HallReads
from broker.storage.members import add_member, record_fee
from broker.storage.models import GameOp
from tests.support.hub import on_writer

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


def _member(api: Any, name: str = "Zadražil Miro", paid: bool = True) -> int:
    def _write(db: Any) -> int:
        m = add_member(db, name, actor="test")
        if paid:
            record_fee(db, m.id, 2026, actor="test")
        return m.id

    result: int = on_writer(api.service, _write)
    return result


def test_standard_session_bills_90_minutes_as_9_eur(api: Api) -> None:
    s = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})
    assert (s["table"], s["state"], s["tariff"], s["amount_cents"]) == ("pool-01", "running", "standard", 0)
    api.clock.advance(minutes=90)
    running = api.ok("GET", f"/api/sessions/{s['id']}")
    assert running["amount_cents"] == 900 and running["bill"]["total"] == "9,00 €"
    table = api.ok("GET", "/api/tables/pool-01")
    assert table["session"]["id"] == s["id"] and table["session"]["amount_cents"] == 900
    done = api.ok("POST", f"/api/sessions/{s['id']}/stop")
    bill = done["bill"]
    assert done["state"] == "stopped"
    assert [(line["kind"], line["amount_cents"], line["tariff"]) for line in bill["lines"]] == [("time", 900, "standard")]
    assert (bill["total_cents"], bill["vat_percent"], bill["vat_cents"], bill["net_cents"]) == (900, 23, 168, 732)
    assert api.ok("GET", "/api/tables/pool-01")["session"] is None


def test_card_after_20_minutes_splits_the_bill_into_two_lines(api: Api) -> None:
    member = _member(api)
    s = api.ok("POST", "/api/sessions", 201, json={"table": "pool-05"})
    api.clock.advance(minutes=20)
    with_card = api.ok("POST", f"/api/sessions/{s['id']}/card", json={"member_id": member})
    assert with_card["member"]["name"] == "Zadražil Miro" and with_card["tariff"] == "club_card"
    api.clock.advance(minutes=40)
    bill = api.ok("POST", f"/api/sessions/{s['id']}/stop")["bill"]
    assert [(line["tariff"], line["amount_cents"]) for line in bill["lines"]] == [("standard", 200), ("club_card", 267)]
    assert bill["total_cents"] == 467


def test_every_operation_is_applied_billed_and_audited_with_the_user(api: Api) -> None:
    member = _member(api)
    s = api.ok("POST", "/api/sessions", 201, json={"table": "pool-05", "member_id": member, "prepaid_minutes": 60})
    sid = s["id"]
    assert (s["tariff"], s["prepaid_left_s"]) == ("club_card", 3600)
    api.clock.advance(minutes=15)
    assert api.ok("POST", f"/api/sessions/{sid}/pause")["state"] == "paused"
    api.clock.advance(minutes=30)  # paused: not billed, prepaid time not used
    resumed = api.ok("POST", f"/api/sessions/{sid}/resume")
    assert (resumed["state"], resumed["prepaid_left_s"]) == ("running", 45 * 60)
    assert api.ok("POST", f"/api/sessions/{sid}/extend", json={"minutes": 30})["prepaid_left_s"] == 75 * 60
    tab = api.ok("POST", f"/api/sessions/{sid}/extras", json={"extra": "topping", "quantity": 3})
    assert [(e["extra"], e["quantity"], e["unit_cents"], e["by"]) for e in tab["extras"]] == [("topping", 3, 60, "jana")]
    moved = api.ok("POST", f"/api/sessions/{sid}/transfer", json={"table": "pool-02"})
    assert moved["table"] == "pool-02" and api.ok("GET", "/api/tables/pool-05")["session"] is None
    api.clock.advance(minutes=15)
    api.ok("POST", f"/api/sessions/{sid}/card", json={})  # card off
    api.ok("POST", f"/api/sessions/{sid}/correction", as_manager=True, json={"amount_cents": -100, "reason": "stôl sa kýval"})
    bill = api.ok("POST", f"/api/sessions/{sid}/stop")["bill"]
    # 15 min club card on pool-05 (1.00), 15 min on pool-02 (no club-card rate: 1.50), -1.00; the toppings are on the tab
    assert [(line["kind"], line["reason"], line["amount_cents"]) for line in bill["lines"]] == [
        ("time", "club_card", 100),
        ("time", "card_table_not_eligible", 150),
        ("correction", "manual", -100),
    ]
    assert bill["total_cents"] == 150
    assert HallReads(api.service).till.tab(HallReads(api.service).till.game_tab(sid)).total_cents == 150 + 180
    with api.service.store.reader() as db:
        ops = db.scalars(select(GameOp).where(GameOp.session_id == sid).order_by(GameOp.seq)).all()
        assert [o.kind for o in ops] == ["start", "pause", "resume", "extend", "transfer", "card_removed", "correction", "stop"]
        assert {o.actor for o in ops} == {"jana", "boss"} and ops[-2].actor == "boss" and ops[-2].reason == "stôl sa kýval"


def test_lists_open_and_stopped_sessions_by_local_day(api: Api) -> None:
    a = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    b = api.ok("POST", "/api/sessions", 201, json={"table": "pool-02"})["id"]
    api.clock.advance(minutes=10)
    api.ok("POST", f"/api/sessions/{a}/stop")
    assert [s["id"] for s in api.ok("GET", "/api/sessions?open=true")] == [b]
    # Closed sessions carry their totals (the revenue): the manager's, as on the pages (issue 9).
    assert [s["id"] for s in api.ok("GET", "/api/sessions?open=false", as_manager=True)] == [a]
    assert {s["id"] for s in api.ok("GET", "/api/sessions?day=2026-11-10", as_manager=True)} == {a, b}
    assert api.ok("GET", "/api/sessions?day=2026-11-09", as_manager=True) == []
    assert "manager" in api.refused("GET", "/api/sessions?open=false", 403, as_manager=False)


def test_refusals_say_what_was_wrong(api: Api) -> None:
    sid = api.ok("POST", "/api/sessions", 201, json={"table": "pool-01"})["id"]
    assert "Pool 1 already has game no." in api.refused("POST", "/api/sessions", 409, json={"table": "pool-01"})
    assert "There is no table pool-99" in api.refused("POST", "/api/sessions", 404, json={"table": "pool-99"})
    assert "Foosball 1 is not billed by time" in api.refused("POST", "/api/sessions", 409, json={"table": "foos-01"})
    assert "Unknown card 0badcafe" in api.refused("POST", "/api/sessions", 409, json={"table": "pool-02", "card_uid": "0badcafe"})
    assert "There is no member no. 4242" in api.refused("POST", "/api/sessions", 404, json={"table": "pool-02", "member_id": 4242})
    assert "no tariff" in api.refused("POST", "/api/sessions", 409, json={"table": "pool-02", "tariff": "happy-hour"})
    assert "There is no extra beer" in api.refused("POST", f"/api/sessions/{sid}/extras", 409, json={"extra": "beer"})
    assert "already on Pool 1" in api.refused("POST", f"/api/sessions/{sid}/transfer", 409, json={"table": "pool-01"})
    assert "not paused" in api.refused("POST", f"/api/sessions/{sid}/resume", 409)
    assert "no prepaid time" in api.refused("POST", f"/api/sessions/{sid}/extend", 409, json={"minutes": 5})
    assert "There is no game no. 999" in api.refused("GET", "/api/sessions/999", 404)
    assert "is no longer running" in api.refused("POST", "/api/sessions/999/stop", 404)
    api.ok("POST", f"/api/sessions/{sid}/stop")
    assert "is no longer running" in api.refused("POST", f"/api/sessions/{sid}/stop", 404)
    # the refused requests left no trace in the op log
    with api.service.store.reader() as db:
        assert [o.kind for o in db.scalars(select(GameOp).where(GameOp.session_id == sid))] == ["start", "stop"]


def test_extras_and_tariffs_come_from_the_venue(api: Api) -> None:
    assert {
        "id": "topping",
        "name": "Prísada na pizzu navyše",
        "name_en": "Extra pizza topping",
        "price_cents": 60,
        "price": "0,60 €",
    } in api.ok("GET", "/api/extras")
    tariffs = api.ok("GET", "/api/tariffs")
    assert {t["id"]: t["rate_cents_per_hour"] for t in tariffs["tariffs"]} == {
        "standard": 600,
        "club_card": 400,
        "training": 1500,
        "tournament": 0,
    }
    assert [t["id"] for t in tariffs["tariffs"] if t["tournament"]] == ["tournament"]  # a tournament's only: never started by hand
    assert tariffs["tariffs"][2]["hours"] == {"open": "15:00", "close": "19:00"}
